"""The union: core's requirements + every member's, each tagged with its origin; and its fingerprint."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from packaging.requirements import Requirement

from pm.inputs.core import Core
from pm.inputs.overrides import Imposed
from pm.inputs.selection import PluginStatus, Selection
from pm.inputs.target import Target


@dataclass(frozen=True, order=True)
class Origin:
    """Who asked for a requirement: core (``plugin`` is None) or one plugin's declaration file."""

    plugin: str | None
    file: str | None = None

    @classmethod
    def core(cls) -> "Origin":
        return cls(None, None)

    @property
    def is_core(self) -> bool:
        return self.plugin is None

    def __str__(self) -> str:
        if self.plugin is None:
            return "core"
        return f"plugin {self.plugin!r} ({self.file})" if self.file else f"plugin {self.plugin!r}"

    def to_json(self) -> dict[str, Any]:
        if self.plugin is None:
            return {"kind": "core"}
        return {"kind": "plugin", "plugin": self.plugin} | ({"file": self.file} if self.file else {})


@dataclass(frozen=True)
class Tagged:
    """One requirement of the union with its origin."""

    requirement: Requirement
    origin: Origin

    def __str__(self) -> str:
        return f"{self.requirement} (from {self.origin})"


@dataclass(frozen=True)
class Union:
    core: Core
    members: tuple[PluginStatus, ...]
    requirements: tuple[Tagged, ...]
    #: The operator's (:mod:`pm.inputs.overrides`): they bind or replace requirements as the
    #: resolver builds them; they are not requirements of anyone.
    constraints: tuple[Imposed, ...] = ()
    overrides: tuple[Imposed, ...] = ()


def build_union(core: Core, selection: Selection, *, constraints: tuple[Imposed, ...] = (),
                overrides: tuple[Imposed, ...] = ()) -> Union:
    """Core first, then members in selection order (primary home first); the operator's
    constraints and overrides carried beside them."""
    tagged = [Tagged(r, Origin.core()) for r in core.requirements]
    members = _ordered_members(selection)
    for member in members:
        declaration = member.plugin.declaration
        assert declaration is not None
        origin = Origin(member.plugin.key, str(declaration.file))
        tagged += [Tagged(r, origin) for r in declaration.requirements]
    return Union(core, tuple(members), tuple(tagged), constraints, overrides)


def _ordered_members(selection: Selection) -> list[PluginStatus]:
    by_key = {m.plugin.key: m for m in selection.members}
    ordered: dict[str, PluginStatus] = {}
    for home in selection.homes:
        for key in home.members:
            if key in by_key:
                ordered.setdefault(key, by_key[key])
    for key, member in by_key.items():
        ordered.setdefault(key, member)
    return list(ordered.values())


def fingerprint(union: Union, selection: Selection, target: Target, settings: dict[str, Any] | None = None) -> str:
    """A digest of every input that changes the resolution or the build.

    Declaration bytes of members, the selection of every home, core and its lock, the target, and
    resolution settings (index URLs, policies). Same fingerprint = nothing to do.
    """
    blob = {
        "core": union.core.digest(),
        "members": [
            [m.plugin.key, str(m.plugin.declaration.file), m.plugin.declaration.sha256]
            for m in union.members
            if m.plugin.declaration is not None
        ],
        "homes": [[str(h.home), list(h.members)] for h in selection.homes],
        "target": target.digest(),
        "settings": settings or {},
    }
    text = json.dumps(blob, sort_keys=True, default=str)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()
