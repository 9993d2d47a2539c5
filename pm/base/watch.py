"""What a command's inputs were read from, noted as they are read, so that a later identical command
can tell without parsing anything that none of it changed (:mod:`pm.cli.shortcut`).

A :class:`Watch` is the evidence of one command. It is passed explicitly: the CLI makes one and
hands it to the operation in its options; the transaction hands it to every reader it calls (the
inputs gathered keep it as ``Inputs.watch``), so the shortcut stores the very object the command
read through. Each reader notes what it saw: a file's bytes (:meth:`Watch.file`; of a big one it
hashed itself, their sha256: :meth:`Watch.digest`), a folder's
entries with their kinds and link targets (:meth:`Watch.folder`: every probe of a path in that
folder is covered by it), where a path really is (:meth:`Watch.real`) and a program's identity
(:meth:`Watch.stat`). Each observation is a key (``"f:/path"``) and the value seen;
:func:`unchanged` looks again at each and compares. A reader called outside a watched command
(the host's gate, tests) gets :data:`UNWATCHED`, which keeps nothing. Standard library only: the
shortcut imports this before anything else of pm.
"""

from __future__ import annotations

import os
import stat
import sys
import time

TYPE_CHECKING = False  # typing costs ~5 ms of start-up: only the type checker reads these
if TYPE_CHECKING:
    from collections.abc import Callable
    from hashlib import sha256
    from typing import Any
else:  # the builtin sha256: hashlib's OpenSSL loads ~2 ms of libcrypto, which nothing here needs
    try:
        from _sha256 import sha256  # CPython 3.11
    except ImportError:  # pragma: no cover - CPython 3.12+ names it _sha2; any other Python: hashlib
        try:
            from _sha2 import sha256
        except ImportError:
            from hashlib import sha256

#: The most of one file that is hashed; a bigger file is noted by its size (pm refuses to read
#: declarations and configs over 1 MiB, so such a file's value is "too big" either way).
MAX_HASHED = 1024 * 1024


class Watch:
    """The observations of one command, in the order made (a key is observed once)."""

    keeps = True

    def __init__(self) -> None:
        self.seen: dict[str, str | None] = {}

    def _note(self, key: str, look: Callable[[], str | None]) -> None:
        if key not in self.seen:
            self.seen[key] = look()

    def file(self, path: os.PathLike[str] | str, data: bytes | None = None) -> None:
        """``path``'s state: the sha256 of ``data`` (the bytes just read from it), else of what it
        holds now (None when it cannot be read)."""
        if self.keeps:
            self._note("f:" + os.fspath(path),
                       lambda: sha256(data).hexdigest() if data is not None else file_state(path))

    def digest(self, path: os.PathLike[str] | str, hexdigest: str) -> None:
        """``path`` holds bytes of that sha256, whatever its size (hashed by the caller: a wheel in
        a ``--find-links`` folder). Looked at again by its stat signature; hashed whole again
        (:func:`file_digest`) only once that moved."""
        if self.keeps:
            self._note("h:" + os.fspath(path), lambda: hexdigest)

    def refused(self, path: os.PathLike[str] | str) -> None:
        """``path`` was refused (unreadable, too big, not UTF-8, escaping): nothing decided over a
        refused file is answered from memory (:meth:`unwatchable`)."""
        self.unwatchable(f"refused {os.fspath(path)}")

    def folder(self, path: os.PathLike[str] | str) -> None:
        """``path``'s entries (names, kinds through links, link targets); None when not a folder."""
        if self.keeps:
            self._note("d:" + os.fspath(path), lambda: folder_state(path))

    def real(self, path: os.PathLike[str] | str) -> None:
        """Where ``path`` leads once every symlink is followed."""
        if self.keeps:
            self._note("r:" + os.fspath(path), lambda: os.path.realpath(path))

    def stat(self, path: os.PathLike[str] | str) -> None:
        """A program's identity (the file it leads to, its inode, size, mtime and mode: a program
        made executable is a change): an interpreter or uv, or a name searched for on PATH."""
        if self.keeps:
            self._note("s:" + os.fspath(path), lambda: stat_state(path))

    def import_path(self) -> None:
        """The folders of ``sys.path``, where installed metadata is found: a distribution installed,
        removed or upgraded there changes one of their listings (its ``.dist-info`` name)."""
        for entry in sys.path:
            self.folder(entry or os.curdir)

    def code(self, *modules: str) -> None:
        """The folders the code of ``modules`` (those loaded) was imported from: an upgrade renames
        its ``.dist-info`` there, and the new code may answer differently."""
        for name in modules:
            file = getattr(sys.modules.get(name), "__file__", None)
            if file:
                self.folder(os.path.dirname(os.path.dirname(file)))

    def distribution(self, dist: Any, *names: str) -> None:
        """Files of an installed distribution (``importlib.metadata``) that were read: an installer
        that rewrites them in place (``pip install -e .`` again) keeps the folder's name."""
        if not self.keeps:
            return
        folder = getattr(dist, "_path", None)
        if not isinstance(folder, str | os.PathLike):
            self.unwatchable(f"distribution {getattr(dist, 'name', '?')}")  # not files in a folder
            return
        for name in names:
            self.file(os.path.join(folder, name))

    def unwatchable(self, what: str) -> None:
        """Something was read that cannot be looked at again without running a program (``uv
        python find``): an observation that never holds, so nothing decided over it is answered
        from memory."""
        if self.keeps:
            self.seen["?:" + what] = None


