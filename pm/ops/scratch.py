"""Scratch folders a crash cannot leak: where ``catalog check`` clones every entry.

:func:`scratch_folder` makes ``$TMPDIR/<prefix>XXXXXXXX`` with an ``owner.json`` naming this
process (pid and, where the system tells it, its start time, so a recycled pid is not taken for
the owner) and removes it when the body ends — by an exception, SIGINT or SIGTERM too (SIGTERM is
turned into KeyboardInterrupt while the body runs, on the main thread). ``kill -9`` leaves it; so
the next :func:`scratch_folder` of the same prefix first sweeps the folders whose owner is gone.
Only this user's folders are looked at, never through a symlink; a folder of a run still alive is
kept, and one without an owner file (a run killed between making it and writing the file, or one
from before this rule) only once it is :data:`UNOWNED_AGE` seconds old.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pm.env import leases

OWNER = "owner.json"
UNOWNED_AGE = 3600.0


@contextlib.contextmanager
def scratch_folder(prefix: str) -> Iterator[Path]:
    """A fresh folder under the temporary folder, swept when a killed run left one (module doc)."""
    sweep(prefix)
    folder = Path(tempfile.mkdtemp(prefix=prefix))  # mode 0700
    try:
        (folder / OWNER).write_text(json.dumps({"pid": os.getpid(), "started": leases.start_time(os.getpid())}))
        with _terminate_interrupts():
            yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def sweep(prefix: str) -> list[Path]:
    """Remove the folders ``prefix`` names whose owner process is gone; returns them."""
    root = Path(tempfile.gettempdir())
    removed: list[Path] = []
    try:
        found = sorted(root.glob(f"{prefix}*"))
    except OSError:
        return removed
    for path in found:
        if _abandoned(path):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def _abandoned(path: Path) -> bool:
    try:
        status = path.lstat()
    except OSError:
        return False
    if path.is_symlink() or not path.is_dir() or status.st_uid != os.getuid():
        return False
    owner = _owner(path / OWNER)
    if owner is None:
        return time.time() - status.st_mtime > UNOWNED_AGE
    pid, started = owner
    return not leases.running(pid, started)


def _owner(path: Path) -> tuple[int, Any] | None:
    try:
        data = json.loads(path.read_text())
        return int(data["pid"]), data.get("started")
    except (OSError, ValueError, KeyError, TypeError):
        return None


@contextlib.contextmanager
def _terminate_interrupts() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt in the body (as SIGINT does), so ``finally`` clauses run."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
