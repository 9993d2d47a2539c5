"""Entry-point plugins: installed distributions advertising ``hermes_agent.plugins`` (general
plugins) or ``hermes_agent.memory_providers`` (memory providers), for ``hermes plugins list``.

Found from the installed distributions' ``entry_points.txt`` through :mod:`importlib.metadata`,
which reads that file and never loads the entry point: nothing here imports plugin code. An
entry-point plugin is a package already installed (``pip install``), never installed by pm; its
readiness is judged as a directory plugin's is, from installed metadata and versions, never from
"the module imports": each ``Requires-Dist`` whose marker holds here must be met by a distribution
installed in the running interpreter or in the selected generation (a requirement on the host
itself by the running host, :mod:`pm.resolver.host`).
"""

from __future__ import annotations

import importlib.metadata as metadata
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from pm.inputs.selection import ENTRY_POINT_GROUP as PROVIDER_GROUP
from pm.inputs.selection import PLUGIN_ENTRY_POINT_GROUP as PLUGIN_GROUP
from pm.inputs.target import running_environment
from pm.resolver.host import HOST_VERSION, is_host

__all__ = ["PLUGIN_GROUP", "PROVIDER_GROUP", "EntryPointPlugin", "entry_point_plugins"]

@dataclass(frozen=True)
class EntryPointPlugin:
    """One entry point of :data:`PLUGIN_GROUP` or :data:`PROVIDER_GROUP`, as its distribution's
    metadata says; ``unmet`` is why it is not ready (empty: ready)."""

    name: str
    group: str
    value: str
    distribution: str | None
    version: str | None
    requirements: tuple[str, ...]
    unmet: tuple[str, ...] = ()

    @property
    def memory_provider(self) -> bool:
        return self.group == PROVIDER_GROUP

    @property
    def origin(self) -> str:
        """Where it comes from, in words."""
        made = f" of {self.distribution} {self.version}" if self.distribution else ""
        return f"entry point {self.name} = {self.value}{made} (installed outside pm)"


def entry_point_plugins(generation_site: Path | None = None) -> list[EntryPointPlugin]:
    """Every entry point of both groups (by group, then name; the first of a repeated name wins),
    each judged against the running interpreter's distributions and those of
    ``generation_site`` (the selected generation's site-packages)."""
    installed = _installed([*sys.path, *([str(generation_site)] if generation_site else [])])
    found = []
    for group in (PLUGIN_GROUP, PROVIDER_GROUP):
        seen: set[str] = set()
        for ep in sorted(metadata.entry_points(group=group), key=lambda e: e.name):
            if ep.name not in seen:
                seen.add(ep.name)
                found.append(_plugin(ep, group, installed))
    return found


def _plugin(ep: metadata.EntryPoint, group: str, installed: dict[str, Version | None]) -> EntryPointPlugin:
    dist = getattr(ep, "dist", None)
    requirements = tuple(dist.requires or ()) if dist is not None else ()
    return EntryPointPlugin(ep.name, group, ep.value, dist.metadata["Name"] if dist is not None else None,
                            dist.version if dist is not None else None, requirements,
                            tuple(_unmet(requirements, installed)))


def _installed(path: Sequence[str]) -> dict[str, Version | None]:
    """Installed distributions on ``path`` by canonical name (the first found wins, as imports do)."""
    found: dict[str, Version | None] = {}
    for dist in metadata.distributions(path=list(path)):
        name = canonicalize_name(dist.metadata["Name"] or "")
        if name and name not in found:
            try:
                found[name] = Version(dist.version)
            except InvalidVersion:
                found[name] = None
    return found


def _unmet(requirements: Sequence[str], installed: dict[str, Version | None]) -> list[str]:
    environment = running_environment(extra="")
    unmet = []
    for text in requirements:
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            unmet.append(f"its requirement {text!r} is not valid PEP 508")
            continue
        if requirement.marker is not None and not requirement.marker.evaluate(environment):
            continue
        name = canonicalize_name(requirement.name)
        have = HOST_VERSION if is_host(name) else installed.get(name)
        if name not in installed and not is_host(name):
            unmet.append(f"requires {text}, which is not installed")
        elif have is not None and requirement.specifier and not requirement.specifier.contains(have, prereleases=True):
            unmet.append(f"requires {text}, but {name} {have} is installed")
    return unmet
