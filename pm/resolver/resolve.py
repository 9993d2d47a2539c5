"""One resolution: the union's requirements (markers evaluated for the target) through resolvelib."""

from __future__ import annotations

import collections
import contextlib
import gc
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from packaging.utils import NormalizedName, canonicalize_name
from resolvelib import BaseReporter, ResolutionImpossible, ResolutionTooDeep
from resolvelib.resolvers import resolution as _resolution_module

from pm.base.errors import PmError, UsageError
from pm.index.base import Source
from pm.inputs.target import Target
from pm.inputs.union import Origin, Union
from pm.resolver.explain import Conflict, Finding, TooComplex, explain, explain_dead_roots
from pm.resolver.host import HostSource, is_host_link
from pm.resolver.imposing import Imposing, Replacement, root_replacements
from pm.resolver.missing import (
    MissingProjects,
    NotOffered,
    as_missing,
    known_projects,
    missing_names,
    missing_roots,
    searched,
    suggestions,
    unoffered_roots,
)
from pm.resolver.model import PYTHON, Candidate, Parent, Pin, Policy, Req, Resolution, Unverified, root_requirements
from pm.resolver.moves import moves_of
from pm.resolver.provider import Builder, Provider
from pm.resolver.wording import format_yanked_pin

_EXTRA = re.compile(r"extra\s*==\s*['\"]([^'\"]+)['\"]")

#: resolvelib rounds before "too complex to resolve" (each round pins one identifier);
#: ``HERMES_PM_MAX_ROUNDS`` sets another (a positive integer).
MAX_ROUNDS = 20_000
ROUNDS_ENV = "HERMES_PM_MAX_ROUNDS"


def max_rounds_setting() -> int:
    """:data:`MAX_ROUNDS`, or ``$HERMES_PM_MAX_ROUNDS`` (a usage error when not a positive integer)."""
    raw = os.environ.get(ROUNDS_ENV, "").strip()
    if not raw:
        return MAX_ROUNDS
    if not raw.isdigit() or int(raw) < 1:
        raise UsageError(f"{ROUNDS_ENV}={raw!r}: expected a positive whole number of resolver rounds")
    return int(raw)


class _Tally(BaseReporter):  # type: ignore[type-arg]
    """What a resolve that hits its limit spent its rounds on: rejections per project, and the
    collision with the fewest requirements met on the way."""

    def __init__(self) -> None:
        self.rejected: collections.Counter[str] = collections.Counter()
        self.narrowest: list[str] = []

    def rejecting_candidate(self, criterion: Any, candidate: Any) -> None:
        self.rejected[str(candidate.name)] += 1
        causes = [f"{info.parent if info.parent is not None else _root_of(info.requirement)} requires "
                  f"{info.requirement.text}" for info in criterion.information]
        if causes and (not self.narrowest or len(causes) < len(self.narrowest)):
            self.narrowest = causes

    def verdict(self, rounds: int) -> TooComplex:
        return TooComplex(rounds, self.rejected.most_common(3), self.narrowest[:4])


def _root_of(req: Req) -> str:
    return ", ".join(sorted({"core" if o.is_core else f"plugin {o.plugin!r}" for o in req.origins}))

# resolvelib's "optimistic" backjumping (1.1+) restores, when it gives up, a stack of states
# without the working copy on top; a pin that then fails at once drops the previous pin and
# blames an unrelated one, so a satisfiable union can end in ResolutionImpossible. Skipping
# candidates with dead dependencies (pm.resolver.learning) makes pins fail at once more often,
# and a random differential against brute force found such unions (tests/pm/resolver/
# test_learning.py). Safe backjumping only: the knob resolvelib documents for this (PR #188).
_resolution_module._OPTIMISTIC_BACKJUMPING_RATIO = 0.0


