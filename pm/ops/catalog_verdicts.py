"""What the catalog gate says about one entry on one target, as values (issue 35).

Every entry gets one :class:`EntryVerdict` per target, and it carries everything about the entry:
``ok``, ``refused alone`` (with its cause, by :data:`KINDS`) or ``collides`` (with its partners and
group, from the together pass), or ``not judged`` (it could not be fetched or resolved: the
entry's failure, not the catalog's). :class:`Where` names the entry as the maintainer has it (its
file, ``repo@sha``, the declaration's path inside the repository), never the scratch checkout.
:class:`TogetherPass` is one resolve of the together pass, for the summary under the table.

:func:`judged` turns one solo resolve's outcome (pins, or the resolver's exception) into a
verdict; the sentences stay the resolver's (:mod:`pm.resolver.wording`), the kind is data.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pm.resolver.explain import Conflict

#: verdict kind -> what the row says. ``ok`` and ``collides`` are the together pass's; the
#: ``refused alone`` kinds the entry's with core alone; ``not judged`` ones say why not.
KINDS = {
    "ok": "ok",
    "no-wheel": "refused alone: no wheel for this target",
    "missing-project": "refused alone: missing project",
    "collides-with-core": "refused alone: collides with core",
    "requires-python": "refused alone: needs another Python",
    "refused": "refused alone",
    "collides": "collides",
    "not-fetched": "not judged: not fetched",
    "not-judged": "not judged",
}
#: finding kinds (pm.resolver.wording.KINDS) that mean "no file this target can install"
_NO_WHEEL = frozenset({"no-compatible-file", "sdist-only"})


@dataclass(frozen=True)
class Where:
    """An entry as its maintainer has it: ``file`` (relative to the catalog argument when that
    was relative), ``source`` (``repo@sha``, or ``archive@sha256:…``) and ``path`` (the
    declaration inside the source, its subdir included; empty until it was read)."""

    file: str
    source: str
    path: str = ""

    @property
    def declaration(self) -> str:
        """``repo@sha:path``: the one name of the declaration file a finding uses."""
        return f"{self.source}:{self.path}" if self.path else self.source

    def to_json(self) -> dict[str, str]:
        return {"file": self.file, "source": self.source, "path": self.path}


@dataclass(frozen=True)
class EntryVerdict:
    """One entry on one target. ``cause`` is the finding in words (the resolver's sentence);
    ``partners`` the other entries of its collision and ``group`` all of them (this one included),
    for ``collides``; ``core`` the requirements of core it collides with; ``projects`` the
    packages concerned (no wheel, missing); ``reused`` when the verdict alone came from
    ``--changed-since``."""

    entry: str
    target: str
    kind: str  # one of KINDS
    cause: str = ""
    partners: tuple[str, ...] = ()
    group: tuple[str, ...] = ()
    core: tuple[str, ...] = ()
    projects: tuple[str, ...] = ()
    pins: int = 0
    digest: str = ""  # sha256 of the resolution's name==version lines, when it resolved alone
    reused: bool = False
    failure: str = ""  # for not-judged: the failure's kind ("index", "too-complex", …)

    @property
    def verdict(self) -> str:
        """``ok``, ``refused alone``, ``collides`` or ``not judged``."""
        return KINDS[self.kind].split(":")[0]

    @property
    def label(self) -> str:
        return KINDS[self.kind]

    @property
    def passed_alone(self) -> bool:
        return self.kind in ("ok", "collides")

    @property
    def stops_the_gate(self) -> bool:
        """Not judged for a reason that is not the entry's: the index failed (DESIGN invariant 5)."""
        return self.kind == "not-judged" and self.failure == "index"

    def colliding(self, partners: tuple[str, ...], group: tuple[str, ...], cause: str) -> EntryVerdict:
        return replace(self, kind="collides", partners=partners, group=group, cause=cause)

    def to_json(self) -> dict[str, Any]:
        return {"entry": self.entry, "target": self.target, "verdict": self.verdict, "kind": self.kind,
                "label": self.label, "cause": self.cause, "partners": list(self.partners),
                "group": list(self.group), "core": list(self.core), "projects": list(self.projects),
                "pins": self.pins, "pins_digest": self.digest, "reused": self.reused,
                **({"failure": self.failure} if self.failure else {})}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EntryVerdict:
        """A verdict of an earlier report, as judged alone (a collision is the together pass's,
        which runs again)."""
        kind = data.get("kind") or ("ok" if data.get("verdict") == "ok" else "refused")
        if kind == "collides":
            kind = "ok"
        return cls(data["entry"], data["target"], kind if kind in KINDS else "refused",
                   "" if kind == "ok" else str(data.get("cause", "")), core=tuple(data.get("core", ())),
                   projects=tuple(data.get("projects", ())), pins=int(data.get("pins", 0)),
                   digest=str(data.get("pins_digest", "")), reused=True, failure=str(data.get("failure", "")))


@dataclass(frozen=True)
class TogetherPass:
    """One resolve of the together pass on one target: the entries in it, and either the groups
    its refusal named (each set aside before the next pass) or the pins it found."""

    target: str
    entries: tuple[str, ...]
    outcome: str  # "ok", "collides", "failed"
    groups: tuple[tuple[str, ...], ...] = ()
    cause: str = ""
    pins: int = 0
    digest: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"target": self.target, "entries": list(self.entries), "outcome": self.outcome,
                "groups": [list(g) for g in self.groups], "cause": self.cause, "pins": self.pins,
                "pins_digest": self.digest}


