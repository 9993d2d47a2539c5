"""Leases: a process that activates a generation holds a lease on it, so ``gc`` never removes an
environment a running host is using. A lease is ``<home>/pm/leases/<pid>.json``; it lapses when
that process is gone."""

from __future__ import annotations

import json
import os
from pathlib import Path

from .store import Store


def take(home: Path, generation_id: str, store: Store, pid: int | None = None) -> Path:
    pid = os.getpid() if pid is None else pid
    return store.write_json(home / "pm" / "leases" / f"{pid}.json", {"pid": pid, "generation": generation_id})


def live(home: Path) -> dict[int, str]:
    """pid -> generation id for leases whose process is still alive."""
    found: dict[int, str] = {}
    for path in (home / "pm" / "leases").glob("*.json"):
        try:
            data = json.loads(path.read_text())
            pid = int(data["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if _alive(pid):
            found[pid] = str(data.get("generation"))
    return found


def prune(home: Path, store: Store) -> None:
    alive = live(home)
    for path in (home / "pm" / "leases").glob("*.json"):
        if path.stem.isdigit() and int(path.stem) not in alive:
            store.unlink(path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
