"""The values the resolver works on: requirements with origins, candidates, policy, results.

All immutable. A :class:`Req` remembers the root origins it descends from and the candidate that
asked for it, so a conflict can be told in plugin words without re-running anything.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import Version

#: A project name as PEP 508 allows it (already normalized pins are lower case with dashes).
_NAME = re.compile(r"[a-z0-9]([a-z0-9._-]*[a-z0-9])?")
_SHA256 = re.compile(r"[0-9a-f]{64}")

from pm.index.base import FileLink, Metadata
from pm.inputs.settings import redact_url
from pm.inputs.target import Target
from pm.inputs.union import Origin, Union
from pm.resolver.preferences import NO_UPGRADE, Preferences, Upgrade

if TYPE_CHECKING:
    from pm.resolver.imposing import Replacement

#: The identifier of the pseudo-package standing for the target interpreter (Requires-Python).
PYTHON = NormalizedName("<python>")


#: What a requirement's text says after it when the operator's settings made it
#: (:mod:`.imposing`): an override in the place of a stated requirement, a constraint beside one.
OVERRIDE_NOTE = " (override)"
CONSTRAINT_NOTE = " (constraint)"


def stated(text: str) -> str:
    """A requirement's text (a :class:`Req`'s, a :class:`Parent`'s) without the operator's note:
    the PEP 508 requirement itself, as packaging parses it."""
    return text.removesuffix(OVERRIDE_NOTE).removesuffix(CONSTRAINT_NOTE)


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
        *, locked: bool = False, note: str = "",
    ) -> Req:
        extras = frozenset(canonicalize_name(e) for e in requirement.extras)
        text = str(requirement).split(";")[0].strip() + note
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
    """Resolution policy settings (docs/design.md, "Resolution policy settings")."""

    allow_prereleases: bool = False
    exclude_newer: datetime | None = None
    allow_builds: frozenset[NormalizedName] = frozenset()
    #: Versions tried first (the selected generation's pins; :mod:`.preferences`): never a verdict.
    preferences: Preferences = field(default_factory=Preferences)
    #: Pins freed from their preference (``--upgrade``, ``--upgrade-package``, ``hermes update``).
    upgrade: Upgrade = NO_UPGRADE


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
class Move:
    """A preferred version the resolution did not keep (:mod:`.moves`): ``package`` was at
    ``before`` and is now at ``after`` (None: no longer needed), for ``reason`` — ``required`` (a
    requirement of the resolution excludes ``before``: ``because``), ``dependency`` (``before``
    itself requires what the resolution cannot meet: ``because``, stated by that old version),
    ``not-offered`` (no usable file of ``before`` on the index any more: ``detail`` says why),
    ``upgrade`` (freed by an upgrade), ``unused`` (nothing requires it now) or ``other`` (the
    resolver settled elsewhere to keep the rest)."""

    package: NormalizedName
    before: Version
    after: Version | None
    reason: str
    because: Parent | None = None
    detail: str | None = None


@dataclass(frozen=True)
class Unverified:
    """What a resolution read of a file's core metadata when no hash vouched for it (by range
    requests): the build compares the installed wheel with it (:mod:`pm.records.recheck`). Kept as the
    normalized text of each requirement, so a stored resolution is reused without parsing."""

    requires_dist: tuple[str, ...]
    requires_python: str

    @classmethod
    def of(cls, metadata: Metadata) -> Unverified:
        return cls(tuple(sorted(str(r) for r in metadata.requires_dist)), str(metadata.requires_python or ""))


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
    unverified: Unverified | None = field(default=None, compare=False)

    def defects(self) -> list[str]:
        """Why this pin must not reach an installer (empty when it may). A pin is data from a
        resolution, a receipt or anyone's lock, and the installer reads it as a line of text: each
        field must be what it says — a project name, a 64-hex sha256, an http(s) or file URL
        without whitespace or control characters that ends in the file's own name, and a file
        whose name names this project at this version."""
        found = []
        if not _NAME.fullmatch(self.name) or canonicalize_name(self.name) != self.name:
            found.append(f"name {self.name!r} is not a normalized project name")
        if not _SHA256.fullmatch(self.link.sha256 or ""):
            found.append(f"needs a sha256 of 64 hex digits, got {self.link.sha256!r}")
        url = self.link.url
        shown = redact_url(url)
        if any(c.isspace() or not c.isprintable() for c in url):
            found.append(f"url {shown!r} holds whitespace or control characters")
        else:
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https", "file"):
                found.append(f"url {shown!r} is not http(s) or file")
            elif unquote(parts.path).rpartition("/")[2] != self.link.filename:
                found.append(f"url {shown!r} does not end in the file's name {self.link.filename!r}")
        if (self.link.name, self.link.version) != (self.name, self.version):
            found.append(f"file {self.link.filename!r} is not {self.name} {self.version}")
        if self.link.size is not None and (not isinstance(self.link.size, int) or self.link.size < 0):
            found.append(f"size {self.link.size!r} is not a number of bytes")
        return found


@dataclass(frozen=True)
class Resolution:
    pins: tuple[Pin, ...]
    warnings: tuple[str, ...] = ()
    #: What the operator's overrides replaced: root requirements, and the Requires-Dist of pins.
    replaced: tuple[Replacement, ...] = ()
    #: The preferences it did not keep, and why (empty without preferences).
    moves: tuple[Move, ...] = ()

    def by_name(self) -> dict[NormalizedName, Pin]:
        return {p.name: p for p in self.pins}


def root_requirements(union: Union, target: Target) -> list[Req]:
    """Core's lock as exact pins, then every requirement of the union whose marker applies; the
    operator's overrides in the place of those on their projects, and constraints beside them
    (:mod:`pm.resolver.imposing`)."""
    from pm.resolver.imposing import Imposing

    environment = {**target.environment, "extra": ""}
    imposing = Imposing(union)
    roots = []
    for name, version in union.core.lock:
        pin = Requirement(f"{name}=={version}")
        overrides = imposing.overriding(pin)
        if overrides is None:
            roots.append(Req.from_requirement(pin, frozenset({Origin.core()}), locked=True))
        else:
            roots += _applying(overrides, frozenset({Origin.core()}), environment, imposing.note)
    for tagged in union.requirements:
        requirement = tagged.requirement
        roots += _applying(imposing.overriding(requirement) or [requirement], frozenset({tagged.origin}), environment,
                           imposing.note)
    if imposing.constraints:
        roots += imposing.constrain(roots, lambda marker: marker.evaluate(environment))
    return roots


def _applying(requirements: list[Requirement], origins: frozenset[Origin], environment: dict[str, str],
              note: Callable[[Requirement], str]) -> list[Req]:
    return [Req.from_requirement(r, origins, note=note(r)) for r in requirements
            if r.marker is None or r.marker.evaluate(environment)]


def unmet_roots(roots: list[Req], pins: tuple[Pin, ...] | list[Pin], where: str) -> list[str]:
    """The root requirements ``pins`` (those of ``where``, a file's name) do not meet, in words
    ("core locks a==1.0, but pylock.toml pins a 2.0"): a project not pinned at all, or pinned at
    a version outside the specifier."""
    pinned = {pin.name: pin.version for pin in pins}
    found = []
    for req in roots:
        if req.name == PYTHON:
            continue
        who = "core" if any(o.is_core for o in req.origins) else " and ".join(sorted(map(str, req.origins)))
        verb = "locks" if req.locked else "requires"
        version = pinned.get(req.name)
        if version is None:
            found.append(f"{who} {verb} {req.text}, but {where} pins no {req.name}")
        elif not req.specifier.contains(version, prereleases=True):
            found.append(f"{who} {verb} {req.text}, but {where} pins {req.name} {version}")
    return list(dict.fromkeys(found))
