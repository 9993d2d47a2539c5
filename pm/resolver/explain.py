"""Conflicts in plugin words: resolver causes mapped back to origins, as data.

:func:`explain` turns resolvelib's ``ResolutionImpossible.causes`` into a :class:`Conflict` that
carries data only: per package, what kind of problem it is, which origins asked for what, and
(``context``) the requirements that led the resolver to the versions it tried. The kinds, in
the order they are told: ``requires-python`` (the target Python is outside a package's
Requires-Python), ``missing`` (no such package), ``no-compatible-file`` (files exist, none for
this interpreter or platform), ``sdist-only`` (only a source distribution, building not
allowed), ``yanked`` (only yanked releases, none pinned exactly by a root), ``excluded-newer``
(uploaded after the ``pm.exclude_newer`` cutoff), ``conflict`` (requirements that no single
version satisfies). The plugins that must go are named from these causes alone; no other
resolution is run to find them. :func:`~pm.resolver.wording.format_conflict` is the one place
that writes sentences.
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from packaging.utils import NormalizedName

from pm.base.errors import EXIT_CONFLICT, PmError
from pm.inputs.union import Origin
from pm.resolver.deadends import DeadEnd, Unusable, dead_end, met_dead_end, unusable
from pm.resolver.model import PYTHON, Req
from pm.resolver.provider import Provider
from pm.resolver.wording import KINDS, describe_problem, format_conflict

_MAX_SUBSET_CAUSES = 12
_MAX_CONTEXT_DEPTH = 4  # parent hops followed from a tried version towards the roots
_MAX_ASKED = 6  # requirements from other packages told per package


@dataclass(frozen=True)
class Cause:
    """One requirement involved in a conflict, with the root origin it descends from.

    ``via`` is the version the resolver tried that states the requirement (``"tinyhttp 1.3"``),
    None when the origin states it itself; ``via_package`` is that version's package key.
    """

    package: str
    requirement: str
    origin: Origin
    via: str | None = None
    locked: bool = False
    via_package: str | None = None

    def describe(self) -> str:
        if self.locked:
            return f"core locks {self.requirement}"
        if self.via:
            return f"{self.via} requires {self.requirement}"
        return f"{'core' if self.origin.is_core else self.origin} requires {self.requirement}"

    def to_json(self) -> dict[str, Any]:
        return {"package": self.package, "requirement": self.requirement, "origin": self.origin.to_json(),
                "origin_text": str(self.origin), "via": self.via, "via_package": self.via_package,
                "locked": self.locked}


@dataclass(frozen=True)
class Finding:
    """What is wrong with one package; ``kind`` is the first of its versions' kinds to tell."""

    kind: str  # one of KINDS
    package: str
    causes: tuple[Cause, ...]
    versions: tuple[Unusable, ...] = ()  # newest first; for the availability kinds
    context: tuple[Cause, ...] = ()  # requirements on the packages of the versions tried
    python: str = ""  # the target's Python version
    platform: str = ""  # the target's platform
    available: tuple[str, ...] = ()  # usable versions of the package, newest first (for conflict)
    dead_end: DeadEnd | None = None  # why a requirement can never be satisfied (a chain), when known

    @property
    def detail(self) -> str:
        """What is wrong, in words (empty for ``conflict``)."""
        return describe_problem(self)


class Conflict(PmError):
    """The union has no resolution. Carries findings, the plugins that must go, and the candidate."""

    kind = "conflict"
    outcome = "conflict"
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
    """The resolver gave up after ``max_rounds``: not a verdict on the requirements. Carries the
    projects whose candidates it rejected most (``busiest``: (project, rejections)) and the
    narrowest collision it met (``narrowest``: who requires what), so the limit names its cause."""

    kind = "too-complex"

    def __init__(self, rounds: int, busiest: Sequence[tuple[str, int]] = (),
                 narrowest: Sequence[str] = ()) -> None:
        self.rounds = rounds
        self.busiest = tuple(busiest)
        self.narrowest = tuple(narrowest)
        parts = [f"too complex to resolve: gave up after {rounds} resolver rounds (not a conflict)"]
        if busiest:
            parts.append("most rounds went to trying versions of " + ", ".join(
                f"{name} ({count} rejected)" for name, count in busiest))
        if narrowest:
            parts.append("the narrowest collision seen: " + "; ".join(narrowest))
        parts.append(f"raise the limit with HERMES_PM_MAX_ROUNDS (now {rounds}), or narrow the requirements "
                     "named here")
        super().__init__("; ".join(parts))


