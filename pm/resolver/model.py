"""The values the resolver works on: requirements with origins, candidates, policy, results.

All immutable. A :class:`Req` remembers the root origins it descends from and the candidate that
asked for it, so a conflict can be told in plugin words without re-running anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import Version

from ..index.base import FileLink, Metadata
from ..union import Origin

#: The identifier of the pseudo-package standing for the target interpreter (Requires-Python).
PYTHON = NormalizedName("<python>")


def make_key(name: str, extras: frozenset[str] = frozenset()) -> str:
    """The identifier resolvelib sees: canonical name, plus sorted extras in brackets."""
    return f"{name}[{','.join(sorted(extras))}]" if extras else name


@dataclass(frozen=True, eq=False)
class Req:
    """One requirement as the resolver holds it."""

    name: NormalizedName
    specifier: SpecifierSet
    extras: frozenset[NormalizedName]
    text: str  # as declared, e.g. "sharedlib>=2" or "Requires-Python >=3.12"
    origins: frozenset[Origin]
    parent: Candidate | None = None
    locked: bool = False  # a pin from core's lock

    @property
    def key(self) -> str:
        return make_key(self.name, self.extras)

    @classmethod
    def from_requirement(
        cls, requirement: Requirement, origins: frozenset[Origin], parent: Candidate | None = None,
        *, locked: bool = False,
    ) -> Req:
        extras = frozenset(canonicalize_name(e) for e in requirement.extras)
        text = str(requirement).split(";")[0].strip()
        return cls(canonicalize_name(requirement.name), requirement.specifier, extras, text, origins, parent, locked)

    @property
    def is_exact_pin(self) -> bool:
        return any(s.operator in ("==", "===") and not s.version.endswith(".*") for s in self.specifier)

    def __repr__(self) -> str:
        return f"Req({self.text!r})"


@dataclass(frozen=True, eq=False)
class Candidate:
    """One version of one project (with extras), backed by one file."""

    name: NormalizedName
    version: Version
    extras: frozenset[NormalizedName]
    link: FileLink | None  # None only for the target interpreter pseudo-candidate
    origins: frozenset[Origin] = frozenset()

    @property
    def key(self) -> str:
        return make_key(self.name, self.extras)

    def __str__(self) -> str:
        return f"{self.key} {self.version}"

    def __repr__(self) -> str:
        return f"Candidate({self.key}=={self.version})"


@dataclass(frozen=True)
class Policy:
    """Resolution policy settings (DESIGN.md, "Resolution policy settings")."""

    allow_prereleases: bool = False
    exclude_newer: datetime | None = None
    allow_builds: frozenset[NormalizedName] = frozenset()


@dataclass(frozen=True)
class Parent:
    """Who asked for a pinned package directly: an origin (root) or another pin."""

    requirement: str
    origin: Origin | None = None  # set for root requirements
    package: str | None = None  # "name version" for a transitive requirement
    locked: bool = False  # a pin from core's lock

    def __str__(self) -> str:
        if self.locked:
            return f"core locks {self.requirement}"
        return f"{self.origin} requires {self.requirement}" if self.origin else f"{self.package} requires {self.requirement}"


@dataclass(frozen=True)
class Pin:
    """One resolved package."""

    name: NormalizedName
    version: Version
    link: FileLink
    extras: frozenset[NormalizedName] = frozenset()
    required_by: tuple[Origin, ...] = ()
    parents: tuple[Parent, ...] = ()
    dependencies: tuple[NormalizedName, ...] = field(default=())
    #: The core metadata the resolution used, kept when no hash vouched for it (read by range
    #: requests): the build checks the installed wheel's Requires-Dist/Requires-Python against it.
    unverified: Metadata | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Resolution:
    pins: tuple[Pin, ...]
    warnings: tuple[str, ...] = ()

    def by_name(self) -> dict[NormalizedName, Pin]:
        return {p.name: p for p in self.pins}
