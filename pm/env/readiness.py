"""Readiness: does the selected generation satisfy every declared requirement right now?

Judged from installed distribution metadata (``*.dist-info`` names and, for extras and for a
generation whose pins no longer match, their ``METADATA``), never from "the module imports": an
importable module at a version outside the declared range is not ready. No network, no install.

Cost when nothing changed: one listing of site-packages and a few specifier checks, so the host
can run :func:`startup_check` at every start.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import InvalidVersion, Version

from pm.base.headers import header_items
from pm.base.watch import UNWATCHED, Watch
from pm.env import generations
from pm.env.generations import Generation, installed_versions
from pm.inputs.collect import Inputs, gather
from pm.inputs.settings import Flags
from pm.inputs.union import Origin

INPUTS_CHANGED = "inputs changed; run `hermes pm sync`"

Installed = dict[NormalizedName, Version]
#: One unmet requirement: the distribution found missing or at a wrong version, and the sentence.
Miss = tuple[NormalizedName, str]


@dataclass(frozen=True)
class Verdict:
    """Readiness of one origin (core, or one plugin): the requirements it declares that the
    generation does not satisfy, and ``changed`` (why its declaration is new or different since
    the generation was built; then it is not ready, whatever is installed)."""

    origin: Origin
    unmet: tuple[str, ...] = ()
    changed: str | None = None
    declared: int = 0  # requirements (and, for core, locked pins) judged for this origin

    @property
    def ready(self) -> bool:
        return not self.unmet and self.changed is None

    @property
    def name(self) -> str:
        return "core" if self.origin.is_core else str(self.origin.plugin)

    def reason(self) -> str:
        return "; ".join([*([self.changed] if self.changed else []), *self.unmet]) or "ready"

    def detail(self) -> str:
        """What a person reads beside the verdict: why not ready, or what was found installed."""
        if not self.ready:
            return self.reason()
        if self.declared == 0:
            return "declares no requirements"
        noun = "requirement" if self.declared == 1 else "requirements"
        return f"{self.declared} {noun} satisfied"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "origin": self.origin.to_json(), "ready": self.ready,
                "changed": self.changed, "unmet": list(self.unmet), "detail": self.detail()}


@dataclass(frozen=True)
class Readiness:
    generation: Generation | None
    verdicts: tuple[Verdict, ...]
    inputs_changed: bool
    problems: tuple[str, ...] = field(default=())

    @property
    def ready(self) -> bool:
        return (self.generation is not None and not self.inputs_changed and not self.problems
                and all(v.ready for v in self.verdicts))

    def verdict(self, name: str) -> Verdict | None:
        return next((v for v in self.verdicts if v.name == name or (v.origin.plugin or "").endswith("/" + name)), None)

    def to_json(self) -> dict[str, Any]:
        return {"ready": self.ready, "inputs_changed": self.inputs_changed, "problems": list(self.problems),
                "plugins": [v.to_json() for v in self.verdicts]}


def startup_check(home: Path) -> Readiness:
    """What the host runs at start-up: the inputs of ``home`` (flags from the environment and
    ``config.yaml`` only) judged against its selected generation. Reads files; never writes,
    never touches the network, never imports plugin code."""
    return check(gather(home, Flags()), generations.selected(home))


def check(inputs: Inputs, generation: Generation | None) -> Readiness:
    """Judge every declared requirement of ``inputs`` against ``generation``'s installed metadata."""
    if generation is None:
        return Readiness(None, (), False, ("no generation is selected; run `hermes pm sync`",))
    watch = inputs.watch  # what the inputs were read through notes what is judged here too
    installed = installed_versions(generation.site_packages, watch=watch)
    by_origin = _declared_unmet(inputs, installed, generation.site_packages)
    by_name = {o.plugin: o for o in by_origin}  # receipts name plugins without their files
    for short, misses in _closure_unmet(generation, installed, inputs.target.environment, watch=watch).items():
        origin = by_name.get(short.plugin, short)
        if origin in by_origin:  # a direct requirement already names the package: say it once
            named = {package for package, _ in by_origin[origin]}
            by_origin[origin] += [m for m in dict.fromkeys(misses) if m[0] not in named]
    changed_members = _changed_members(inputs, generation)
    counts = _declared_counts(inputs)
    verdicts = tuple(Verdict(origin, tuple(text for _, text in misses), changed_members.get(origin.plugin or ""),
                             counts.get(origin, 0))
                     for origin, misses in by_origin.items())
    verdicts += tuple(Verdict(Origin(s.plugin.key, None), (f"enabled but invalid, so not installed: {s.reason}",))
                      for s in inputs.selection.plugins if s.enabled_but_invalid)
    recorded = generation.record.get("declared_fingerprint")
    inputs_changed = (recorded != inputs.declared_fingerprint if recorded
                      else generation.fingerprint != inputs.fingerprint)
    problems = [INPUTS_CHANGED] if inputs_changed else []
    watch.stat(generation.python)
    if not generation.python.exists():
        problems.append(f"generation {generation.id} is damaged: its interpreter {generation.python} is missing")
    return Readiness(generation, verdicts, inputs_changed, tuple(problems))


