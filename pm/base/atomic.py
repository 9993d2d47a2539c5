"""Replacing a file atomically: the one mechanism under :class:`pm.base.store.Store`, the index
cache and the shortcut's lean writes. A temporary file beside the target (mode set before it
appears), its bytes, fsync, ``os.replace``, then an fsync of the folder; a reader sees the old
bytes or the new, never half. Only :mod:`os`: the shortcut's hit loads this and little else."""

from __future__ import annotations

import os


def temp_beside(folder: str | os.PathLike[str], prefix: str, suffix: str = "") -> tuple[int, str]:
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


def replace_with(path: str | os.PathLike[str], data: bytes, *, mode: int = 0o600, durable: bool = True,
                 prefix: str | None = None) -> None:
    """Replace ``path`` (whose folder exists) with ``data``, the file ``mode`` before it appears.
    ``durable=False`` skips both fsyncs (for a file whose loss a crash makes harmless: a cache
    entry, a file of an unfinished generation). Raises OSError with nothing of ``path`` touched;
    the temporary file (``prefix``, default ``.<name>.``, ``.tmp``) never stays behind."""
    folder, name = os.path.split(os.fspath(path))
    fd, temp = temp_beside(folder or ".", f".{name}." if prefix is None else prefix, ".tmp")
    try:
        try:
            os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
    if durable:
        fsync_folder(folder or ".")


def fsync_folder(folder: str | os.PathLike[str]) -> None:
    """Make a rename in ``folder`` durable; a folder that cannot be opened or synced is left as is."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
