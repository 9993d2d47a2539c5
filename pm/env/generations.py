"""Generations: immutable environments under ``<home>/pm/generations/<id>/``, one selected.

A generation is complete once its ``generation.json`` exists (written last, atomically); the
selection is ``<home>/pm/state.json`` (``selected``, ``previous``), replaced atomically. A crash
at any moment leaves the old ``state.json`` in force; an incomplete generation folder is removed
by the next run that holds the home lock (``sync``, ``gc``).

Everything here reads with one directory listing or one small JSON file: these functions sit on
the no-op ``sync`` path and the host's start-up check.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import InvalidVersion, Version

from pm.base.store import Store, StoreError
from pm.base.watch import UNWATCHED, Watch

if TYPE_CHECKING:
    from pm.inputs.recorded import SavedHome

GENERATION_FILE = "generation.json"
STATE_FILE = "state.json"


@dataclass(frozen=True)
class Generation:
    """One complete generation: its id, folder and the record written beside its venv."""

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

    @property
    def pins(self) -> dict[str, str]:
        """name -> version of every resolved package, as recorded at build time."""
        return {p["name"]: p["version"] for p in self.record["resolution"]["packages"]}

    @property
    def created_at(self) -> str | None:
        """When it was built (ISO 8601, UTC), as recorded."""
        value = self.record.get("created_at")
        return value if isinstance(value, str) else None

    @property
    def selection(self) -> tuple[SavedHome, ...] | None:
        """The plugin selection of every home it was built from; None when its record keeps none
        (built by a pm that did not record it)."""
        from pm.inputs.recorded import saved_selection  # off the no-op sync path

        return saved_selection(self.record)

    def problems(self, *, watch: Watch = UNWATCHED) -> list[str]:
        """What is wrong with this generation on disk now (empty when intact).

        Cheap: one ``stat`` of the interpreter and one listing of site-packages; every pin must be
        installed at its recorded version (judged from ``*.dist-info`` names, not imports).
        """
        found: list[str] = []
        watch.stat(self.python)
        if not self.python.exists():
            found.append(f"its interpreter {self.python} is missing")
        installed = installed_versions(self.site_packages, watch=watch)
        for name, version in self.pins.items():
            have = installed.get(canonicalize_name(name))
            if have is None or str(have) != version:
                found.append(f"{name}=={version} is {'missing' if have is None else f'replaced by {have}'}")
        return found

    def intact(self, *, watch: Watch = UNWATCHED) -> bool:
        return not self.problems(watch=watch)

    def to_receipt(self, selected: bool, restart_required: bool) -> dict[str, Any]:
        return {"id": self.id, "path": str(self.path), "selected": selected,
                "restart_required": restart_required, "fingerprint": self.fingerprint,
                "python": str(self.python), "site_packages": str(self.site_packages)}


def site_packages(venv: Path, python_version: str) -> Path:
    return venv / "lib" / f"python{python_version}" / "site-packages"


def root(home: Path) -> Path:
    return home / "pm" / "generations"


def building(home: Path) -> Path:
    """The folder where a new generation's venv is made and filled before it moves into its
    generation (:mod:`pm.env.started`); a dot name, so never listed as a generation."""
    return root(home) / ".building"


def new_id(fingerprint: str) -> str:
    """A fresh id: UTC time (sorts by age), a random part, and the fingerprint's head."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%f")
    return f"{stamp}-{os.urandom(3).hex()}{_id_tail(fingerprint)}"


def _id_tail(fingerprint: str) -> str:
    """How every id built for ``fingerprint`` ends."""
    return f"-{fingerprint.removeprefix('sha256:')[:10]}"


def create(home: Path, store: Store, fingerprint: str) -> tuple[str, Path]:
    """Create an empty folder for a new generation and return (id, path).

    The folder is made with an exclusive ``mkdir``: two processes (or a clock that repeats) can
    never share one, even without the home lock.
    """
    store.mkdir(root(home))
    for _ in range(20):
        gid = new_id(fingerprint)
        path = root(home) / gid
        store.check(path)
        try:
            path.mkdir()
        except FileExistsError:
            continue
        except OSError as exc:
            raise StoreError(path, f"cannot create folder: {exc.strerror or exc}") from exc
        return gid, path
    raise StoreError(root(home), "cannot find a free generation id")  # pragma: no cover


def read_state(home: Path, *, watch: Watch = UNWATCHED) -> dict[str, Any]:
    """``state.json`` (``selected``, ``previous``); an absent or unreadable file selects nothing."""
    path = home / "pm" / STATE_FILE
    try:
        raw = path.read_bytes()
        watch.file(path, raw)  # what is selected decides a no-op (pm.cli.shortcut)
        data = json.loads(raw)
    except (OSError, ValueError):
        watch.file(path)
        data = None
    if not isinstance(data, dict):
        return {"selected": None, "previous": None}
    return data


