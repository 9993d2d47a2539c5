"""An exclusive lock on an open file, on every OS: the one place pm and the host lock a file.

- POSIX: ``fcntl.flock`` on the whole file.
- Windows: ``msvcrt.locking`` on one byte at :data:`LOCK_BYTE` (1 GiB, past anything a lock file
  holds: Windows locks are mandatory, and a lock on byte 0 would stop another process reading
  the holder's pid there; SQLite locks the same byte for the same reason). ``msvcrt`` has no
  waiting lock without a 10 s limit, so a wait is a loop of non-blocking tries.

Either way the kernel drops the lock when its holder dies, even by SIGKILL. :data:`LOCKS` is this
OS's implementation; :class:`WindowsLocks` takes its OS calls as arguments, so that its logic runs
(with a fake ``locking``) on a machine without ``msvcrt``. :func:`write_start` and
:func:`read_start` write and read a lock file's first bytes (``os.pwrite``/``os.pread`` where the
OS has them).
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

__all__ = ["LOCKS", "LOCK_BYTE", "Locks", "PosixLocks", "WindowsLocks", "lock", "read_start", "try_lock",
           "unlock", "write_start"]

#: The byte a Windows lock covers.
LOCK_BYTE = 0x40000000
#: ``msvcrt``'s modes (its values; the module exists on Windows only).
LK_UNLCK, LK_NBLCK = 0, 2
#: Seconds between two tries of a waiting Windows lock.
RETRY = 0.05
#: What ``msvcrt.locking`` raises when another handle holds the byte.
_HELD = {errno.EACCES, getattr(errno, "EDEADLOCK", errno.EDEADLK)}


class Locks(Protocol):
    def try_lock(self, fd: int) -> bool: ...
    def lock(self, fd: int) -> None: ...
    def unlock(self, fd: int) -> None: ...


class PosixLocks:
    """``flock`` on the whole file."""

    def try_lock(self, fd: int) -> bool:
        import fcntl

        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def lock(self, fd: int) -> None:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX)

    def unlock(self, fd: int) -> None:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_UN)


@dataclass(frozen=True)
class WindowsLocks:
    """``msvcrt.locking`` on :data:`LOCK_BYTE`; ``locking``, ``seek`` and ``sleep`` are the OS
    calls (``msvcrt.locking``, ``os.lseek``, ``time.sleep``)."""

    locking: Callable[[int, int, int], None]
    seek: Callable[[int, int, int], int] = os.lseek
    sleep: Callable[[float], None] = time.sleep

    def try_lock(self, fd: int) -> bool:
        self.seek(fd, LOCK_BYTE, os.SEEK_SET)  # msvcrt locks from the file's position
        try:
            self.locking(fd, LK_NBLCK, 1)
        except OSError as exc:
            if exc.errno in _HELD:
                return False
            raise
        return True

    def lock(self, fd: int) -> None:
        while not self.try_lock(fd):
            self.sleep(RETRY)

    def unlock(self, fd: int) -> None:
        self.seek(fd, LOCK_BYTE, os.SEEK_SET)
        self.locking(fd, LK_UNLCK, 1)


def _for_this_os() -> Locks:
    if os.name == "nt":
        import msvcrt

        return WindowsLocks(msvcrt.locking)  # type: ignore[attr-defined,unused-ignore]
    return PosixLocks()


LOCKS: Locks = _for_this_os()


def try_lock(fd: int) -> bool:
    """Take the exclusive lock on ``fd`` if no one holds it; whether it was taken."""
    return LOCKS.try_lock(fd)


def lock(fd: int) -> None:
    """Take the exclusive lock on ``fd``, waiting for it."""
    LOCKS.lock(fd)


def unlock(fd: int) -> None:
    LOCKS.unlock(fd)


def write_start(fd: int, data: bytes) -> None:
    """``data`` as the first bytes of ``fd``'s file."""
    if hasattr(os, "pwrite"):
        os.pwrite(fd, data, 0)
        return
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, data)


def read_start(fd: int, size: int) -> bytes:
    """Up to ``size`` first bytes of ``fd``'s file."""
    if hasattr(os, "pread"):
        return os.pread(fd, size, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    return os.read(fd, size)