def _declared_unmet(inputs: Inputs, installed: Installed, site: Path) -> dict[Origin, list[Miss]]:
    environment = inputs.target.environment
    by_origin: dict[Origin, list[Miss]] = {Origin.core(): []}
    for member in inputs.union.members:
        decl = member.plugin.declaration
        by_origin[Origin(member.plugin.key, str(decl.file) if decl else None)] = []
    overridden = _overriding(inputs)
    for tagged in inputs.union.requirements:
        for requirement in overridden(tagged.requirement) or [tagged.requirement]:
            by_origin.setdefault(tagged.origin, []).extend(_unmet(requirement, installed, environment, site,
                                                                  watch=inputs.watch))
    for name, version in inputs.core.lock:
        if overrides := overridden(Requirement(f"{name}=={version}")):  # the operator moved core's pin
            for requirement in overrides:
                by_origin[Origin.core()].extend(_unmet(requirement, installed, environment, site, watch=inputs.watch))
            continue
        found = installed.get(name)
        if found != version:
            by_origin[Origin.core()].append(
                (name, f"core locks {name}=={version}; installed: {f'{name} {found}' if found else 'not installed'}"))
    return by_origin


def _overriding(inputs: Inputs) -> Callable[[Requirement], list[Requirement] | None]:
    """What readiness judges in a requirement's place: the operator's overrides on its project
    (:mod:`pm.resolver.imposing`, as the resolution had them), None when there are none."""
    if not inputs.union.overrides:
        return lambda requirement: None
    from pm.resolver.imposing import Imposing

    return Imposing(inputs.union).overriding


def _declared_counts(inputs: Inputs) -> dict[Origin, int]:
    """origin -> how many requirements it declares (core: its requirements and its locked pins)."""
    counts: dict[Origin, int] = {Origin.core(): len(inputs.core.lock)}
    for tagged in inputs.union.requirements:
        counts[tagged.origin] = counts.get(tagged.origin, 0) + 1
    return counts


def _changed_members(inputs: Inputs, generation: Generation) -> dict[str, str]:
    """plugin key -> why it is new or changed since ``generation`` was built (from its record)."""
    if "members" not in generation.record:  # built before members were recorded
        return {}
    recorded = {m["name"]: m.get("sha256") for m in generation.record["members"]}
    changed = {}
    for member in inputs.union.members:
        decl, key = member.plugin.declaration, member.plugin.key
        if key not in recorded:
            changed[key] = f"not in generation {generation.id} (enabled since it was built)"
        elif decl is not None and recorded[key] != decl.sha256:
            changed[key] = f"declaration {decl.file} changed since generation {generation.id} was built"
    return changed


