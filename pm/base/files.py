"""Bounded, symlink-aware reading of the text files pm parses (manifests, pyprojects, configs)."""

from __future__ import annotations

import functools
import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from pm.base.errors import InputError
from pm.base.watch import READ_FLAGS, UNWATCHED, Watch

#: Larger declaration or config files are refused unread: no plugin needs a megabyte of YAML.
MAX_TEXT_BYTES = 1024 * 1024


@dataclass(frozen=True)
class TextFile:
    """The bytes of one file as read once, with their digest and decoded text."""

    path: Path
    data: bytes
    text: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


def is_within(path: Path, folder: Path, *, watch: Watch = UNWATCHED) -> bool:
    """Whether ``path`` (resolved, following symlinks) lies inside ``folder`` (resolved)."""
    watch.real(path)
    watch.real(folder)
    try:
        Path(os.path.realpath(path)).relative_to(_resolved(str(folder)))  # realpath: a loop is not an error here
    except (ValueError, OSError):
        return False
    return True


@functools.lru_cache(maxsize=512)
def _resolved(folder: str) -> Path:
    """A folder resolved once per process (plugin and home folders do not move while pm runs)."""
    return Path(folder).resolve()


def read_text(path: Path, *, within: Path | None = None, limit: int = MAX_TEXT_BYTES,
              watch: Watch = UNWATCHED) -> TextFile:
    """Read ``path`` as UTF-8, refusing files over ``limit`` bytes or escaping ``within``.

    Raises :class:`InputError` naming the file; never returns partial text. What was read is
    noted in ``watch`` (a refusal too: no shortcut answers over a file pm refused).
    """
    try:
        source = _read_text(path, within, limit, watch)
    except InputError:
        if os.path.lexists(path):
            watch.refused(path)
        else:
            watch.file(path)  # missing: noted as such, so that creating it is a change
        raise
    watch.file(path, source.data)
    return source


def _read_text(path: Path, within: Path | None, limit: int, watch: Watch) -> TextFile:
    if within is not None and not is_within(path, within, watch=watch):
        raise InputError.one(path, None, f"is a symlink that escapes {within}")
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise InputError.one(path, None, f"is not a regular file ({_kind(info.st_mode)}); pm reads only files")
        if info.st_size > limit:
            raise InputError.one(path, None, f"is {info.st_size} bytes; the limit is {limit} bytes")
        # O_NONBLOCK: a file swapped for a FIFO after the stat above must not hang the open
        with os.fdopen(os.open(path, READ_FLAGS), "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise InputError.one(path, None, "is not a regular file; pm reads only files")
            data = handle.read(limit + 1)
    except OSError as exc:
        raise InputError.one(path, None, f"cannot be read: {exc.strerror or exc}") from exc
    if len(data) > limit:
        raise InputError.one(path, None, f"is over the limit of {limit} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError.one(
            path, None, f"is not valid UTF-8 (byte {exc.start}: {data[exc.start:exc.start + 1]!r})"
        ) from exc
    return TextFile(path, data, text)


def _kind(mode: int) -> str:
    kinds = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))
    return next((name for test, name in kinds if test(mode)), "not a regular file")
