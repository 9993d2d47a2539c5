"""The history of an environment: every generation with when it was built, the plugin selection it
was built from, its package count and what changed from the generation before it; the package
changes between any two; and how a person names one: its id, a prefix of the id that only it has,
``selected`` or ``previous``.

Reads only, without the lock and without gathering the inputs: ``state.json``, the listing of
the generations folder, each ``generation.json``, and one listing of each site-packages folder
(whether the generation is intact). ``hermes pm generations`` and ``hermes pm diff`` print these;
``hermes pm rollback --to`` names its generation through :func:`find`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pm.base.errors import PmError
from pm.base.watch import UNWATCHED, Watch
from pm.env import generations
from pm.env.generations import Generation

#: Names that stand for the generation ``state.json`` names in that role.
ALIASES = ("selected", "previous")

Pins = dict[str, str]


@dataclass(frozen=True)
class Changes:
    """The package changes from one set of pins to another, each list by name."""

    added: tuple[tuple[str, str], ...] = ()  # (name, version)
    removed: tuple[tuple[str, str], ...] = ()  # (name, version)
    moved: tuple[tuple[str, str, str], ...] = ()  # (name, from, to)

    @classmethod
    def between(cls, before: Pins, after: Pins) -> Changes:
        names = sorted(set(before) | set(after), key=str.lower)
        return cls(tuple((n, after[n]) for n in names if n not in before),
                   tuple((n, before[n]) for n in names if n not in after),
                   tuple((n, before[n], after[n]) for n in names if n in before and n in after
                         and before[n] != after[n]))

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.moved)

    def lines(self) -> list[str]:
        """``+ name==version``, ``- name==version`` and ``~ name old -> new``, by name."""
        return sorted([*(f"+ {n}=={v}" for n, v in self.added), *(f"- {n}=={v}" for n, v in self.removed),
                       *(f"~ {n} {old} -> {new}" for n, old, new in self.moved)], key=lambda line: line[2:].lower())

    def summary(self, longest: int = 3) -> str:
        """The changes in a few words: each one when there are at most ``longest``, else counts."""
        if self.empty:
            return "none"
        if len(self.added) + len(self.removed) + len(self.moved) <= longest:
            return ", ".join(line.replace(" ", "", 1) for line in self.lines())
        return f"+{len(self.added)} -{len(self.removed)} ~{len(self.moved)}"

    def to_json(self) -> dict[str, Any]:
        return {"added": [{"name": n, "version": v} for n, v in self.added],
                "removed": [{"name": n, "version": v} for n, v in self.removed],
                "moved": [{"name": n, "from": old, "to": new} for n, old, new in self.moved]}


class UnknownGeneration(PmError):
    """A name that is no complete generation of the home: ``why`` is ``unknown`` (no id starts
    so), ``ambiguous`` (several do: ``matches``), ``incomplete`` (an interrupted build's folder) or
    ``unset`` (an alias ``state.json`` names nothing for); ``known`` lists the complete ones."""

    kind = "unknown-generation"

    def __init__(self, asked: str, why: str, known: tuple[str, ...], matches: tuple[str, ...] = ()) -> None:
        self.asked, self.why, self.known, self.matches = asked, why, known, matches
        super().__init__(unknown_message(self))


def unknown_message(error: UnknownGeneration) -> str:
    """The sentence for :class:`UnknownGeneration`."""
    asked = error.asked
    lead = {
        "unknown": f"no generation is called {asked!r}",
        "ambiguous": f"{asked!r} begins the id of more than one generation ({', '.join(error.matches)}); "
                     "give more of it",
        "incomplete": f"generation {asked} is incomplete (an interrupted build left it without its "
                      f"{generations.GENERATION_FILE})",
        "unset": "there is no previous generation" if asked == "previous" else "no generation is selected",
    }[error.why]
    known = ", ".join(error.known) if error.known else "none yet (run `hermes pm sync`)"
    return f"{lead}; the generations are: {known}" if error.why != "ambiguous" else lead


@dataclass(frozen=True)
class Entry:
    """One generation as ``hermes pm generations`` lists it."""

    generation: Generation
    role: str | None  # "selected", "previous" or None
    changes: Changes | None  # from the generation listed before it; None for the oldest
    problems: tuple[str, ...] = ()  # why it is not intact (empty when it is)

    def to_json(self) -> dict[str, Any]:
        found = self.generation
        selection = found.selection
        return {"id": found.id, "created_at": found.created_at, "role": self.role,
                "selected": self.role == "selected", "packages": len(found.pins),
                "selection": None if selection is None else [
                    {**home.to_json(), "selects": list(home.selects())} for home in selection],
                "changes": None if self.changes is None else self.changes.to_json(),
                "intact": not self.problems, "problems": list(self.problems), "path": str(found.path)}


def entries(home: Path, *, watch: Watch = UNWATCHED) -> tuple[list[Entry], list[str]]:
    """Every complete generation of ``home``, oldest first, and the ids of incomplete folders."""
    state = generations.read_state(home, watch=watch)
    listed: list[Entry] = []
    incomplete: list[str] = []
    before: Generation | None = None
    for gid in generations.all_ids(home, watch=watch):
        found = generations.load(home, gid, watch=watch)
        if found is None:
            incomplete.append(gid)
            continue
        role = next((r for r in ALIASES if state.get(r) == gid), None)
        changes = None if before is None else Changes.between(before.pins, found.pins)
        listed.append(Entry(found, role, changes, tuple(found.problems(watch=watch))))
        before = found
    return listed, incomplete


def find(home: Path, asked: str, *, watch: Watch = UNWATCHED) -> Generation:
    """The complete generation ``asked`` names (an id, a prefix only one id has, ``selected`` or
    ``previous``); raises :class:`UnknownGeneration`."""
    ids = generations.all_ids(home, watch=watch)
    complete = tuple(gid for gid in ids if generations.is_complete(home, gid, watch=watch))
    gid: str | None = asked
    if asked in ALIASES and asked not in ids:
        gid = generations.read_state(home, watch=watch).get(asked)
        if not isinstance(gid, str):
            raise UnknownGeneration(asked, "unset", complete)
    elif asked not in ids:
        matches = tuple(i for i in ids if asked and i.startswith(asked))
        if len(matches) > 1:
            raise UnknownGeneration(asked, "ambiguous", complete, matches)
        gid = matches[0] if matches else None
    found = generations.load(home, gid, watch=watch) if gid else None
    if found is None:
        raise UnknownGeneration(gid or asked, "incomplete" if gid in ids else "unknown", complete)
    return found
