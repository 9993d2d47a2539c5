"""One lock per home around every change: ``<home>/pm/lock``, an exclusive file lock held for the
operation (``flock`` on POSIX, ``msvcrt.locking`` on Windows: :mod:`pm.base.filelock`).

A second pm process waits (and says so once, naming the holder), or gives up after ``timeout``
seconds. The kernel releases the lock when a holder dies, even by SIGKILL, so a crash never leaves
the home locked. The file holds the holder's pid and command, for people; the lock decides.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from pm.base import filelock
from pm.base.errors import PmError, UsageError, quote
from pm.base.store import Store, StoreError

LOCK_FILE = "lock"


class LockTimeout(PmError):
    """Another pm process held the home lock for longer than the caller would wait."""

    kind = "lock-timeout"

    def __init__(self, path: Path, timeout: float, holder: str) -> None:
        self.path = path
        self.timeout = timeout
        self.holder = holder
        super().__init__(f"{path}: another pm process ({holder}) still holds the home lock after "
                         f"{timeout:g}s; try again later or raise --lock-timeout")


def lock_path(home: Path) -> Path:
    return home / "pm" / LOCK_FILE


#: Seconds a pm process waits for another one holding the home lock (``--lock-timeout``).
LOCK_TIMEOUT = 600.0


def seconds(value: object, *, positive: bool = False) -> float | None:
    """``value`` as a number of seconds to wait, or None when it is not one: the one rule for a
    timeout from config, flags or the environment (finite, 0 or more — more than 0 when
    ``positive``; ``nan`` used to wait forever, a bool is not a number)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        return None
    return None if positive and value == 0 else float(value)


def env_seconds(variable: str, default: float) -> float:
    """``$variable`` as a positive number of seconds (:func:`seconds`), else ``default``."""
    try:
        value = float(os.environ.get(variable, ""))
    except ValueError:
        return default
    checked = seconds(value, positive=True)
    return default if checked is None else checked


def checked_timeout(value: object, key: str = "--lock-timeout") -> float:
    """``value`` as seconds to wait for the lock (:func:`seconds`); UsageError naming ``key`` when
    it is not one."""
    checked = seconds(value)
    if checked is None:
        raise UsageError(f"{key}: {quote(value)} is not a number of seconds (a finite number, 0 or more)")
    return checked


#: The locks this thread holds: taking one again (the host's save_config inside an operation) is a
#: no-op instead of a wait on itself.
_HELD = threading.local()


@contextmanager
def home_lock(home: Path, store: Store, *, timeout: float = LOCK_TIMEOUT,
              notify: Callable[[str], None] = lambda _: None) -> Iterator[None]:
    """Hold ``<home>/pm/lock`` for the body. Raises LockTimeout after ``timeout`` seconds of
    waiting, StoreError when the lock cannot be created or opened (an unwritable home). A thread
    that already holds it holds it again at no cost."""
    timeout = checked_timeout(timeout)
    path = lock_path(home)
    held: set[Path] | None = getattr(_HELD, "paths", None)
    if held is None:
        held = _HELD.paths = set()
    if path in held:
        yield
        return
    store.mkdir(path.parent)
    store.check(path)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise StoreError(path, f"cannot open the home lock: {exc.strerror or exc}") from exc
    try:
        _acquire(fd, path, home, timeout, notify)
        held.add(path)
        os.ftruncate(fd, 0)
        filelock.write_start(fd, _identity().encode())
        for folder in (path.parent, path.parent / "receipts"):  # .state.json / .latest.json leftovers
            store.sweep(folder)
        yield
    finally:
        held.discard(path)
        os.close(fd)


def _acquire(fd: int, path: Path, home: Path, timeout: float, notify: Callable[[str], None]) -> None:
    deadline = time.monotonic() + timeout
    told = False
    while True:
        if filelock.try_lock(fd):
            return
        holder = _holder(fd)
        if time.monotonic() >= deadline:
            raise LockTimeout(path, timeout, holder)
        if not told:
            notify(f"waiting for another pm process ({holder}) to finish with {home} (lock {path})")
            told = True
        time.sleep(0.05)


def _identity() -> str:
    """``pid 1234: python -m pm sync`` (one line, bounded): who holds the lock, for people."""
    argv = sys.argv or [""]
    program = os.path.basename(argv[0])
    if program == "__main__.py":
        program = f"python -m {os.path.basename(os.path.dirname(argv[0]))}"
    words = [program, *(a for a in argv[1:3] if not a.startswith("-"))]
    return f"pid {os.getpid()}: {' '.join(words)}"[:200]


def _holder(fd: int) -> str:
    try:
        return filelock.read_start(fd, 200).decode(errors="replace").strip() or "unknown pid"
    except OSError:
        return "unknown pid"
