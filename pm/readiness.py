"""Readiness: does the selected generation satisfy every declared requirement right now?

Judged from installed distribution metadata (``*.dist-info`` names and, for extras, their
``METADATA``), never from "the module imports": an importable module at a version outside the
declared range is not ready. No network, no install.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from email.parser import HeaderParser
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import Version

from .generations import Generation, installed_versions
from .inputs import Inputs
from .union import Origin


@dataclass(frozen=True)
class Verdict:
    """Readiness of one origin (core, or one plugin)."""

    origin: Origin
    ready: bool
    unmet: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return "core" if self.origin.is_core else str(self.origin.plugin)

    def reason(self) -> str:
        return "ready" if self.ready else "; ".join(self.unmet)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "origin": self.origin.to_json(), "ready": self.ready, "unmet": list(self.unmet)}


@dataclass(frozen=True)
class Readiness:
    generation: Generation | None
    verdicts: tuple[Verdict, ...]
    inputs_changed: bool
    problems: tuple[str, ...] = field(default=())

    @property
    def ready(self) -> bool:
        return self.generation is not None and not self.inputs_changed and all(v.ready for v in self.verdicts)

    def verdict(self, name: str) -> Verdict | None:
        return next((v for v in self.verdicts if v.name == name or (v.origin.plugin or "").endswith("/" + name)), None)


def check(inputs: Inputs, generation: Generation | None) -> Readiness:
    if generation is None:
        return Readiness(None, (), False, ("no generation is selected; run `hermes pm sync`",))
    installed = installed_versions(generation.site_packages)
    environment = inputs.target.environment
    by_origin: dict[Origin, list[str]] = {Origin.core(): []}
    for member in inputs.union.members:
        decl = member.plugin.declaration
        by_origin[Origin(member.plugin.key, str(decl.file) if decl else None)] = []
    for tagged in inputs.union.requirements:
        unmet = _unmet(tagged.requirement, installed, environment, generation.site_packages)
        by_origin.setdefault(tagged.origin, []).extend(unmet)
    for name, version in inputs.core.lock:
        if installed.get(name) != version:
            found = installed.get(name)
            by_origin[Origin.core()].append(
                f"core locks {name}=={version}; installed: {f'{name} {found}' if found else 'not installed'}")
    verdicts = tuple(Verdict(origin, not unmet, tuple(unmet)) for origin, unmet in by_origin.items())
    changed = generation.fingerprint != inputs.fingerprint
    problems = (f"inputs changed since generation {generation.id} was built; run `hermes pm sync`",) if changed else ()
    return Readiness(generation, verdicts, changed, problems)


def _unmet(requirement: Requirement, installed: dict[NormalizedName, Version],
           environment: dict[str, str], site: Path) -> list[str]:
    if requirement.marker is not None and not requirement.marker.evaluate({**environment, "extra": ""}):
        return []
    name = canonicalize_name(requirement.name)
    found = installed.get(name)
    who = f"requires {requirement}"
    if found is None:
        return [f"{who}; installed: not installed"]
    if not requirement.specifier.contains(found, prereleases=True):
        return [f"{who}; installed: {name} {found}"]
    unmet = []
    for extra in sorted(requirement.extras):
        for dep in _extra_requirements(site, name, found, extra, environment):
            for problem in _unmet(dep, installed, environment, site):
                unmet.append(f"{who}: extra {extra!r} {problem}")
    return unmet


def _extra_requirements(site: Path, name: str, version: Version, extra: str,
                        environment: dict[str, str]) -> list[Requirement]:
    metadata = _metadata(site, name, version)
    wanted = []
    for text in metadata.get_all("Requires-Dist") or []:
        try:
            dep = Requirement(text)
        except InvalidRequirement:
            continue
        if dep.marker is not None and "extra" in str(dep.marker) and dep.marker.evaluate({**environment, "extra": extra}):
            wanted.append(Requirement(str(dep).split(";")[0]))
    return wanted


def _metadata(site: Path, name: str, version: Version) -> Any:
    for folder in site.glob("*.dist-info"):
        stem, _, ver = folder.name[: -len(".dist-info")].rpartition("-")
        if canonicalize_name(stem) == name and ver and Version(ver) == version:
            return HeaderParser().parsestr((folder / "METADATA").read_text(errors="replace"))
    return HeaderParser().parsestr("")