# -- causes to findings ---------------------------------------------------------------------------

def _causes(reqs: Iterable[Req]) -> list[Cause]:
    """One cause per requirement and root origin, in order, without repeats."""
    causes = []
    for req in reqs:
        parent = req.parent
        package = "python" if req.name == PYTHON else req.key
        for origin in sorted(req.origins, key=lambda o: (o.plugin is not None, o.plugin or "")):
            causes.append(Cause(package, req.text, origin, str(parent) if parent is not None else None,
                                req.locked, parent.key if parent is not None else None))
    return list(dict.fromkeys(causes))


def explain(information: Iterable[Any], provider: Provider, candidate: str | None) -> Conflict:
    """Build the Conflict for a ``ResolutionImpossible``'s causes, using only data already fetched."""
    by_package: dict[str, list[Any]] = {}
    for info in information:
        by_package.setdefault(info.requirement.key, []).append(info)
    findings = [_finding(key, infos, provider) for key, infos in by_package.items()]
    plugins = _plugins_to_blame(findings, candidate)
    return Conflict(findings, plugins, candidate)


def explain_dead_roots(roots: Sequence[Req], provider: Provider, candidate: str | None) -> Conflict | None:
    """The Conflict told from the root requirements proved dead, None when none is.

    A dead root is a whole answer: no choice elsewhere could satisfy it, so the union has no
    resolution whatever resolvelib's last backtrack was about; each is told down its chain.
    """
    dead = provider.learning.dead_roots(roots)
    if not dead:
        return None
    by_key: dict[str, list[Req]] = {}
    for req in dead:
        by_key.setdefault(req.key, []).append(req)
    findings: list[Finding] = []
    ends: set[object] = set()
    named: set[str | None] = set()
    for key, reqs in by_key.items():
        finding = _finding_for(key, reqs, provider)
        leaves = {(leaf.package, leaf.requirement, leaf.roots) for leaf in finding.dead_end.leaves()} \
            if finding.dead_end is not None else set()
        plugins = {c.origin.plugin for c in finding.causes}
        if leaves and leaves <= ends and plugins <= named:
            continue  # the same dead ends, for the same plugins: a requirement that narrows nothing
        ends |= leaves
        named |= plugins
        findings.append(finding)
    return Conflict(findings, _plugins_to_blame(findings, candidate), candidate)


def _finding(key: str, infos: list[Any], provider: Provider) -> Finding:
    return _finding_for(key, [i.requirement for i in infos], provider)


def _finding_for(key: str, reqs: list[Req], provider: Provider) -> Finding:
    if key != PYTHON and (proof := _proof(reqs, provider)) is not None:
        told, end = proof
        kind = min((leaf.kind for leaf in end.leaves()), key=KINDS.index, default="conflict")
        told = [*told, *(r for leaf in end.leaves() for r in leaf.root_reqs)]  # the partners, when roots ruled it out
        return Finding(kind, key, tuple(_causes(told)), (), _context(told, provider),
                       str(provider.python_version), provider.target.platform, dead_end=end)
    kind, versions, told = _classify(key, reqs, provider)
    available = tuple(str(v) for v, _ in provider.best_files(reqs[0].name, [])) if kind == "conflict" else ()
    return Finding(kind, "python" if key == PYTHON else key, tuple(_causes(told)), versions,
                   _context(told, provider), str(provider.python_version), provider.target.platform, available)


def _proof(reqs: list[Req], provider: Provider) -> tuple[list[Req], DeadEnd] | None:
    """(the requirements to tell, the chain) when learning explains why ``reqs`` fail: one of
    them is dead, or every version satisfying them all is; None when it does not."""
    dead = provider.learning.dead_requirements(reqs)
    if dead and not (end := dead_end(dead[0], provider)).is_leaf:
        return dead[:1], end
    if not dead and (met := met_dead_end(reqs, provider)) is not None:
        return reqs, met
    return None


