"""The operator's constraints and overrides (``pm.constraints``, ``pm.overrides``), read at the boundary.

A **constraint** binds every resolution as uv's ``--constraint`` does: it never adds a package;
it only restricts the versions of a project that something else requires. An **override**
replaces every requirement on its project, from any origin (core's requirements and its lock,
plugins, and every package's Requires-Dist), as uv's ``--override`` / ``override-dependencies``
does: several overrides on one project all take its place (each under its own marker, an
optional dependency's extra kept); an override whose marker does not hold leaves nothing in the
requirement's place; and an override on a project no one requires adds nothing.

Each setting is taken whole from the first place that gives it, as every setting is: the flags
(``--constraint FILE`` / ``--override FILE``, repeatable; requirement lines, ``#`` comments) >
``$HERMES_PM_CONSTRAINTS`` / ``$HERMES_PM_OVERRIDES`` (requirement lines) > ``config.yaml``
``pm.constraints`` / ``pm.overrides`` (lists of PEP 508 requirements) > none. Every bad value is
an error naming its file and key (or line, or variable).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import NormalizedName, canonicalize_name

from pm.base.errors import InputError, Problem, UsageError, quote
from pm.base.watch import UNWATCHED, Watch

#: (setting, flag, variable) of each kind.
KINDS = {"constraints": ("--constraint", "HERMES_PM_CONSTRAINTS"), "overrides": ("--override", "HERMES_PM_OVERRIDES")}


@dataclass(frozen=True)
class Imposed:
    """One constraint or override: the requirement and where it was written (file and key or
    line, a flag's file and line, or the variable)."""

    requirement: Requirement
    source: str

    @property
    def name(self) -> NormalizedName:
        return canonicalize_name(self.requirement.name)

    def __str__(self) -> str:
        return str(self.requirement)

    def to_json(self) -> dict[str, Any]:
        return {"requirement": str(self.requirement), "source": self.source}


def problem(kind: str, text: Any) -> str | None:
    """Why ``text`` cannot be a constraint or override (``kind``), None when it can."""
    if not isinstance(text, str) or not text.strip():
        return f"must be a PEP 508 requirement, got {quote(text)}"
    try:
        requirement = Requirement(text)
    except InvalidRequirement as exc:
        return f"{quote(text)} is not a PEP 508 requirement: {exc}"
    if requirement.url:
        return f"{quote(text)} is a direct URL requirement; pm installs from indexes only (give a version range)"
    if kind == "constraints" and requirement.extras:
        return f"{quote(text)}: a constraint restricts versions only; extras add nothing (drop [{','.join(sorted(requirement.extras))}])"
    return None


def config_problems(path: Path, kind: str, value: Sequence[Any]) -> list[Problem]:
    """Every entry of ``pm.<kind>`` in ``path`` that is not a usable requirement, each by index."""
    return [Problem(path, f"pm.{kind}[{i}]", said) for i, text in enumerate(value)
            if (said := problem(kind, text)) is not None]


def choose_imposed(kind: str, files: Sequence[str], env: Mapping[str, str], config: Mapping[str, Any],
                   config_file: Path, base: Path, *, watch: Watch = UNWATCHED) -> tuple[Imposed, ...]:
    """The ``kind`` ("constraints" or "overrides") of one operation, from the first place that
    gives it (module docstring). ``files`` are the flag's paths (relative to ``base``); config's
    entries were checked when config.yaml was read."""
    flag, variable = KINDS[kind]
    if files:
        return tuple(item for given in files for item in _from_file(kind, flag, base / Path(given).expanduser(),
                                                                    watch))
    if env.get(variable, "").strip():
        return tuple(Imposed(r, f"${variable} line {n}") for n, r in _lines(kind, env[variable], variable))
    return tuple(Imposed(Requirement(text), f"{config_file} pm.{kind}[{i}]")
                 for i, text in enumerate(config.get(kind) or ()))


def _from_file(kind: str, flag: str, path: Path, watch: Watch) -> list[Imposed]:
    from pm.base.files import read_text

    try:
        text = read_text(path.absolute(), watch=watch).text
    except InputError as exc:
        raise UsageError(f"{flag} {path}: {exc}") from None
    return [Imposed(r, f"{path}:{n}") for n, r in _lines(kind, text, f"{flag} {path}")]


def _lines(kind: str, text: str, where: str) -> Iterable[tuple[int, Requirement]]:
    """(line number, requirement) of each requirement line; blank lines and ``#`` comments are
    skipped; every bad line is told at once, each by number."""
    found, bad = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        said = (f"{quote(line)}: options are not read here, only requirement lines" if line.startswith("-")
                else problem(kind, line))
        if said is None:
            found.append((number, Requirement(line)))
        else:
            bad.append(f"line {number}: {said}")
    if bad:
        raise UsageError(f"{where}: " + "; ".join(bad))
    return found


def by_project(items: Iterable[Imposed]) -> dict[NormalizedName, tuple[Requirement, ...]]:
    """project -> its requirements, in the order given (what the resolver applies)."""
    found: dict[NormalizedName, list[Requirement]] = {}
    for item in items:
        found.setdefault(item.name, []).append(item.requirement)
    return {name: tuple(reqs) for name, reqs in found.items()}
