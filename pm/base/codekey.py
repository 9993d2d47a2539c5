"""pm's own code as a cache key: every answer pm keeps (shortcut records, reusable resolutions,
page digests, interpreter probes) is keyed on what the code that produced it *is*, not on
``pm.__version__``, which stays put while the code changes (an edited resolver must never be
answered by the old one's records).

:func:`digest` is the sha256 of every file of the installed ``pm`` package (modules, schemas, data;
not ``__pycache__``), by relative path and bytes, so two installs of the same code share one
cache. Reading ~700 kB costs about 2 ms; it is done once per install: the digest is kept in pm's
cache under the files' stat signature — path, size, mtime, ctime and inode of each file. An edit
changes ctime (which no user call can set back), a reinstall changes inodes and ctimes, so a
signature that matches is the same bytes; a signature that does not only costs one reading.
Standard library only, and the cheapest of it (no pathlib, json or hashlib: ~6 ms of start-up):
the shortcut loads this before anything else of pm.
"""

from __future__ import annotations

import os

from pm.base.watch import sha256

#: The folder of the package whose code is the key.
PACKAGE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
#: Under pm's cache folder: ``code-v1/<signature>`` holds the digest of the code with that signature.
FOLDER = "code-v1"
#: Signatures kept (the newest): each edit of a development checkout leaves one behind.
KEEP = 16

_known: dict[tuple[str, str | None], str] = {}


def digest(cache_root: os.PathLike[str] | str | None = None, *, package: os.PathLike[str] | str = PACKAGE) -> str:
    """The sha256 (hex) of ``package``'s files, computed once per process and, with a
    ``cache_root``, once per install."""
    folder, root = os.fspath(package), None if cache_root is None else os.fspath(cache_root)
    memo = (folder, root)
    if (known := _known.get(memo)) is not None:
        return known
    files = _files(folder)
    stored = None if root is None else os.path.join(root, FOLDER, _signature(folder, files))
    found = _read(stored) if stored is not None else None
    if found is None:
        found = _hash(folder, files)
        if stored is not None:
            _write(stored, found)
    _known[memo] = found
    return found


def _files(package: str) -> list[str]:
    """Relative paths of every file under ``package`` but bytecode, in a fixed order."""
    found: list[str] = []
    for folder, subfolders, names in os.walk(package):
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
        relative = os.path.relpath(folder, package)
        found.extend(os.path.normpath(os.path.join(relative, name)) for name in sorted(names))
    return found


def _signature(package: str, files: list[str]) -> str:
    stats = []
    for name in files:
        st = os.stat(os.path.join(package, name))
        stats.append((name, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
    blob = repr((package, os.stat(package).st_dev, stats))  # str, int and tuples: repr is exact
    return sha256(blob.encode("utf-8", "surrogateescape")).hexdigest()


def _hash(package: str, files: list[str]) -> str:
    sha = sha256()
    for name in files:
        with open(os.path.join(package, name), "rb") as handle:
            data = handle.read()
        sha.update(f"{name}\0{len(data)}\0".encode("utf-8", "surrogateescape"))
        sha.update(data)
    return sha.hexdigest()


def _read(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:  # bytes: a text file would load the ascii codec's module
            text = handle.read().decode("ascii").strip()
    except (OSError, ValueError):
        return None
    return text if len(text) == 64 and all(c in "0123456789abcdef" for c in text) else None


def _write(path: str, value: str) -> None:
    """Keep the digest (temp file + rename: a reader sees all of it or nothing). A cache that
    cannot be written only costs the next process one reading."""
    try:
        folder = os.path.dirname(path)
        os.makedirs(folder, exist_ok=True)
        temp = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}.tmp")
        with open(temp, "wb") as handle:
            handle.write(value.encode("ascii"))
        os.replace(temp, path)
        _prune(folder)
    except OSError:
        pass


def _prune(folder: str) -> None:
    kept = sorted((entry.stat().st_mtime_ns, entry.path) for entry in os.scandir(folder) if not entry.name.startswith("."))
    for _, stale in kept[:-KEEP]:
        try:
            os.unlink(stale)
        except FileNotFoundError:  # another pm pruned it first
            pass