def judged(entry: str, target: str, outcome: Any) -> EntryVerdict:
    """The verdict alone for ``outcome``: a resolution (anything with ``pins``) or the exception
    the resolver raised for core + the entry."""
    from pm.base.errors import PmError
    from pm.index.base import IndexFailure, MetadataUnavailable
    from pm.resolver.explain import Conflict
    from pm.resolver.missing import MissingProjects

    if isinstance(outcome, Conflict):
        return _refusal(entry, target, outcome)
    if isinstance(outcome, MissingProjects):
        return EntryVerdict(entry, target, "missing-project", str(outcome), projects=outcome.projects)
    if isinstance(outcome, MetadataUnavailable):  # an sdist only building would tell, building not allowed
        return EntryVerdict(entry, target, "no-wheel", str(outcome))
    if isinstance(outcome, IndexFailure):
        return EntryVerdict(entry, target, "not-judged", str(outcome), failure="index")
    if isinstance(outcome, PmError):
        return EntryVerdict(entry, target, "not-judged", str(outcome), failure=outcome.kind)
    return EntryVerdict(entry, target, "ok", pins=len(outcome.pins), digest=digest(outcome.pins))


def digest(pins: Any) -> str:
    import hashlib

    lines = "\n".join(sorted(f"{p.name}=={p.version}" for p in pins))
    return hashlib.sha256(lines.encode()).hexdigest()


def _refusal(entry: str, target: str, conflict: Conflict) -> EntryVerdict:
    first = conflict.findings[0].kind if conflict.findings else "conflict"
    projects = tuple(dict.fromkeys(f.package for f in conflict.findings if f.kind == first))
    core = tuple(dict.fromkeys(c.requirement for c in conflict.causes if c.origin.is_core))
    if first in _NO_WHEEL:
        kind = "no-wheel"
    elif first == "missing":
        kind = "missing-project"
    elif first == "requires-python":
        kind = "requires-python"
    elif first == "conflict" and core:
        kind = "collides-with-core"
    else:
        kind = "refused"
    return EntryVerdict(entry, target, kind, str(conflict), core=core if kind == "collides-with-core" else (),
                        projects=projects)


def collision_groups(conflict: Conflict, entries: list[str]) -> tuple[tuple[str, ...], ...]:
    """Per finding of a together refusal, the entries its causes name (sorted, each once); the
    refusal's plugins as one group when no finding names two."""
    groups = tuple(dict.fromkeys(
        group for f in conflict.findings
        if (group := tuple(sorted({c.origin.plugin for c in f.causes if c.origin.plugin in entries})))))
    named = tuple(sorted(p for p in conflict.plugins if p in entries))
    return groups or ((named,) if named else ())
