"""Why a requirement can never be satisfied, as data: versions that cannot be used, and chains.

:class:`Unusable` is one version that exists but cannot be used on the target (and why).
:class:`DeadEnd` is the proof behind a dead requirement (see :mod:`.learning`): either a leaf —
no version of the project can be used at all (missing, no compatible file, Requires-Python…) —
or, per group of the versions that could satisfy it, the dead requirement those versions state,
so a message can follow the chain down to the project at its end: *plugin 'p' requires a; every
version of a requires b; b requires c, which has no wheel for this interpreter*. Built only from
what the resolution already fetched.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from packaging.version import Version

from pm.index.base import FileLink
from pm.resolver.learning import CYCLE_BUDGET, Context, req_key
from pm.resolver.model import PYTHON, Req
from pm.resolver.provider import PROBLEMS

if TYPE_CHECKING:
    from pm.resolver.provider import Provider

_MAX_DEPTH = 12  # links of a chain followed before it is cut short
_MAX_NODES = 500  # dead requirements expanded per proof (the message tells only some)


@dataclass(frozen=True)
class Unusable:
    """One version that exists but cannot be used, and why (a kind of :data:`~.wording.KINDS`).

    ``fact`` is the kind's datum: the Requires-Python specifier, the wheels' tags, the yank
    reason, or the exclude-newer cutoff; ``""`` when there is none.
    """

    version: str
    kind: str
    fact: str = ""


@dataclass(frozen=True)
class Needs:
    """Versions of a project (newest first) that each state the dead requirement ``dead``."""

    versions: tuple[str, ...]
    dead: DeadEnd


@dataclass(frozen=True)
class DeadEnd:
    """The proof that requirement ``requirement`` (on ``package``) can never be satisfied.

    A leaf has a :data:`~.wording.KINDS` kind: ``missing`` (no files at all), ``conflict`` (no
    version satisfies the specifier; ``available`` lists those that exist), or the kind of its
    unusable ``versions``. Otherwise ``kind`` is ``"needs"``: every version that could satisfy it
    (``total`` of them) states a dead requirement, grouped in ``needs``; or ``"seen"`` (its proof
    is told elsewhere in the same tree) or ``"cut"`` (not followed further, to stay short).
    """

    requirement: str
    package: str
    kind: str
    versions: tuple[Unusable, ...] = ()
    available: tuple[str, ...] = ()
    needs: tuple[Needs, ...] = ()
    total: int = 0
    #: For a requirement the root requirements rule out (root context, :mod:`.learning`): those
    #: roots, as people read them ("core locks tenacity==9.1.4"); its kind is then "conflict".
    roots: tuple[str, ...] = ()
    root_reqs: tuple[Req, ...] = field(default=(), compare=False)  # the same roots, as requirements
    #: For a requirement that excludes a version met higher up its own chain (a cycle, see
    #: :mod:`.learning`): that version ("a 2.0.0"); its kind is then "conflict".
    excludes: str = ""

    @property
    def is_leaf(self) -> bool:
        return self.kind not in ("needs", "seen", "cut")

    @property
    def complete(self) -> bool:
        """Whether every branch was followed to its end (nothing ``"cut"``)."""
        return self.kind != "cut" and all(n.dead.complete for n in self.needs)

    def edges(self) -> Iterator[tuple[DeadEnd, Needs]]:
        """Every (project, versions needing a dead requirement) link of the proof, depth first."""
        for needs in self.needs:
            yield self, needs
            yield from needs.dead.edges()

    def to_json(self) -> dict[str, Any]:
        return {"requirement": self.requirement, "package": self.package, "kind": self.kind,
                "versions": [{"version": u.version, "kind": u.kind, "fact": u.fact} for u in self.versions],
                "available": list(self.available), "roots": list(self.roots), "excludes": self.excludes,
                "needs": [{"versions": list(n.versions), "dead": n.dead.to_json()} for n in self.needs]}

    def leaves(self) -> Iterator[DeadEnd]:
        """Every leaf of the proof, depth first (a leaf yields itself)."""
        if self.is_leaf:
            yield self
        for needs in self.needs:
            yield from needs.dead.leaves()


def dead_end(req: Req, provider: Provider) -> DeadEnd:
    """The proof for a requirement that :class:`~.learning.Learning` holds dead."""
    return _Proof(provider).of(req, 0, {})


def met_dead_end(reqs: list[Req], provider: Provider) -> DeadEnd | None:
    """The proof when ``reqs`` (on one project) are each satisfiable but every version the
    resolver could offer for them all states a dead requirement; None when there is no such
    version, or one of them is not known to be dead (then it is a plain conflict)."""
    learning, first = provider.learning, reqs[0]
    versions = [v for v, _ in provider.best_files(first.name, reqs)]
    cause = [(v, killer) for v in versions if (killer := learning.killer(first.name, v, first.extras)) is not None]
    if not versions or len(cause) < len(versions):
        return None
    text = " and ".join(dict.fromkeys(r.text for r in reqs))
    return DeadEnd(text, first.key, "needs", needs=_Proof(provider).needs(first, tuple(cause), 0, {}), total=len(cause))


class _Proof:
    """Builds one proof: each dead requirement expanded once ("seen" after), at most
    ``_MAX_NODES`` expansions and ``_MAX_DEPTH`` levels ("cut" beyond), so a message stays short
    however the versions branch."""

    def __init__(self, provider: Provider) -> None:
        self.provider = provider
        self.seen: set[object] = set()
        self.budget = _MAX_NODES

    def of(self, req: Req, depth: int, context: Context) -> DeadEnd:
        """The proof that ``req`` is dead under ``context`` (versions assumed higher up a cycle's
        chain; empty: dead on its own)."""
        learning = self.provider.learning
        if req.name == PYTHON:
            return DeadEnd(req.text, "python", "requires-python", (Unusable("", "requires-python", str(req.specifier)),))
        if (pinned := learning.excluded_pin(req, context)) is not None:
            return DeadEnd(req.text, req.key, "conflict", excludes=f"{req.name} {pinned}")
        key = (_group_key(req), tuple(sorted(context.items())))
        if key in self.seen:
            return DeadEnd(req.text, req.key, "seen")
        self.seen.add(key)
        if roots := learning.excluded_by_roots(req):
            return DeadEnd(req.text, req.key, "conflict", roots=tuple(_root_statements(roots)), root_reqs=roots)
        cause = self._cause_under(req, context) if context else learning.cause(req)
        if not cause:
            return leaf(req, self.provider)
        if depth >= _MAX_DEPTH or self.budget <= 0:
            return DeadEnd(req.text, req.key, "cut")
        self.budget -= 1
        if len(cause) == 1:  # one version (a pin): every collision it states is told, not the first only
            version = cause[0][0]
            cause = tuple((version, k) for k in learning.killers(req.name, version, req.extras)) or cause
        return DeadEnd(req.text, req.key, "needs", needs=self.needs(req, cause, depth, context),
                       total=len({v for v, _ in cause}))

    def _cause_under(self, req: Req, context: Context) -> tuple[tuple[Version, Req], ...]:
        """Each version of ``req`` with the requirement it states that excludes a pin of ``context``
        (the shortest proof), else one dead under it, else its dead one."""
        learning, budget = self.provider.learning, [CYCLE_BUDGET]
        return tuple((v, k) for v in learning.possible(req)
                     if (k := learning.killer_under(req.name, v, req.extras, context, budget)
                         or learning.killer(req.name, v, req.extras)) is not None)

    def needs(self, req: Req, cause: tuple[tuple[Version, Req], ...], depth: int, context: Context) -> tuple[Needs, ...]:
        """The versions of ``cause`` grouped by the dead requirement they state, each proved in
        turn; on a cycle, under ``context`` plus the version (so the chain ends where it excludes a
        version met above it)."""
        learning = self.provider.learning
        cyclic = bool(context) or learning.on_cycle(req.name)
        groups: dict[object, tuple[Req, Context, list[str]]] = {}
        for version, killer in cause:
            inner = {**context, req.name: version} if cyclic else {}
            key = (_group_key(killer), tuple(sorted(inner.items())))
            groups.setdefault(key, (killer, inner, []))[2].append(str(version))
        return tuple(Needs(tuple(versions), self.of(killer, depth + 1, inner)) for killer, inner, versions in groups.values())


def _root_statements(roots: tuple[Req, ...]) -> list[str]:
    """Each root requirement as people read it: who requires (or locks) what."""
    told = []
    for root in roots:
        for origin in sorted(root.origins, key=lambda o: (o.plugin is not None, o.plugin or "")):
            told.append(f"core locks {root.text}" if root.locked else f"{origin} requires {root.text}")
    return list(dict.fromkeys(told))


def _group_key(req: Req) -> object:
    return ("python", str(req.specifier)) if req.name == PYTHON else req_key(req)


def leaf(req: Req, provider: Provider) -> DeadEnd:
    """No version of the project can satisfy ``req`` on the target: say which kind of problem."""
    links = list(provider.project(req.name).all_files())
    if not links:
        return DeadEnd(req.text, req.key, "missing")
    matching = [link for link in links if req.specifier.contains(link.version, prereleases=True)]
    versions = unusable(matching, provider)
    if not versions:
        available = tuple(str(v) for v in sorted({link.version for link in links}, reverse=True))
        return DeadEnd(req.text, req.key, "conflict", available=available)
    from pm.resolver.wording import KINDS

    return DeadEnd(req.text, req.key, min((u.kind for u in versions), key=KINDS.index), versions)


def unusable(links: list[FileLink], provider: Provider) -> tuple[Unusable, ...]:
    """Each matching version with the reason it cannot be used; ``()`` when one can be."""
    by_version: dict[Version, list[FileLink]] = {}
    for link in links:
        by_version.setdefault(link.version, []).append(link)
    found = []
    for version in sorted(by_version, reverse=True):
        files = by_version[version]
        problems = [(kind, link) for link in files if (kind := provider.file_problem(link, provider.may_use_yanked(link))) is not None]
        if len(problems) < len(files):
            return ()
        kind, link = min(problems, key=lambda p: PROBLEMS.index(p[0]))
        found.append(Unusable(str(version), kind, _fact(kind, link, files, provider)))
    return tuple(found)


def _fact(kind: str, link: FileLink, files: list[FileLink], provider: Provider) -> str:
    if kind == "requires-python":
        return link.requires_python or ""
    if kind == "no-compatible-file":
        return ", ".join(sorted({str(t) for f in files for t in f.tags})[:6])
    if kind == "yanked":
        return link.yanked or ""
    if kind == "excluded-newer" and provider.policy.exclude_newer is not None:
        return provider.policy.exclude_newer.isoformat()
    return ""
