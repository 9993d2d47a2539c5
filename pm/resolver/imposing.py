"""The operator's constraints and overrides, applied where the resolver builds requirements.

Both are uv's (:mod:`pm.inputs.overrides`): an **override** takes the place of every requirement
on its project, before that requirement's marker is looked at (the override's own marker
decides; an optional dependency keeps its extra, so an override never turns an extra on), in
the root requirements (core's requirements and lock, every plugin's) and in every candidate's
Requires-Dist. A **constraint** is added beside each requirement on its project, never alone:
it restricts versions and adds no package. Constraints bind overridden requirements too.

Which requirement an override replaced is kept as a :class:`Replacement` (who stated it and
what), for the receipt.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from pm.inputs.overrides import by_project
from pm.inputs.union import Origin, Union
from pm.resolver.model import CONSTRAINT_NOTE, OVERRIDE_NOTE, Req

#: ``extra == "name"`` as a marker's own clause (uv's "top-level extra": the whole marker, or one
#: term of its top-level ``and``).
_EXTRA = re.compile(r"""^extra\s*==\s*['"]([^'"]+)['"]$""")


@dataclass(frozen=True)
class Replacement:
    """An override in the place of one requirement: the requirement's text and who stated it
    (a root origin, or ``package``, the "name version" whose Requires-Dist it is)."""

    override: str
    requirement: str
    origin: Origin | None = None
    package: str | None = None
    locked: bool = False  # core's lock pin

    def to_json(self) -> dict[str, Any]:
        who: dict[str, Any] = ({"origin": self.origin.to_json(), "origin_text": str(self.origin)}
                               if self.origin is not None else {"package": self.package})
        return {"override": self.override, "requirement": self.requirement, **who, "locked": self.locked}


class Imposing:
    """The constraints and overrides of one union, by project."""

    def __init__(self, union: Union) -> None:
        self.overrides = by_project(union.overrides)
        self.constraints = by_project(union.constraints)
        self._with_extra: dict[tuple[int, str], Requirement] = {}
        self._ids = {id(r) for reqs in self.overrides.values() for r in reqs}  # and those made for an extra

    def __bool__(self) -> bool:
        return bool(self.overrides or self.constraints)

    def overriding(self, requirement: Requirement) -> list[Requirement] | None:
        """The overrides in ``requirement``'s place (their markers still to be evaluated), None
        when no override names its project."""
        found = self.overrides.get(canonicalize_name(requirement.name))
        if found is None:
            return None
        extra = top_level_extra(requirement.marker)
        return list(found) if extra is None else [self._optional(o, extra) for o in found]

    def _optional(self, override: Requirement, extra: str) -> Requirement:
        key = (id(override), extra)
        made = self._with_extra.get(key)
        if made is None:
            made = Requirement(str(override).split(";")[0].strip())
            marker = f'extra == "{extra}"' + (f" and ({override.marker})" if override.marker is not None else "")
            made.marker = Marker(marker)
            self._with_extra[key] = made
            self._ids.add(id(made))
        return made

    def note(self, requirement: Requirement) -> str:
        """What a requirement's text says after it when it is an override (" (override)"): a
        conflict or a pin's parents then tell the operator's requirement from its origin's."""
        return OVERRIDE_NOTE if id(requirement) in self._ids else ""

    def constrain(self, reqs: Iterable[Req], holds: Callable[[Marker], bool]) -> list[Req]:
        """One constraint :class:`Req` per constraint (whose marker holds) and per project key of
        ``reqs`` it names, beside the requirement it binds (same origins and parent)."""
        found: dict[tuple[str, int], Req] = {}
        for req in reqs:
            for constraint in self.constraints.get(req.name, ()):
                if (req.key, id(constraint)) in found or (constraint.marker is not None and not holds(constraint.marker)):
                    continue
                text = str(constraint).split(";")[0].strip()
                found[(req.key, id(constraint))] = Req(req.name, constraint.specifier, req.extras,
                                                       f"{text}{CONSTRAINT_NOTE}", req.origins, req.parent)
        return list(found.values())


def top_level_extra(marker: Marker | None) -> str | None:
    """The extra an optional dependency's marker names in its own clause, else None."""
    if marker is None or "extra" not in str(marker):
        return None
    for term in _top_level_terms(str(marker)):
        match = _EXTRA.match(term.strip().strip("()").strip())
        if match:
            return canonicalize_name(match.group(1))
    return None


def _top_level_terms(text: str) -> list[str]:
    """``text`` split at its top-level ``and``s (outside parentheses and quotes)."""
    terms, depth, quote, start, at = [], 0, "", 0, 0
    while at < len(text):
        char = text[at]
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "()":
            depth += 1 if char == "(" else -1
        elif depth == 0 and text.startswith(" and ", at):
            terms.append(text[start:at])
            start = at = at + 5
            continue
        at += 1
    return [*terms, text[start:]]


def root_replacements(union: Union, environment: dict[str, str]) -> list[Replacement]:
    """What the overrides replaced among the root requirements: core's lock pins and every
    requirement of the union (whose marker held, or not: an override takes its place either way)."""
    imposing = Imposing(union)
    if not imposing.overrides:
        return []
    stated = [(f"{name}=={version}", Origin.core(), True) for name, version in union.core.lock]
    stated += [(str(t.requirement), t.origin, False) for t in union.requirements]
    found = []
    for text, origin, locked in stated:
        for override in imposing.overrides.get(canonicalize_name(Requirement(text).name), ()):
            found.append(Replacement(str(override), text, origin=origin, locked=locked))
    return list(dict.fromkeys(found))
