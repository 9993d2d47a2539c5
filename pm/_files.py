"""Bounded, symlink-aware reading of the text files pm parses (manifests, pyprojects, configs)."""

from __future__ import annotations

import functools
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError

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


def is_within(path: Path, folder: Path) -> bool:
    """Whether ``path`` (resolved, following symlinks) lies inside ``folder`` (resolved)."""
    try:
        path.resolve().relative_to(_resolved(str(folder)))
    except (ValueError, OSError):
        return False
    return True


@functools.lru_cache(maxsize=512)
def _resolved(folder: str) -> Path:
    """A folder resolved once per process (plugin and home folders do not move while pm runs)."""
    return Path(folder).resolve()


def read_text(path: Path, *, within: Path | None = None, limit: int = MAX_TEXT_BYTES) -> TextFile:
    """Read ``path`` as UTF-8, refusing files over ``limit`` bytes or escaping ``within``.

    Raises :class:`InputError` naming the file; never returns partial text.
    """
    if within is not None and not is_within(path, within):
        raise InputError.one(path, None, f"is a symlink that escapes {within}")
    try:
        size = path.stat().st_size
        if size > limit:
            raise InputError.one(path, None, f"is {size} bytes; the limit is {limit} bytes")
        with path.open("rb") as handle:
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


def temp_beside(folder: Path, prefix: str, suffix: str = "") -> tuple[int, str]:
    """A new file in ``folder`` (mode 0600, opened for writing), like :func:`tempfile.mkstemp`
    without importing tempfile (which loads shutil, random and the compression modules: ~6 ms on
    every command that writes a receipt or a cache entry)."""
    for _ in range(100):
        name = os.path.join(folder, f"{prefix}{os.urandom(6).hex()}{suffix}")
        try:
            return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600), name
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name in {folder}")
