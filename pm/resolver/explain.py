"""Conflicts in plugin words: resolver causes mapped back to origins, and one formatter.

:func:`explain` turns resolvelib's ``ResolutionImpossible.causes`` into a :class:`Conflict` that
carries data only: per package, what kind of problem it is and which origins asked for what.
The kinds, in the order they are told: ``requires-python`` (no version of the package supports
the target Python), ``missing`` (no such package), ``no-compatible-file`` (files exist, none for
this interpreter or platform), ``sdist-only`` (only a source distribution, building not allowed),
``conflict`` (requirements that no single version satisfies). The plugins that must go are
named from these causes alone; no other resolution is run to find them.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from packaging.utils import NormalizedName
from packaging.version import Version

from ..errors import EXIT_CONFLICT, PmError
from ..union import Origin
from .model import PYTHON, Req
from .provider import Provider

KINDS = ("requires-python", "missing", "no-compatible-file", "sdist-only", "conflict")
_MAX_SUBSET_CAUSES = 12


@dataclass(frozen=True)
class Cause:
    """One requirement involved in a conflict, with the root origin it descends from."""

    package: str
    requirement: str
    origin: Origin
    via: str | None = None  # "tinyhttp 1.3" when a dependency asked, not the origin itself
    locked: bool = False

    def describe(self) -> str:
        if self.locked:
            return f"core locks {self.requirement}"
        who = "core requires" if self.origin.is_core else f"{self.origin} requires"
        if self.via:
            return f"{who} {self.via}, which requires {self.requirement}"
        return f"{who} {self.requirement}"

    def to_json(self) -> dict[str, Any]:
        return {"package": self.package, "requirement": self.requirement, "origin": self.origin.to_json(),
                "origin_text": str(self.origin), "via": self.via, "locked": self.locked}


@dataclass(frozen=True)
class Finding:
    kind: str  # one of KINDS
    package: str
    causes: tuple[Cause, ...]
    detail: str = ""


class Conflict(PmError):
    """The union has no resolution. Carries findings, the plugins that must go, and the candidate."""

    exit_code = EXIT_CONFLICT

    def __init__(self, findings: Sequence[Finding], plugins: Sequence[str], candidate: str | None) -> None:
        self.findings = tuple(sorted(findings, key=lambda f: KINDS.index(f.kind)))
        self.plugins = tuple(plugins)
        self.candidate = candidate
        super().__init__(format_conflict(self))

    @property
    def causes(self) -> tuple[Cause, ...]:
        return tuple(c for f in self.findings for c in f.causes)


class TooComplex(PmError):
    """The resolver gave up after ``max_rounds``: not a verdict on the requirements."""

    def __init__(self, rounds: int) -> None:
        self.rounds = rounds
        super().__init__(f"too complex to resolve: gave up after {rounds} resolver rounds "
                         "(not a conflict; narrow some requirements or report it)")


def format_conflict(conflict: Conflict) -> str:
    """One paragraph a tired user can act on."""
    parts = []
    for finding in conflict.findings:
        asked = "; ".join(dict.fromkeys(c.describe() for c in finding.causes))
        if finding.kind == "conflict":
            parts.append(f"{asked}; no version of {finding.package} satisfies all of these.")
        else:
            parts.append(f"{asked}; but {finding.detail}.")
    if conflict.plugins:
        must = ", ".join(repr(p) for p in conflict.plugins)
        if conflict.candidate is not None:
            partners = [p for p in conflict.plugins if p != conflict.candidate]
            tail = (f" cannot live with plugin(s) {', '.join(map(repr, partners))}" if partners
                    else " cannot live with the host's core requirements")
            parts.append(f"Plugin {conflict.candidate!r}{tail}.")
        else:
            parts.append(f"Plugins involved: {must}.")
    return " ".join(parts)


def causes_from(information: Iterable[Any]) -> list[Cause]:
    """Map resolvelib RequirementInformation entries to causes, one per root origin."""
    causes = []
    for info in information:
        req: Req = info.requirement
        via = str(info.parent) if info.parent is not None else None
        package = "python" if req.name == PYTHON else req.key
        for origin in sorted(req.origins, key=lambda o: (o.plugin is not None, o.plugin or "")):
            causes.append(Cause(package, req.text, origin, via, req.locked))
    return list(dict.fromkeys(causes))


def explain(information: Sequence[Any], provider: Provider, candidate: str | None) -> Conflict:
    """Build the Conflict for a ``ResolutionImpossible``'s causes, using only data already fetched."""
    by_package: dict[str, list[Any]] = {}
    for info in information:
        by_package.setdefault(info.requirement.key, []).append(info)
    findings = [_finding(key, infos, provider) for key, infos in by_package.items()]
    plugins = _plugins_to_blame(findings, candidate)
    return Conflict(findings, plugins, candidate)