def _classify(key: str, reqs: list[Req], provider: Provider) -> tuple[str, tuple[Unusable, ...], list[Req]]:
    """(kind, unusable versions, the requirements worth telling) for the requirements on ``key``."""
    if key == PYTHON:
        return "requires-python", (), reqs
    name = reqs[0].name
    links = list(provider.project(name).all_files())
    if not links:
        return "missing", (), reqs
    matching = [link for link in links if all(r.specifier.contains(link.version, prereleases=True) for r in reqs)]
    if found := unusable(matching, provider):
        return min((u.kind for u in found), key=KINDS.index), found, reqs
    return "conflict", (), _smallest_conflicting(reqs, name, provider)


def _smallest_conflicting(reqs: list[Req], name: NormalizedName, provider: Provider) -> list[Req]:
    """Every requirement in a smallest group that no available version satisfies together.

    Pure specifier arithmetic over the versions already listed for ``name``: no resolution runs.
    When several groups of that size exist (``b>=2`` against ``b==3`` and against ``b==1``),
    all of them are kept. Falls back to every requirement when there are many, or when every
    subset is satisfiable (the conflict then lies in what the versions' own dependencies pull in).
    """
    if len(reqs) > _MAX_SUBSET_CAUSES:
        return reqs
    versions = [v for v, _ in provider.best_files(name, [])]
    fits = [sum(1 << i for i, v in enumerate(versions) if r.specifier.contains(v, prereleases=True)) for r in reqs]
    everything = (1 << len(versions)) - 1
    for size in range(1, len(reqs) + 1):
        groups = [g for g in itertools.combinations(range(len(reqs)), size)
                  if not functools.reduce(operator.and_, (fits[i] for i in g), everything)]
        if groups:
            members = {i for g in groups for i in g}
            return [r for i, r in enumerate(reqs) if i in members]
    return reqs


def _context(reqs: Sequence[Req], provider: Provider) -> tuple[Cause, ...]:
    """The requirements that led the resolver to the versions stating ``reqs``, roots first.

    From each tried version's package, walk to whoever asked for it: every root requirement on
    it, and requirements from other packages' versions that narrow it (or, when no root asks
    for it, that brought it in) — at most ``_MAX_ASKED`` per package, ``_MAX_CONTEXT_DEPTH``
    hops, each package once.
    """
    frontier = list(dict.fromkeys(r.parent.key for r in reqs if r.parent is not None))
    seen, levels = set(frontier), list[list[Req]]()
    while frontier and len(levels) < _MAX_CONTEXT_DEPTH:
        level, following = [], []
        for key in frontier:
            for req in _asked(key, provider):
                level.append(req)
                if req.parent is not None and req.parent.key not in seen:
                    seen.add(req.parent.key)
                    following.append(req.parent.key)
        levels.append(level)
        frontier = following
    return tuple(_causes(r for level in reversed(levels) for r in level))


def _asked(key: str, provider: Provider) -> list[Req]:
    asked = [r for r in provider.requirements_on(key) if r.parent is None or r.parent.key != key]
    roots = [r for r in asked if r.parent is None]
    others = [r for r in asked if r.parent is not None and (not roots or _narrows(r, provider))]
    others.sort(key=lambda r: (r.parent.key, r.parent.version, r.text))  # type: ignore[union-attr]
    return roots + others[:_MAX_ASKED]


def _narrows(req: Req, provider: Provider) -> bool:
    """Whether ``req`` excludes some listed version of its package (data already fetched)."""
    if req.name == PYTHON:
        return False
    return any(not req.specifier.contains(v, prereleases=True) for v in provider.project(req.name).versions)


def _plugins_to_blame(findings: list[Finding], candidate: str | None) -> list[str]:
    """The candidate first, then plugins named by the causes, then those named by the context."""
    causes = [c for f in findings for c in f.causes] + [c for f in findings for c in f.context]
    names = [c.origin.plugin for c in causes if c.origin.plugin is not None]
    ordered = list(dict.fromkeys(names))
    if candidate is not None:
        ordered = [candidate] + [n for n in ordered if n != candidate]
    return ordered
