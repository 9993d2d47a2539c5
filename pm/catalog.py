"""The catalog: reviewed, pinned plugins that ``hermes plugins install NAME`` and ``hermes update``
may install. Entries: ``{name, kind, source: {git, commit} | {archive, sha256}, subdir,
description, requires_hermes}``; ``removed`` lists names that are blocked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import _yaml
from ._files import read_text
from .errors import InputError, PmError, Problem

SHIPPED = Path(__file__).parent / "data" / "catalog.yaml"
_HEX40 = re.compile(r"^[0-9a-f]{40}$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_ENTRY_KEYS = {"name", "kind", "source", "subdir", "description", "requires_hermes"}


class CatalogRefusal(PmError):
    """A catalog install that is not allowed (removed, unknown, pin mismatch)."""


@dataclass(frozen=True)
class Entry:
    name: str
    kind: str
    git: str | None
    commit: str | None
    archive: str | None
    sha256: str | None
    subdir: str
    description: str
    requires_hermes: str | None

    @property
    def pin(self) -> str:
        return f"commit {self.commit}" if self.git else f"sha256 {self.sha256}"


@dataclass(frozen=True)
class Catalog:
    file: Path
    entries: tuple[Entry, ...]
    removed: tuple[str, ...]

    def find(self, name: str) -> Entry | None:
        if name in self.removed:
            raise CatalogRefusal(f"{self.file}: plugin {name!r} was removed from the catalog and cannot be installed")
        return next((e for e in self.entries if e.name == name), None)


def load_catalog(path: Path | None = None) -> Catalog:
    """Read and validate a catalog (every problem reported at once, each naming its key)."""
    path = path or SHIPPED
    source = read_text(path)
    try:
        data = _yaml.load(source.text) or {}
    except _yaml.Error as exc:
        raise InputError.one(path, None, f"is not valid YAML: {_yaml.describe(exc)}") from exc
    if not isinstance(data, dict):
        raise InputError.one(path, None, "must be a mapping with 'entries' and 'removed'")
    problems: list[Problem] = []
    entries = [_entry(path, i, raw, problems) for i, raw in enumerate(data.get("entries") or [])]
    removed = data.get("removed") or []
    if not isinstance(removed, list) or not all(isinstance(r, str) for r in removed):
        problems.append(Problem(path, "removed", f"must be a list of names, got {removed!r}"))
        removed = []
    if problems:
        raise InputError(problems)
    return Catalog(path, tuple(e for e in entries if e is not None), tuple(removed))


def _entry(path: Path, i: int, raw: Any, problems: list[Problem]) -> Entry | None:
    key = f"entries[{i}]"
    if not isinstance(raw, dict):
        problems.append(Problem(path, key, f"must be a mapping, got {raw!r}"))
        return None
    unknown = sorted(set(raw) - _ENTRY_KEYS)
    if unknown:
        problems.append(Problem(path, key, f"unknown key(s) {', '.join(map(repr, unknown))}"))
    name, source = raw.get("name"), raw.get("source")
    if not isinstance(name, str) or not name or "/" in name or name.startswith((".", "_")):
        problems.append(Problem(path, f"{key}.name", f"must be a plugin name, got {name!r}"))
        return None
    if not isinstance(source, dict):
        problems.append(Problem(path, f"{key}.source", "must be {git, commit} or {archive, sha256}"))
        return None
    git, commit = source.get("git"), source.get("commit")
    archive, sha256 = source.get("archive"), source.get("sha256")
    if git is not None and not (isinstance(commit, str) and _HEX40.match(commit)):
        problems.append(Problem(path, f"{key}.source.commit", f"must be a 40-hex commit, got {commit!r}"))
    elif git is None and not (isinstance(archive, str) and isinstance(sha256, str) and _HEX64.match(sha256)):
        problems.append(Problem(path, f"{key}.source", "must be {git, commit} or {archive, sha256 (64 hex)}"))
    subdir = raw.get("subdir") or ""
    if not isinstance(subdir, str) or ".." in Path(subdir).parts or subdir.startswith("/"):
        problems.append(Problem(path, f"{key}.subdir", f"must be a relative folder inside the source, got {subdir!r}"))
        subdir = ""
    return Entry(name, str(raw.get("kind") or "plugin"), git, commit, archive, sha256, subdir,
                 str(raw.get("description") or ""), raw.get("requires_hermes"))