def resolve_union(
    union: Union,
    target: Target,
    source: Source,
    policy: Policy,
    *,
    candidate: str | None = None,
    max_rounds: int | None = None,
    builder: Builder | None = None,
) -> Resolution:
    """Pins for the union on ``target``. Raises MissingProjects, NotOffered, Conflict, TooComplex or IndexFailure.

    Root requirements on projects that no source has are found before resolvelib runs (their
    pages are all needed first anyway) and raised together as :class:`MissingProjects`.

    ``builder`` builds sdists that ``policy.allow_builds`` names when their metadata is only
    known by building (None: such an sdist is a failure naming it); the resolver itself never
    starts a process.
    """
    with _collector_paused():
        return _resolve(union, target, source, policy, candidate,
                        max_rounds_setting() if max_rounds is None else max_rounds, builder)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a resolution runs.

    Parsing index pages allocates millions of short-lived containers (a big PEP 691 page is a
    list of thousands of dicts); each burst triggered full collections that walked every live
    object and freed almost nothing (profiled on a cold resolve against the public index: 43 % of
    the process's CPU). Reference counting still frees everything that is not a cycle; the
    collector runs again when the resolution ends. Not at once, though: re-enabled as it was, its
    first collection would walk every object allocated meanwhile (about 3 % of a cold public
    resolve's CPU, for a process that mostly exits next); so what lives on is moved to the oldest
    generation first (freeze, then unfreeze), where the next full collection finds any cycle.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.freeze()  # also resets the youngest generation's count
            gc.unfreeze()  # back to the oldest generation, where a later full collection sees it
            gc.enable()


def _resolve(union: Union, target: Target, source: Source, policy: Policy, candidate: str | None,
             max_rounds: int, builder: Builder | None) -> Resolution:
    roots = root_requirements(union, target)
    source.prefetch(dict.fromkeys(r.name for r in roots))
    imposing = Imposing(union)
    provider = Provider(HostSource(source), target, policy, builder, imposing=imposing if imposing else None)
    provider.set_roots(roots)  # root context (pm.resolver.learning) and the versions a yanked file may serve
    provider.look_ahead(roots)
    tally = _Tally()
    resolution_run = _resolution_module.Resolution(provider, tally)
    try:
        if unoffered := unoffered_roots(roots, provider):  # first: the sources are wrong for the host itself
            raise NotOffered(unoffered, searched(provider.source))
        if missing := missing_roots(roots, provider):
            raise _missing(missing, roots, provider, candidate)
        result = _Result.of(resolution_run.resolve(roots, max_rounds=max_rounds))
    except ResolutionImpossible as exc:
        conflict = explain_dead_roots(roots, provider, candidate) or explain(exc.causes, provider, candidate)
        raise _verdict(conflict, roots, provider) from None
    except ResolutionTooDeep:
        raise tally.verdict(max_rounds) from None
    finally:
        provider.close()
    resolution = replace(_to_resolution(result), moves=moves_of(result, provider))
    resolution = _with_unverified_metadata(resolution, provider)
    resolution = _with_hashes(resolution, source)
    return replace(resolution, warnings=(*_missing_extras(result, provider), *_yanked(resolution, provider)),
                   replaced=_replaced(union, target, resolution, provider))


def _replaced(union: Union, target: Target, resolution: Resolution, provider: Provider) -> tuple[Replacement, ...]:
    """What the overrides replaced: among the root requirements, and in the pins' Requires-Dist."""
    if not union.overrides:
        return ()
    found = root_replacements(union, target.environment)
    for pin in resolution.pins:
        found += provider.replaced.get((pin.name, pin.version), [])
    return tuple(dict.fromkeys(found))


@dataclass(frozen=True)
class _Result:
    """What pm reads of a finished resolvelib state: the pins connected to the roots, and the criteria.

    resolvelib's own ``Resolver.resolve`` builds its result with a depth-first walk towards the
    roots that keeps no visited set (1.2.1, ``_has_route_to_root``): on a dependency cycle whose
    criterion lists a parent on the cycle before the one that leads to a root (x1 asked by x2 and
    x0, x2 asked by x1 only) it recurses until RecursionError, after a successful resolution. So
    the same resolution runs through resolvelib's ``Resolution``, and the connected pins are
    found here, breadth first from the roots.
    """

    mapping: dict[str, Candidate]
    criteria: dict[str, Any]

    @classmethod
    def of(cls, state: Any) -> _Result:
        keys = {id(candidate): key for key, candidate in state.mapping.items()}
        asked: dict[str | None, list[str]] = {}  # parent's key (None: a root) -> the keys it asks for
        for key, criterion in state.criteria.items():
            for parent in criterion.iter_parent():
                if parent is None or id(parent) in keys:
                    asked.setdefault(None if parent is None else keys[id(parent)], []).append(key)
        connected: set[str] = set()
        queue = list(asked.get(None, ()))
        while queue:
            key = queue.pop()
            if key not in connected:
                connected.add(key)
                queue += asked.get(key, ())
        return cls({k: c for k, c in state.mapping.items() if k in connected}, state.criteria)


def _with_hashes(resolution: Resolution, source: Source) -> Resolution:
    """Pins whose source gave no sha256 get one from that source when it can hash files (a
    find-links page without ``#sha256=``: ``hashed``, an optional capability, downloads the pinned
    file once). Only pins are hashed, never the candidates the resolver merely looked at; a pin
    still without one is refused by the build, naming its file."""
    hashed = getattr(source, "hashed", None)
    if not callable(hashed) or all(pin.link.sha256 for pin in resolution.pins):
        return resolution
    return replace(resolution, pins=tuple(pin if pin.link.sha256 else replace(pin, link=hashed(pin.link))
                                          for pin in resolution.pins))


def _verdict(conflict: Conflict, roots: list[Req], provider: Provider) -> PmError:
    """A conflict whose every finding ends in missing projects is told as :class:`MissingProjects`."""
    findings = as_missing(conflict)
    return conflict if findings is None else _missing(findings, roots, provider, conflict.candidate)


def _missing(findings: list[Finding], roots: list[Req], provider: Provider, candidate: str | None) -> MissingProjects:
    """The failure for these findings, with a near-match drawn from names known in this run for
    each project a root requirement names (a transitive one is named in a published package's
    metadata: no spelling of the user's to check)."""
    names = [n for f in findings if f.dead_end is None and all(c.via is None for c in f.causes)
             for n in missing_names(f)]
    found = {}
    if names:  # the sources' own lists are read only when there is a name to suggest for
        known = [r.name for r in roots] + [k.split("[")[0] for k in provider.identifiers()]
        known += known_projects(provider.source)
        missing = {n for f in findings for n in missing_names(f)}
        found = suggestions(names, [k for k in known if k not in missing])
    return MissingProjects(findings, searched(provider.source), found, candidate)


def _with_unverified_metadata(resolution: Resolution, provider: Provider) -> Resolution:
    """Pins whose metadata no hash vouched for (read by range) carry it, for the build to check."""
    pins = []
    for pin in resolution.pins:
        metadata = provider.metadata(pin.link) if pin.link.is_wheel else None
        pins.append(replace(pin, unverified=Unverified.of(metadata))
                    if metadata is not None and metadata.unverified else pin)
    return replace(resolution, pins=tuple(pins))


def _yanked(resolution: Resolution, provider: Provider) -> tuple[str, ...]:
    """A warning for each pin whose file is yanked: a preferred version kept although yanked since
    (as uv keeps the versions of its output file), with the way to move it; else the exact root
    pin that chose it (PEP 592)."""
    return tuple(f"{pin.name} {pin.version} is yanked on the index ({pin.link.yanked or 'no reason given'}); "
                 f"kept as the selected generation's pin: --upgrade-package {pin.name} moves it"
                 if provider.preferred.get(pin.name) == pin.version else format_yanked_pin(pin)
                 for pin in resolution.pins if pin.link.is_yanked)


def _missing_extras(result: object, provider: Provider) -> tuple[str, ...]:
    """Extras asked for that the pinned distribution does not provide (they add nothing)."""
    warnings = []
    for candidate in result.mapping.values():  # type: ignore[attr-defined]
        if not candidate.extras or candidate.link is None:
            continue
        metadata = provider.metadata(candidate.link)
        known = set(metadata.provides_extra) | {
            canonicalize_name(m) for r in metadata.requires_dist if r.marker is not None
            for m in _EXTRA.findall(str(r.marker))}
        for extra in sorted(set(candidate.extras) - known):
            warnings.append(f"{candidate.name} {candidate.version} does not provide the extra {extra!r}; "
                            "it adds nothing (check the spelling in the plugin's declaration)")
    return tuple(warnings)


def _to_resolution(result: object) -> Resolution:
    mapping: dict[str, Candidate] = result.mapping  # type: ignore[attr-defined]
    criteria = result.criteria  # type: ignore[attr-defined]
    extras: dict[NormalizedName, set[NormalizedName]] = {}
    origins: dict[NormalizedName, set[Origin]] = {}
    parents: dict[NormalizedName, list[Parent]] = {}
    children: dict[NormalizedName, set[NormalizedName]] = {}
    for key, candidate in mapping.items():
        if key == PYTHON or is_host_link(candidate.link):  # the running host: provided, never a pin
            continue
        extras.setdefault(candidate.name, set()).update(candidate.extras)
        for info in criteria[key].information:
            req: Req = info.requirement
            origins.setdefault(candidate.name, set()).update(req.origins)
            parent = info.parent
            if parent is None:
                parents.setdefault(candidate.name, []).extend(Parent(req.text, origin=o, locked=req.locked) for o in sorted(req.origins, key=str))
            elif parent.name != candidate.name:
                parents.setdefault(candidate.name, []).append(Parent(req.text, package=f"{parent.name} {parent.version}"))
                children.setdefault(parent.name, set()).add(candidate.name)
    pins = []
    for key, candidate in mapping.items():
        if key == PYTHON or candidate.extras or candidate.link is None or is_host_link(candidate.link):
            continue
        name = candidate.name
        pins.append(Pin(
            name=name,
            version=candidate.version,
            link=candidate.link,
            extras=frozenset(extras.get(name, ())),
            required_by=tuple(sorted(origins.get(name, ()), key=lambda o: (o.plugin is not None, str(o)))),
            parents=tuple(dict.fromkeys(parents.get(name, ()))),
            dependencies=tuple(sorted(children.get(name, ()))),
        ))
    return Resolution(tuple(sorted(pins, key=lambda p: p.name)))


