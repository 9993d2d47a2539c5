"""Generations: immutable environments under ``<home>/pm/generations/<id>/``, one selected.

A generation is complete once its ``generation.json`` exists (written last, atomically); the
selection is ``<home>/pm/state.json`` (``selected``, ``previous``), replaced atomically. A crash
at any moment leaves the old ``state.json`` in force; an incomplete generation folder is removed
by the next run that holds the home lock.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import InvalidVersion, Version

from .store import Store

GENERATION_FILE = "generation.json"
STATE_FILE = "state.json"


@dataclass(frozen=True)
class Generation:
    id: str
    path: Path
    record: dict[str, Any]

    @property
    def fingerprint(self) -> str:
        return str(self.record["fingerprint"])

    @property
    def venv(self) -> Path:
        return self.path / "venv"

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def site_packages(self) -> Path:
        return site_packages(self.venv, self.record["target"]["markers"]["python_version"])

    def to_receipt(self, selected: bool, restart_required: bool) -> dict[str, Any]:
        return {"id": self.id, "path": str(self.path), "selected": selected,
                "restart_required": restart_required, "fingerprint": self.fingerprint,
                "python": str(self.python), "site_packages": str(self.site_packages)}


def site_packages(venv: Path, python_version: str) -> Path:
    return venv / "lib" / f"python{python_version}" / "site-packages"


def root(home: Path) -> Path:
    return home / "pm" / "generations"


def new_id(fingerprint: str) -> str:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%f")
    return f"{stamp}-{fingerprint.removeprefix('sha256:')[:10]}"


def read_state(home: Path) -> dict[str, Any]:
    try:
        data = json.loads((home / "pm" / STATE_FILE).read_text())
    except (OSError, ValueError):
        return {"selected": None, "previous": None}
    return data if isinstance(data, dict) else {"selected": None, "previous": None}


def load(home: Path, generation_id: str | None) -> Generation | None:
    """A complete generation by id, or None (missing, incomplete or unreadable)."""
    if not generation_id or "/" in generation_id or generation_id.startswith("."):
        return None
    path = root(home) / generation_id
    try:
        record = json.loads((path / GENERATION_FILE).read_text())
    except (OSError, ValueError):
        return None
    return Generation(generation_id, path, record)


def selected(home: Path) -> Generation | None:
    return load(home, read_state(home).get("selected"))


def previous(home: Path) -> Generation | None:
    return load(home, read_state(home).get("previous"))


def select(home: Path, store: Store, generation: Generation) -> dict[str, Any]:
    """Make ``generation`` the selected one, atomically; the formerly selected becomes previous."""
    state = read_state(home)
    current = state.get("selected")
    new_state = {
        "selected": generation.id,
        "previous": current if current != generation.id else state.get("previous"),
        "selected_at": datetime.now(timezone.utc).isoformat(),
    }
    store.write_json(home / "pm" / STATE_FILE, new_state)
    return new_state


def all_ids(home: Path) -> list[str]:
    folder = root(home)
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))


def remove_incomplete(home: Path, store: Store) -> list[str]:
    """Remove generation folders a crash left without ``generation.json`` (never the selected)."""
    state = read_state(home)
    removed = []
    for gid in all_ids(home):
        if gid in (state.get("selected"), state.get("previous")):
            continue
        if not (root(home) / gid / GENERATION_FILE).exists():
            store.remove_tree(root(home) / gid)
            removed.append(gid)
    return removed


def installed_versions(site: Path) -> dict[NormalizedName, Version]:
    """Installed distributions of a site-packages folder, from ``*.dist-info`` folder names.

    Cheap (one directory listing, no file reads); the folder name is what installers write from
    the distribution's metadata, so it is the installed version, whatever a module says.
    """
    found: dict[NormalizedName, Version] = {}
    try:
        entries = os.listdir(site)
    except OSError:
        return found
    for entry in entries:
        if not entry.endswith(".dist-info"):
            continue
        name, _, version = entry[: -len(".dist-info")].rpartition("-")
        try:
            found[canonicalize_name(name)] = Version(version)
        except InvalidVersion:
            continue
    return found
