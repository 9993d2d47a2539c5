"""One lock per home around every change: ``<home>/pm/lock``, an ``flock`` held for the operation.

A second pm process waits (and says so once), or gives up after ``timeout`` seconds. The kernel
releases the lock when a holder dies, even by SIGKILL, so a crash never leaves the home locked.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import PmError
from .store import Store


class LockTimeout(PmError):
    def __init__(self, path: Path, timeout: float, holder: str) -> None:
        self.path = path
        self.timeout = timeout
        super().__init__(f"{path}: another pm process ({holder}) still holds the home lock after "
                         f"{timeout:g}s; try again later or raise --lock-timeout")


@contextmanager
def home_lock(home: Path, store: Store, *, timeout: float = 600.0,
              notify: Callable[[str], None] = lambda _: None) -> Iterator[None]:
    path = home / "pm" / "lock"
    store.mkdir(path.parent)
    store.check(path)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        told = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                holder = _holder(fd)
                if time.monotonic() >= deadline:
                    raise LockTimeout(path, timeout, holder) from None
                if not told:
                    notify(f"waiting for another pm process ({holder}) to finish with {home}")
                    told = True
                time.sleep(0.05)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}".encode(), 0)
        yield
    finally:
        os.close(fd)


def _holder(fd: int) -> str:
    try:
        return os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown pid"
    except OSError:
        return "unknown pid"
