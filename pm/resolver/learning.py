"""Dead ends: requirements that no choice elsewhere can ever satisfy, learned as the resolver goes.

A requirement (project, specifier, extras) is *dead* on a target when no usable version of its
project satisfies it, or when every version that could satisfy it states a dead requirement
itself (its Requires-Python, or a Requires-Dist whose marker holds on the target). Neither fact
depends on what else is pinned, so a candidate stating a dead requirement can be skipped
wherever it turns up. Without this, a plugin that needs ``a`` whose 30 versions each need ``b``
whose 30 versions each need ``c``… whose last link is missing makes resolvelib retry every
combination (30³ and more rounds) before it gives up; with it, each level is proved dead once.

Sound by construction — never used to reject a set that has a solution:

- "could satisfy" is a superset of what ``find_matches`` may ever offer: pre-releases count, and
  yanked files count (an ``==`` pin elsewhere on the same project may make them usable);
- a version counts as dead only once its dependencies are known from ``get_dependencies`` (its
  metadata was read anyway, because the resolver tried it): nothing is fetched or built here;
- only "dead" is remembered; "alive" is never concluded, so a cycle cannot prove anything.

It costs a dictionary look-up per offered candidate while nothing is known to be dead.

**Cycles.** A version whose closure requires another version of itself is impossible: ``a 2.0``
requires ``b==2.0``, and every version of b that fits requires ``a==1.0``. Such a version is
killed as if it stated a dead requirement, by a proof *under the context* ``a == 2.0`` (a
requirement is dead under a context of assumed pins when it excludes an assumed pin, or is dead
on its own, or every version that could satisfy it states a requirement dead under the context
grown by that version), so resolvelib, which would otherwise swap a and b back and forth until its
round limit, runs out of candidates and the set is told as a conflict naming both projects.
Sound for the same reasons (only known dependencies, a superset of offerable versions, only
"dead" remembered); only versions of projects on a cycle of the requirements read so far are
checked, each at most once per new set of known dependencies, within a budget.

**Root context.** Root requirements (core's pins and lock, every member's own requirements, their
markers already evaluated) hold in every solution. A requirement on a project that a root also
constrains is dead when no version of that project allowed by every root on it satisfies it —
``tenacity<9`` beside core's ``tenacity==9.1.4`` — and so is every candidate that states it: a
plugin's pinned release whose dependency collides with a core pin three levels down is refused at
once, without walking an unrelated wide range version by version. Sound: the versions "allowed by
the roots" are every version the index lists (pre-releases and yanked ones included), whatever
their files, so the set can only be larger than what the resolver could pick; extras do not
matter (``x[a]`` and ``x`` share one version); and roots never prove themselves dead unless they
contradict each other, which is a conflict anyway.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from packaging.specifiers import SpecifierSet
from packaging.utils import NormalizedName
from packaging.version import Version

from pm.resolver.model import PYTHON, Candidate, Req

if TYPE_CHECKING:
    from pm.resolver.provider import Provider

#: A requirement as context-free fact: (key with extras, specifier).
ReqKey = tuple[str, SpecifierSet]
#: One version of one project with the extras asked for.
VersionKey = tuple[NormalizedName, Version, frozenset[NormalizedName]]
#: Assumed pins (project -> version) a proof under context holds fixed.
Context = dict[NormalizedName, Version]
_CYCLE_DEPTH = 8  # links a proof under context follows (a cycle of 4 projects needs 4)
CYCLE_BUDGET = 256  # requirements a proof under context expands per version checked


def req_key(req: Req) -> ReqKey:
    return (req.key, req.specifier)


class Learning:
    """What this resolution has proved dead, and why (for the explanation)."""

    def __init__(self, provider: Provider) -> None:
        self._provider = provider
        self._dead: dict[ReqKey, Req] = {}
        self._killed: dict[VersionKey, Req] = {}  # a version -> the dead requirement it states
        self._deps: dict[VersionKey, tuple[Req, ...]] = {}
        self._possible: dict[ReqKey, tuple[Version, ...]] = {}
        self._tried: dict[NormalizedName, set[Version]] = {}  # versions whose dependencies are known
        self._roots: dict[NormalizedName, list[Req]] = {}
        self._excluded: dict[ReqKey, tuple[Req, ...]] = {}  # a requirement -> the roots that exclude it
        self._edges: dict[NormalizedName, set[NormalizedName]] = {}  # project -> projects its tried versions require
        self._known = 0  # how many dependency lists are known: a proof under context that failed may hold later
        self._checked: dict[VersionKey, int] = {}  # version -> ``_known`` when its cycle check last failed
        self.cyclic: set[VersionKey] = set()  # versions killed by a proof under their own pin
        self._on_cycle: dict[NormalizedName, tuple[int, bool]] = {}  # name -> (_known, on a cycle)

    def set_roots(self, roots: Sequence[Req]) -> None:
        """The root requirements of this resolution (markers evaluated): they hold in any solution."""
        self._roots = {}
        self._excluded = {}
        for root in roots:
            if root.name != PYTHON:
                self._roots.setdefault(root.name, []).append(root)

    # -- hooks called by the provider ---------------------------------------------------------------

    def saw(self, candidate: Candidate, deps: Sequence[Req]) -> None:
        """``get_dependencies`` computed ``deps`` for ``candidate`` (markers already evaluated)."""
        self._deps[(candidate.name, candidate.version, candidate.extras)] = tuple(deps)
        self._tried.setdefault(candidate.name, set()).add(candidate.version)
        self._edges.setdefault(candidate.name, set()).update(d.name for d in deps if d.name not in (PYTHON, candidate.name))
        self._known += 1

    def alive(self, reqs: Sequence[Req], found: list[Candidate]) -> list[Candidate]:
        """``found`` without the candidates that state a dead requirement; when none is left,
        the requirements among ``reqs`` that are dead on their own are remembered as such."""
        if not reqs or reqs[0].name == PYTHON:
            return found
        tried = self._tried.get(reqs[0].name)
        if tried is None:
            kept = found  # nothing known about this project's versions yet: the common, free case
        else:
            kept = [c for c in found if c.version not in tried or self.killer(c.name, c.version, c.extras) is None]
        if not kept:
            for req in reqs:
                self.prove(req)
        return kept

    # -- facts ------------------------------------------------------------------------------------

    def is_dead(self, req: Req) -> bool:
        if req.name == PYTHON:
            return not req.specifier.contains(self._provider.python_version, prereleases=True)
        return req_key(req) in self._dead or bool(self.excluded_by_roots(req))

    def excluded_by_roots(self, req: Req) -> tuple[Req, ...]:
        """The root requirements on ``req``'s project that together allow no version satisfying
        ``req`` (empty when they allow one, or when no root names the project)."""
        roots = self._roots.get(req.name)
        if not roots:
            return ()
        key = req_key(req)
        found = self._excluded.get(key)
        if found is None:
            versions = self._provider.project(req.name).versions
            fits = bool(self._provider.allowed.versions(req.name, versions, [req.specifier, *(r.specifier for r in roots)]))
            found = self._excluded[key] = () if fits or not versions else tuple(roots)
        return found

    def killer(self, name: NormalizedName, version: Version, extras: frozenset[NormalizedName]) -> Req | None:
        """The dead requirement that ``name[extras] version`` states, None when none is known."""
        key = (name, version, extras)
        found = self._killed.get(key)
        if found is None and extras:
            found = self._killed.get((name, version, frozenset()))
        if found is None:
            deps = self._deps.get(key, ())
            if extras:  # the version's own requirements come with every extra
                deps = self._deps.get((name, version, frozenset()), ()) + deps
            found = next((d for d in deps if self.is_dead(d)), None)
            if found is None:
                found = self._cyclic_killer(key)
            if found is not None:
                self._killed[key] = found
        return found

    # -- proofs under context (cycles) --------------------------------------------------------------

    def _cyclic_killer(self, key: VersionKey) -> Req | None:
        """The requirement of ``key`` that is dead under its own pin (see the module docstring)."""
        name, version, extras = key
        if self._checked.get(key) == self._known or not self.on_cycle(name):
            return None
        self._checked[key] = self._known
        found = self.killer_under(name, version, extras, {}, [CYCLE_BUDGET])
        if found is not None:
            self.cyclic.add(key)
        return found

    def on_cycle(self, name: NormalizedName) -> bool:
        """Whether the projects that ``name``'s tried versions require lead back to it (a walk
        of the project graph, remembered until a dependency list is added)."""
        known = self._on_cycle.get(name)
        if known is not None and known[0] == self._known:
            return known[1]
        stack, seen, found = list(self._edges.get(name, ())), set(), False
        while stack and not found:
            here = stack.pop()
            found = here == name
            if here not in seen:
                seen.add(here)
                stack += self._edges.get(here, ())
        self._on_cycle[name] = (self._known, found)
        return found

    def deps_of(self, name: NormalizedName, version: Version, extras: frozenset[NormalizedName]) -> tuple[Req, ...] | None:
        """The known requirements of ``name[extras] version`` (None: never tried)."""
        base = self._deps.get((name, version, frozenset()))
        more = self._deps.get((name, version, extras)) if extras else None
        if base is None and more is None:
            return None
        return (base or ()) + (more or ())

    def killer_under(self, name: NormalizedName, version: Version, extras: frozenset[NormalizedName],
                     context: Context, budget: list[int]) -> Req | None:
        """A requirement of ``name[extras] version`` dead under ``context`` plus that pin (one dead
        on its own first); None when none is known to be. ``budget``: expansions left."""
        deps = self.deps_of(name, version, extras)
        if deps is None:
            return None
        inner = {**context, name: version}
        return (next((d for d in deps if self.excluded_pin(d, inner) is not None), None)  # the shortest proof first
                or next((d for d in deps if d.name != PYTHON and self.is_dead(d)), None)
                or next((d for d in deps if self.dead_under(d, inner, budget, 1)), None))

    def excluded_pin(self, req: Req, context: Context) -> Version | None:
        """The version ``context`` assumes for ``req``'s project when ``req`` excludes it."""
        pinned = context.get(req.name) if req.name != PYTHON else None
        if pinned is None or self._provider.allowed.contains(req.name, req.specifier, pinned):
            return None
        return pinned

    def dead_under(self, req: Req, context: Context, budget: list[int], depth: int) -> bool:
        """Whether no solution holding every pin of ``context`` satisfies ``req``."""
        if req.name == PYTHON:
            return self.is_dead(req)
        if req.name in context:
            return self.excluded_pin(req, context) is not None
        if self.is_dead(req):
            return True
        if depth >= _CYCLE_DEPTH or budget[0] <= 0:
            return False
        budget[0] -= 1
        for version in self.possible(req):
            deps = self.deps_of(req.name, version, req.extras)
            if deps is None:
                return False  # never tried: what it needs is unknown
            inner = {**context, req.name: version}
            if not any(self.dead_under(d, inner, budget, depth + 1) for d in deps):
                return False
        return True

    def killers(self, name: NormalizedName, version: Version, extras: frozenset[NormalizedName]) -> tuple[Req, ...]:
        """Every dead requirement ``name[extras] version`` states (for an explanation: a single
        pinned version that collides twice is told with both collisions, as uv tells them)."""
        deps = self._deps.get((name, version, extras), ())
        if extras:
            deps = self._deps.get((name, version, frozenset()), ()) + deps
        return tuple(dict.fromkeys(d for d in deps if self.is_dead(d)))

    def prove(self, req: Req) -> bool:
        """Whether ``req`` is dead, from what is known now (remembered when it is)."""
        if req.name == PYTHON or self.is_dead(req):
            return self.is_dead(req)
        possible = self.possible(req)
        if all(self.killer(req.name, version, req.extras) is not None for version in possible):
            self._dead[req_key(req)] = req
            return True
        return False

    def possible(self, req: Req) -> tuple[Version, ...]:
        """Every version that could ever be offered for ``req``, newest first: those with a file
        usable on the target when pinned (so yanked ones too), pre-releases included."""
        key = req_key(req)
        found = self._possible.get(key)
        if found is None:
            provider = self._provider
            project = provider.project(req.name)
            found = self._possible[key] = tuple(
                v for v in provider.allowed.versions(req.name, project.versions, [req.specifier])
                if any(provider.file_problem(link, True) is None for link in project.files(v)))
        return found

    def dead_requirements(self, reqs: Iterable[Req]) -> list[Req]:
        """Those of ``reqs`` that are proved dead (each tried once more with what is known now)."""
        return [r for r in reqs if r.name != PYTHON and self.prove(r)]

    def dead_roots(self, roots: Iterable[Req]) -> list[Req]:
        """Those of ``roots`` proved dead once the dependencies already read are followed all the
        way down (resolvelib may stop before every link was proved on the way). For a failed
        resolution's explanation: one pass over what is known; fetches at most pages of projects
        that tried versions require (the resolver usually has them already)."""
        refuted: set[ReqKey] = set()
        return [r for r in roots if r.name != PYTHON and self._prove_deep(r, frozenset(), refuted)]

    def _prove_deep(self, req: Req, stack: frozenset[ReqKey], refuted: set[ReqKey]) -> bool:
        """Whether ``req`` is dead, following known dependencies; a requirement on the ``stack``
        counts as alive (so nothing is proved from a cycle), and ``refuted`` remembers failures."""
        if self.is_dead(req):
            return True
        key = req_key(req)
        if req.name == PYTHON or key in stack or key in refuted:
            return False
        for version in self.possible(req):
            if self.killer(req.name, version, req.extras) is None and not self._kill_deep(req, version, stack | {key}, refuted):
                refuted.add(key)
                return False
        self._dead[key] = req
        return True

    def _kill_deep(self, req: Req, version: Version, stack: frozenset[ReqKey], refuted: set[ReqKey]) -> bool:
        base = self._deps.get((req.name, version, frozenset()))
        deps = (base or ()) + (self._deps.get((req.name, version, req.extras), ()) if req.extras else ())
        if base is None and not req.extras:
            return False  # never tried: its dependencies are unknown
        dead = next((d for d in deps if self._prove_deep(d, stack, refuted)), None)
        if dead is not None:
            self._killed[(req.name, version, req.extras)] = dead
        return dead is not None

    def cause(self, req: Req) -> tuple[tuple[Version, Req], ...]:
        """For a dead ``req``: each version that could satisfy it, newest first, with the dead
        requirement it states (``()`` when no usable version exists at all)."""
        return tuple((v, killer) for v in self.possible(req)
                     if (killer := self.killer(req.name, v, req.extras)) is not None)