def _finding(key: str, infos: list[Any], provider: Provider) -> Finding:
    reqs: list[Req] = [i.requirement for i in infos]
    causes = causes_from(infos)
    if key == PYTHON:
        detail = f"the target Python is {provider.python_version}"
        return Finding("requires-python", "python", tuple(causes), detail)
    name = reqs[0].name
    links = list(provider.source.links(name))
    if not links:
        return Finding("missing", key, tuple(causes), f"no package named {name!r} exists on the configured indexes")
    matching = [link for link in links if all(r.specifier.contains(link.version, prereleases=True) for r in reqs)]
    if matching and not any(provider.usable(link) for link in matching):
        return _unusable(key, name, matching, causes, provider)
    return Finding("conflict", key, tuple(_smallest_conflicting(causes, reqs, name, provider)))


def _unusable(key: str, name: NormalizedName, links: list[Any], causes: list[Cause], provider: Provider) -> Finding:
    versions = ", ".join(sorted({str(link.version) for link in links}, key=Version, reverse=True)[:5])
    wheels = [link for link in links if link.is_wheel]
    if not wheels:
        detail = (f"{name} {versions} is only published as a source distribution; pm installs wheels only "
                  f"unless you allow building it: add {name!r} to pm.allow_builds in config.yaml")
        return Finding("sdist-only", key, tuple(causes), detail)
    compatible = [link for link in wheels if provider.tag_rank(link) is not None]
    if compatible and all(link.requires_python for link in compatible):
        spans = ", ".join(sorted({link.requires_python for link in compatible}))
        detail = f"{name} {versions} requires Python {spans} and the target Python is {provider.python_version}"
        return Finding("requires-python", key, tuple(causes), detail)
    tags = ", ".join(sorted({str(t) for link in wheels for t in link.tags})[:6])
    detail = (f"{name} {versions} has no file for this interpreter (Python {provider.python_version} on "
              f"{provider.target.platform}); its wheels are for: {tags}")
    return Finding("no-compatible-file", key, tuple(causes), detail)


def _smallest_conflicting(causes: list[Cause], reqs: list[Req], name: NormalizedName, provider: Provider) -> list[Cause]:
    """The smallest group of causes that no available version satisfies together.

    Pure specifier arithmetic over the versions already listed for ``name``: no resolution runs.
    Falls back to every cause when the group is large or every subset is satisfiable (the
    conflict then lies in what the versions' own dependencies pull in).
    """
    if len(reqs) > _MAX_SUBSET_CAUSES:
        return causes
    versions = [v for v, _ in provider.best_files(name, [])] or []
    for size in range(1, len(reqs) + 1):
        for group in itertools.combinations(reqs, size):
            if not any(all(r.specifier.contains(v, prereleases=True) for r in group) for v in versions):
                texts = {(r.text, o) for r in group for o in r.origins}
                return [c for c in causes if (c.requirement, c.origin) in texts]
    return causes


def _plugins_to_blame(findings: list[Finding], candidate: str | None) -> list[str]:
    names = [c.origin.plugin for f in findings for c in f.causes if c.origin.plugin is not None]
    ordered = list(dict.fromkeys(names))
    if candidate is not None:
        ordered = [candidate] + [n for n in ordered if n != candidate]
    return ordered