class _Unwatched(Watch):
    keeps = False


#: The watch of reads that no command keeps evidence of: notes nothing.
UNWATCHED: Watch = _Unwatched()


def unchanged(seen: dict[str, str | None], stamps: dict[str, str] | None = None) -> bool:
    """Whether every observation in ``seen`` would be made the same way now. A file or folder
    whose stat signature is still the one in ``stamps`` (:func:`vouch`) is not read again; and
    where a path really is (``r:``) is looked at last, when the folders proved unchanged that way
    (which hold no symlink: :func:`vouch`) answer for the paths in them without a look."""
    stamps = stamps or {}
    linkless: set[str] = set()
    real_paths: list[tuple[str, str | None]] = []
    for key, value in seen.items():
        kind, path = key[:2], key[2:]
        if kind == "r:":
            real_paths.append((path, value))
            continue
        if key in stamps and signature(path) == stamps[key]:
            if kind == "d:":
                linkless.add(path)
            continue
        look = _LOOKS.get(kind)
        if look is None or look(path) != value:
            return False
    reals: dict[str, str] = {}
    return all(_realpath(path, reals, linkless) == value for path, value in real_paths)


def _realpath(path: str, known: dict[str, str], linkless: set[str] | frozenset[str] = frozenset()) -> str:
    """``os.path.realpath(path)``, with the folders above it resolved once per look (``known``):
    a home of 200 plugins asks for 400 paths under the same few folders. A path whose last part
    is no symlink (looked at, or in a folder of ``linkless``, whose entries are proved unchanged
    and none a symlink) is where its folder really is (resolved the same way), plus that name;
    anything else is resolved whole."""
    parent, name = os.path.split(path)
    if not os.path.isabs(path) or name in ("", ".", "..") or os.path.normpath(path) != path:
        return os.path.realpath(path)
    if parent not in linkless:
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                return os.path.realpath(path)
        except (OSError, ValueError):
            return os.path.realpath(path)
    real = known.get(parent)
    if real is None:
        real = known[parent] = _realpath(parent, known, linkless) if parent != path else os.path.realpath(parent)
    return os.path.join(real, name)


#: How long ago a file or folder must have last changed for its stat signature to vouch for its
#: contents. Timestamps move in clock ticks (a few ms): a write in the same tick as the look could
#: leave them as they were, so what changed just now is read again every time (as git's index
#: does with "racily clean" entries).
SETTLED_NS = 1_000_000_000