def load(home: Path, generation_id: str | None, *, watch: Watch = UNWATCHED) -> Generation | None:
    """A complete generation by id, or None (missing, incomplete or unreadable)."""
    if not isinstance(generation_id, str) or not generation_id or "/" in generation_id \
            or generation_id.startswith("."):
        return None
    path = root(home) / generation_id
    try:
        raw = (path / GENERATION_FILE).read_bytes()
        watch.file(path / GENERATION_FILE, raw)
        record = json.loads(raw)
    except (OSError, ValueError):
        watch.file(path / GENERATION_FILE)
        return None
    if not isinstance(record, dict) or "fingerprint" not in record:
        return None
    return Generation(generation_id, path, record)


def selected(home: Path, *, watch: Watch = UNWATCHED) -> Generation | None:
    return load(home, read_state(home, watch=watch).get("selected"), watch=watch)


def previous(home: Path, *, watch: Watch = UNWATCHED) -> Generation | None:
    return load(home, read_state(home, watch=watch).get("previous"), watch=watch)


def select(home: Path, store: Store, generation: Generation) -> dict[str, Any]:
    """Make ``generation`` the selected one, atomically; the formerly selected becomes previous.

    This one ``os.replace`` of ``state.json`` is the commit point of a sync: before it the old
    selection is in force, after it the new one.
    """
    state = read_state(home)
    current = state.get("selected")
    new_state = {
        "selected": generation.id,
        "previous": current if current != generation.id else state.get("previous"),
        "selected_at": datetime.now(timezone.utc).isoformat(),
    }
    store.write_json(home / "pm" / STATE_FILE, new_state)
    return new_state


@dataclass(frozen=True)
class Reuse:
    """What can serve a fingerprint without a build: the selected generation (``current``), or
    another intact one built for it; ``damaged`` says why a selected one for it cannot stay."""

    generation: Generation | None
    current: bool = False
    damaged: str | None = None


def reuse(home: Path, fingerprint: str, *, watch: Watch = UNWATCHED) -> Reuse:
    """The one rule sync and admission share for "is a build needed?"."""
    current = selected(home, watch=watch)
    damaged = None
    if current is not None and current.fingerprint == fingerprint:
        problems = current.problems(watch=watch)
        if not problems:
            return Reuse(current, current=True)
        damaged = f"generation {current.id} is damaged ({'; '.join(problems)}); building a new one"
    built = find_built(home, fingerprint, exclude=current.id if current else None, watch=watch)
    return Reuse(built, damaged=damaged)


def find_built(home: Path, fingerprint: str, *, exclude: str | None = None, watch: Watch = UNWATCHED) -> Generation | None:
    """The newest complete, intact generation built for ``fingerprint`` (other than ``exclude``).

    A sync killed between recording a generation and selecting it leaves one; so does a rollback
    away from the generation the inputs still describe. Selecting it again costs no build.
    """
    tail = _id_tail(fingerprint)
    for gid in reversed(all_ids(home, watch=watch)):  # only ids that end as this fingerprint's are read
        found = load(home, gid, watch=watch) if gid != exclude and gid.endswith(tail) else None
        if found is not None and found.fingerprint == fingerprint and found.intact(watch=watch):
            return found
    return None


def all_ids(home: Path, *, watch: Watch = UNWATCHED) -> list[str]:
    """Every generation folder (complete or not), oldest first."""
    watch.folder(root(home))
    try:
        entries = os.scandir(root(home))
    except OSError:
        return []
    with entries:
        return sorted(e.name for e in entries if e.is_dir(follow_symlinks=False) and not e.name.startswith("."))


def is_complete(home: Path, generation_id: str, *, watch: Watch = UNWATCHED) -> bool:
    watch.folder(root(home) / generation_id)  # its generation.json written or removed
    return (root(home) / generation_id / GENERATION_FILE).is_file()


def remove_incomplete(home: Path, store: Store, *, watch: Watch = UNWATCHED) -> list[str]:
    """Remove generation folders a crash left without ``generation.json``; never the selected or
    previous one. The caller holds the home lock (no build is running)."""
    state = read_state(home, watch=watch)
    removed = []
    for gid in all_ids(home, watch=watch):
        if gid in (state.get("selected"), state.get("previous")) or is_complete(home, gid, watch=watch):
            continue
        store.remove_tree(root(home) / gid)
        removed.append(gid)
    return removed


def installed_versions(site: Path, *, watch: Watch = UNWATCHED) -> dict[NormalizedName, Version]:
    """Installed distributions of a site-packages folder, from ``*.dist-info`` folder names.

    Cheap (one directory listing, no file reads); the folder name is what installers write from
    the distribution's metadata, so it is the installed version, whatever a module says.
    """
    found: dict[NormalizedName, Version] = {}
    watch.folder(site)  # a distribution installed, removed or replaced renames an entry here
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
