"""Profile deletions in progress, so that a crash in the middle is finished by the next run.

``profile delete NAME`` records its intent — ``<home>/pm/deleting/NAME.json`` — before it removes
anything; then it renames the profile out of ``profiles/`` (``.deleting-NAME-PID``), removes it and
rebuilds the environment without it. The record goes only once a generation without the profile
is selected (or none is selected at all). A run killed in between leaves the record: running
``profile delete NAME`` again finishes the removal and the rebuild, and so does the next sync —
any operation that selects a generation (:func:`finish`), since the profile is already out of the
selection. A record whose profile is still in place (killed before the rename) deletes nothing by
itself: only ``profile delete`` does that.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from pm.base.store import Store
from pm.base.watch import UNWATCHED, Watch


def folder(home: Path) -> Path:
    return home / "pm" / "deleting"


def record(home: Path, store: Store, name: str) -> None:
    """Note that profile ``name`` of ``home`` is being deleted (atomically, before anything goes)."""
    store.write_json(folder(home) / f"{name}.json", {"profile": name, "pid": os.getpid(), "started_at": time.time()})


def pending(home: Path, *, watch: Watch = UNWATCHED) -> list[str]:
    """The profiles whose deletion was begun and not finished."""
    watch.folder(folder(home))
    try:
        return sorted(p.stem for p in folder(home).glob("*.json"))
    except OSError:
        return []


def leftovers(home: Path, name: str) -> list[Path]:
    """What a killed deletion of ``name`` left in ``profiles/`` (the renamed folder)."""
    try:
        return sorted(p for p in (home / "profiles").glob(f".deleting-{name}-*") if p.is_dir() and not p.is_symlink())
    except OSError:
        return []


def sweep(home: Path, name: str) -> None:
    """Remove what a killed deletion of ``name`` left in ``profiles/``."""
    store = Store(home / "profiles")
    for path in leftovers(home, name):
        store.remove_tree(path)


def clear(home: Path, store: Store, name: str) -> None:
    """The deletion of ``name`` is done: drop its record (and the folder, once empty)."""
    store.unlink(folder(home) / f"{name}.json")
    try:
        folder(home).rmdir()
    except OSError:
        pass  # another record, or none at all


def finish(home: Path, store: Store, *, watch: Watch = UNWATCHED) -> list[str]:
    """After a generation was selected for the profiles on disk: finish every recorded deletion
    whose profile is gone (its leftovers removed, its record dropped). Returns the names of those
    an interrupted run had begun (not this process)."""
    interrupted = []
    for name in pending(home, watch=watch):
        if (home / "profiles" / name).exists():
            continue  # killed before the rename: `profile delete` will do it again
        if _pid(home, name) != os.getpid():
            interrupted.append(name)
        sweep(home, name)
        clear(home, store, name)
    return interrupted


def _pid(home: Path, name: str) -> int | None:
    try:
        return int(json.loads((folder(home) / f"{name}.json").read_text())["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