def _closure_unmet(generation: Generation, installed: Installed,
                   environment: dict[str, str], *, watch: Watch = UNWATCHED) -> dict[Origin, list[Miss]]:
    """When a pin of the generation is gone or replaced, what each installed pin now misses of
    its own dependencies, charged to the origins that pulled it in. Empty (and free) otherwise:
    a generation whose pins all match is the closure uv validated at build time (``uv pip install --strict``, ``uv pip check``)."""
    pins = generation.record["resolution"]["packages"]
    if all(str(installed.get(canonicalize_name(p["name"]))) == p["version"] for p in pins):
        return {}
    by_origin: dict[Origin, list[Miss]] = {}
    site = generation.site_packages
    for pin in pins:
        name, version = canonicalize_name(pin["name"]), installed.get(canonicalize_name(pin["name"]))
        if version is None:
            continue
        problems: list[Miss] = []
        for extra in ("", *pin.get("extras", ())):
            for dep in _requires(site, name, version, extra, environment, watch=watch):
                problems += [(package, f"{name} {version} {text}")
                             for package, text in _unmet(dep, installed, environment, site, watch=watch)]
        for origin in pin["required_by"]:
            key = Origin(origin.get("plugin"), origin.get("file"))
            by_origin.setdefault(key, []).extend(problems)
    return by_origin


def _unmet(requirement: Requirement, installed: Installed, environment: dict[str, str], site: Path, *, watch: Watch = UNWATCHED) -> list[Miss]:
    """What of ``requirement`` (markers evaluated, extras followed) the installed set lacks."""
    if requirement.marker is not None and not requirement.marker.evaluate({**environment, "extra": ""}):
        return []
    name = canonicalize_name(requirement.name)
    found = installed.get(name)
    who = f"requires {requirement}"
    if found is None:
        return [(name, f"{who}; installed: not installed")]
    if not requirement.specifier.contains(found, prereleases=True):
        return [(name, f"{who}; installed: {name} {found}")]
    unmet = []
    for extra in sorted(requirement.extras):
        for dep in _requires(site, name, found, extra, environment, watch=watch):
            for package, text in _unmet(dep, installed, environment, site, watch=watch):
                unmet.append((package, f"{who}: extra {extra!r} {text}"))
    return unmet


def _requires(site: Path, name: str, version: Version, extra: str,
              environment: dict[str, str], *, watch: Watch = UNWATCHED) -> list[Requirement]:
    """The installed distribution's ``Requires-Dist`` that apply for ``extra`` ("" = the base
    requirements; an extra's own list otherwise), markers evaluated, markers then dropped."""
    wanted = []
    for text in _requires_dist(_metadata(site, name, version, watch=watch)):
        try:
            dep = Requirement(text)
        except InvalidRequirement:
            continue
        marker = dep.marker
        mentions_extra = marker is not None and "extra" in str(marker)
        if extra and not mentions_extra:
            continue
        if marker is not None and not marker.evaluate({**environment, "extra": extra}):
            continue
        dep.marker = None
        wanted.append(dep)
    return wanted


def _requires_dist(fields: list[tuple[str, str]]) -> list[str]:
    return [value for key, value in fields if key.lower() == "requires-dist"]


def _metadata(site: Path, name: str, version: Version, *, watch: Watch = UNWATCHED) -> list[tuple[str, str]]:
    """The header fields of an installed distribution's METADATA (none when it is not there)."""
    watch.folder(site)
    folder = _dist_info_folders(str(site), _stamp(site)).get((name, version))
    if folder is not None:
        try:
            raw = (folder / "METADATA").read_bytes()
            watch.file(folder / "METADATA", raw)
            return header_items(raw.decode("utf-8", errors="replace"))
        except OSError:
            watch.file(folder / "METADATA")
    return []


def _stamp(site: Path) -> int:
    try:
        return site.stat().st_mtime_ns
    except OSError:
        return 0


@functools.lru_cache(maxsize=8)
def _dist_info_folders(site: str, stamp: int) -> dict[tuple[str, Version], Path]:
    """(name, version) -> ``*.dist-info`` folder, listed once per state of the folder (``stamp``,
    its mtime, changes whenever a distribution is installed or removed), not once per lookup."""
    del stamp  # part of the cache key only
    found: dict[tuple[str, Version], Path] = {}
    try:
        folders = [f for f in Path(site).iterdir() if f.name.endswith(".dist-info")]
    except OSError:
        return found
    for folder in folders:
        stem, _, ver = folder.name[: -len(".dist-info")].rpartition("-")
        try:
            found[(canonicalize_name(stem), Version(ver))] = folder
        except InvalidVersion:
            continue
    return found