def vouch(seen: dict[str, str | None]) -> dict[str, str]:
    """The stat signatures (:func:`signature`) that prove, later, that an observation of ``seen``
    still holds without reading the file or listing the folder: taken only for regular files and
    for folders without symlinks (a link's target can change kind with no change to the folder),
    whose contents still are what was seen, and whose last change is older than
    :data:`SETTLED_NS`. Anything in doubt gets no signature, and is looked at in full each time."""
    stamps: dict[str, str] = {}
    now = time.time_ns()
    for key, value in seen.items():
        kind, path = key[:2], key[2:]
        if kind not in ("f:", "d:", "h:") or value is None or (kind != "d:" and len(value) != 64):
            continue
        before = _stat(path)
        if before is None or now - max(before.st_mtime_ns, before.st_ctime_ns) < SETTLED_NS:
            continue
        if (kind == "d:" and _has_links(path)) or _LOOKS[kind](path) != value:
            continue
        sig = _signature_of(before)
        if signature(path) == sig:
            stamps[key] = sig
    return stamps


def signature(path: str) -> str | None:
    """Device, inode, size, mode, modification and change times of ``path`` (links followed).
    The change time moves on every write and cannot be set back by any user call."""
    info = _stat(path)
    return None if info is None else _signature_of(info)


def _signature_of(info: os.stat_result) -> str:
    return f"{info.st_dev}:{info.st_ino}:{info.st_size}:{info.st_mode:o}:{info.st_mtime_ns}:{info.st_ctime_ns}"


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except (OSError, ValueError):
        return None


def _has_links(path: str) -> bool:
    try:
        with os.scandir(path) as entries:
            return any(entry.is_symlink() for entry in entries)
    except OSError:
        return True


def file_state(path: os.PathLike[str] | str) -> str | None:
    """The sha256 of a file of at most :data:`MAX_HASHED` bytes ("too-big" for a bigger one)."""
    def hashed(handle: Any) -> str:
        data = handle.read(MAX_HASHED + 1)
        return "too-big" if len(data) > MAX_HASHED else sha256(data).hexdigest()

    return _read_regular(path, hashed)


def file_digest(path: os.PathLike[str] | str) -> str | None:
    """The sha256 of a regular file of any size, streamed."""
    import hashlib  # OpenSSL's, for big files: a hit reaches here only when the file's signature moved

    def hashed(handle: Any) -> str:
        digest = hashlib.sha256()
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
        return digest.hexdigest()

    return _read_regular(path, hashed)


#: How pm opens a file it reads: non-blocking (a FIFO put where a file was must not hang the open),
#: not inherited, and binary; each flag only where the OS has it (Windows has no O_NONBLOCK, and
#: opens in text mode without O_BINARY).
READ_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
              | getattr(os, "O_BINARY", 0))


def _read_regular(path: os.PathLike[str] | str, read: Callable[[Any], str]) -> str | None:
    """``read(handle)`` of the regular file at ``path``; "not-a-file" for anything else, None when
    it cannot be read. Opened non-blocking: a FIFO put where a file was must not hold the command."""
    try:
        fd = os.open(path, READ_FLAGS)
    except (OSError, ValueError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return "not-a-file"
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return read(handle)
    except OSError:
        return None
    finally:
        os.close(fd)


def folder_state(path: os.PathLike[str] | str) -> str | None:
    try:
        entries = sorted(os.scandir(path), key=lambda e: e.name)
    except OSError:
        return None
    digest = sha256()
    for entry in entries:
        digest.update(f"{entry.name}\0{_kind(entry)}\0{_target(entry)}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def stat_state(path: os.PathLike[str] | str) -> str | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return f"{os.path.realpath(path)}:{info.st_ino}:{info.st_size}:{info.st_mtime_ns}:{info.st_mode:o}"


def _kind(entry: os.DirEntry[str]) -> str:
    try:
        return "d" if entry.is_dir() else "f" if entry.is_file() else "o"
    except OSError:
        return "?"


def _target(entry: os.DirEntry[str]) -> str:
    if not entry.is_symlink():
        return ""
    try:
        return os.readlink(entry.path)
    except OSError:
        return "?"


_LOOKS: dict[str, Callable[[str], str | None]] = {
    "f:": file_state, "h:": file_digest, "d:": folder_state, "r:": os.path.realpath, "s:": stat_state}
