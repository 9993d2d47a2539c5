"""Leases: a process that activates a generation holds a lease on it, so ``gc`` never removes an
environment a running host is using.

A lease is ``<home>/pm/leases/<pid>.json`` (pid, generation id, and the process's start time
where the system tells it, so a recycled pid does not keep an old lease alive). It lapses when
that process is gone; ``prune`` removes lapsed leases.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pm.base.store import Store


def folder(home: Path) -> Path:
    return home / "pm" / "leases"


def take(home: Path, generation_id: str, store: Store, pid: int | None = None) -> Path:
    """Record that process ``pid`` (default: this one) uses ``generation_id``; returns the lease."""
    pid = os.getpid() if pid is None else pid
    data = {"pid": pid, "generation": generation_id, "started": _start_time(pid)}
    return store.write_json(folder(home) / f"{pid}.json", data)


def release(home: Path, store: Store, pid: int | None = None) -> None:
    store.unlink(folder(home) / f"{os.getpid() if pid is None else pid}.json")


def live(home: Path) -> dict[int, str]:
    """pid -> generation id for leases whose process is still alive (and is the same process)."""
    found: dict[int, str] = {}
    try:
        paths = list(folder(home).glob("*.json"))
    except OSError:
        return found
    for path in paths:
        try:
            data = json.loads(path.read_text())
            pid = int(data["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if _alive(pid) and data.get("started") in (None, _start_time(pid)):
            found[pid] = str(data.get("generation"))
    return found


def prune(home: Path, store: Store) -> list[int]:
    """Remove leases whose process is gone (or unreadable leases); returns their pids."""
    alive = live(home)
    removed = []
    for path in folder(home).glob("*.json"):
        if not path.stem.isdigit() or int(path.stem) not in alive:
            store.unlink(path)
            if path.stem.isdigit():
                removed.append(int(path.stem))
    return sorted(removed)


def running(pid: int, started: str | None) -> bool:
    """Whether process ``pid`` is alive and is the process that started at ``started`` (what
    :func:`start_time` said of it then; None: any process of that pid)."""
    return _alive(pid) and started in (None, _start_time(pid))


def start_time(pid: int) -> str | None:
    """The start time of process ``pid`` where the system tells it (Linux), else None."""
    return _start_time(pid)


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (Linux ``/proc``), else None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else None
