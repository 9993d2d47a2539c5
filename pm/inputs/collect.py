"""Gather the inputs of one operation: settings, target, core, selection, union, fingerprint."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.version import Version

from pm import __version__
from pm.base.watch import UNWATCHED, Watch
from pm.inputs.config import read_config
from pm.inputs.core import Core, load_core
from pm.inputs.selection import PluginStatus, Selection, Status, select
from pm.inputs.settings import Flags, Settings, redact_url, resolve_settings
from pm.inputs.target import Target, target_for
from pm.inputs.union import Union, build_union, fingerprint


@dataclass(frozen=True)
class Inputs:
    home: Path
    settings: Settings
    target: Target
    core: Core
    selection: Selection
    union: Union
    fingerprint: str
    #: What was read, and how it looked: the evidence a shortcut of this command stands on.
    watch: Watch = field(default=UNWATCHED, compare=False, repr=False)

    @property
    def declared_fingerprint(self) -> str:
        """The fingerprint without resolution settings (index URLs, policies): what readiness
        compares, since a different index does not make installed requirements unmet."""
        return fingerprint(self.union, self.selection, self.target, None)

    def find(self, name: str) -> PluginStatus | None:
        """The plugin called ``name`` (key or leaf name), preferring a non-shadowed root."""
        matches = [s for s in self.selection.plugins if name in (s.plugin.key, s.plugin.root.leaf)]
        matches.sort(key=lambda s: s.status is Status.SHADOWED)
        return matches[0] if matches else None

    def to_receipt(self) -> dict[str, Any]:
        """The ``inputs`` section of a receipt (docs/design.md, schema 1)."""
        return {
            "fingerprint": self.fingerprint,
            "index": {
                "urls": [redact_url(u) for u in self.settings.index_urls],
                "find_links": [redact_url(str(p)) for p in self.settings.find_links],
                "offline": self.settings.offline,
                "sources": dict(self.settings.sources),
            },
            "core": [{"requirement": str(r)} for r in self.core.requirements],
            "core_lock": [f"{n}=={v}" for n, v in self.core.lock],
            "plugins": [plugin_to_json(s) for s in self.selection.plugins],
            "homes": [
                {"home": str(h.home), "profile": h.name or None, "members": list(h.members)}
                for h in self.selection.homes
            ],
            "notices": list(self.selection.notices),
        } | {kind: [item.to_json() for item in given] for kind, given in
             (("constraints", self.settings.constraints), ("overrides", self.settings.overrides)) if given}


def plugin_to_json(status: Any) -> dict[str, Any]:
    plugin = status.plugin
    declaration = plugin.declaration
    return {
        "name": plugin.key,
        "source": plugin.root.source,
        "root": str(plugin.root.path),
        "memory_provider": plugin.is_memory,
        "status": status.status.value,
        "reason": status.reason,
        "homes": list(status.homes),
        "declaration": None if declaration is None else {
            "file": str(declaration.file),
            "style": declaration.style,
            "sha256": declaration.sha256,
            "requires_python": None if declaration.requires_python is None else str(declaration.requires_python),
        },
        "requirements": [] if declaration is None else [str(r) for r in declaration.requirements],
        "excluded": [] if declaration is None else [
            {"requirement": e.requirement, "reason": e.reason} for e in declaration.excluded
        ],
        "problems": list(plugin.problems),
        "warnings": list(plugin.warnings),
    }


def gather(home: Path, flags: Flags, *, candidate: str | None = None, owner: Path | None = None,
           watch: Watch = UNWATCHED) -> Inputs:
    """Read everything an operation needs. Raises ConfigError when the primary config is broken.
    ``candidate`` is proposed in ``owner``'s config (default :func:`pm.inputs.selection.candidate_home`)."""
    config = read_config(home, watch=watch)
    settings = resolve_settings(flags, config, watch=watch)
    target = target_for(settings.python, watch=watch)
    if settings.python_version is not None or settings.platform is not None:
        from pm.inputs.foreign import foreign_target

        target = foreign_target(target, settings.python_version, settings.platform)
    core = load_core(settings.core, settings.core_lock, target.environment, watch=watch)
    selection = select(home, python_version=Version(target.python_full_version), host_version=Version(__version__),
                       candidate=candidate, owner=owner, primary=config, watch=watch)
    union = build_union(core, selection, constraints=settings.constraints, overrides=settings.overrides)
    digest = fingerprint(union, selection, target, settings.fingerprint_part())
    return Inputs(home, settings, target, core, selection, union, digest, watch)
