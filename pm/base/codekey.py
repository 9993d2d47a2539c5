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
Standard library only: the shortcut loads this before anything else of pm.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

#: The folder of the package whose code is the key.
PACKAGE = Path(__file__).resolve().parents[1]
#: Under pm's cache folder: ``code-v1/<signature>`` holds the digest of the code with that signature.
FOLDER = "code-v1"
#: Signatures kept (the newest): each edit of a development checkout leaves one behind.
KEEP = 16

_known: dict[tuple[Path, Path | None], str] = {}


def digest(cache_root: Path | None = None, *, package: Path = PACKAGE) -> str:
    """The sha256 (hex) of ``package``'s files, computed once per process and, with a
    ``cache_root``, once per install."""
    memo = (package, cache_root)
    if (known := _known.get(memo)) is not None:
        return known
    files = _files(package)
    stored = None if cache_root is None else cache_root / FOLDER / _signature(package, files)
    found = _read(stored) if stored is not None else None
    if found is None:
        found = _hash(package, files)
        if stored is not None:
            _write(stored, found)
    _known[memo] = found
    return found


def _files(package: Path) -> list[str]:
    """Relative paths of every file under ``package`` but bytecode, in a fixed order."""
    found: list[str] = []
    for folder, subfolders, names in os.walk(package):
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
        relative = os.path.relpath(folder, package)
        found.extend(os.path.normpath(os.path.join(relative, name)) for name in sorted(names))
    return found


def _signature(package: Path, files: list[str]) -> str:
    stats = []
    for name in files:
        st = os.stat(package / name)
        stats.append([name, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino])
    blob = json.dumps([str(package), os.stat(package).st_dev, stats]).encode("utf-8", "surrogateescape")
    return hashlib.sha256(blob).hexdigest()


def _hash(package: Path, files: list[str]) -> str:
    sha = hashlib.sha256()
    for name in files:
        data = (package / name).read_bytes()
        sha.update(f"{name}\0{len(data)}\0".encode("utf-8", "surrogateescape"))
        sha.update(data)
    return sha.hexdigest()


def _read(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, ValueError):
        return None
    return text if len(text) == 64 and all(c in "0123456789abcdef" for c in text) else None


def _write(path: Path, value: str) -> None:
    """Keep the digest (temp file + rename: a reader sees all of it or nothing). A cache that
    cannot be written only costs the next process one reading."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temp.write_text(value, encoding="ascii")
        os.replace(temp, path)
        _prune(path.parent)
    except OSError:
        pass


def _prune(folder: Path) -> None:
    kept = sorted((entry.stat().st_mtime_ns, entry.path) for entry in os.scandir(folder) if not entry.name.startswith("."))
    for _, stale in kept[:-KEEP]:
        try:
            os.unlink(stale)
        except FileNotFoundError:  # another pm pruned it first
            pass
