"""Who holds a pin back: for a pin that an upgrade cannot move to the newest release, each
requirement that keeps it below (the **holders** ``hermes pm outdated`` prints).

Read from the upgrade resolution's own data, never from trial resolutions:

1. The requirements the resolution's pins state on the package (``Pin.parents``: core, a
   plugin's declaration, or another pin at its pinned version) that exclude the newest release.
2. When none does, the newest release is kept out by a requirement of its own: its metadata (one
   read, as the resolver reads it) is set against the resolution's pins. A dependency pinned
   outside what the newest release needs is held by the requirements on that pin that exclude
   every release it would take (``via`` says which requirement of the newest release led
   there); a dependency no release satisfies, or a Requires-Python the target does not meet,
   is the holder itself; a dependency not pinned at all is followed the same way, two links
   deep at most.

What is offered is judged as the resolver judges files (:class:`Releases`: wheel tags,
Requires-Python, yanks, pre-releases, exclude-newer), through the provider's own views.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import Version

from pm.index.base import FileLink, MetadataUnavailable
from pm.inputs.union import Origin
from pm.resolver.model import Parent, Pin, Req, stated

if TYPE_CHECKING:
    from pm.resolver.provider import Provider

#: What a holder is: ``requires`` (a requirement on the package itself), ``dependency`` (a
#: requirement on a dependency of the newest release, reached ``via`` it), ``python`` (the newest
#: release, or a release it needs, requires another Python than the target's), ``unavailable``
#: (the newest release needs something no release on the sources satisfies for the target).
KINDS = ("requires", "dependency", "python", "unavailable")
#: How many links below the newest release a dependency that is not pinned is followed.
_DEPTH = 2


@dataclass(frozen=True)
class Holder:
    """One requirement that keeps a pin below the newest release: its ``requirement`` text, who
    states it (an ``origin``, core or a plugin's declaration file, for a root requirement; the
    ``package`` as ``"name version"`` for a pin's), whether it is core's lock (``locked``), and
    for a holder reached through the newest release's own requirements, that chain (``via``,
    each ``"name version requires text"``)."""

    kind: str
    requirement: str
    origin: Origin | None = None
    package: str | None = None
    locked: bool = False
    via: tuple[str, ...] = ()

    @classmethod
    def of(cls, parent: Parent, kind: str = "requires", via: tuple[str, ...] = ()) -> Holder:
        return cls(kind, parent.requirement, parent.origin, parent.package, parent.locked, via)

    def describe(self, home: Path | None = None) -> str:
        """``plugin 'notes' (plugins/notes/pyproject.toml) requires lib<2``, ``core locks
        lib==1.0``, ``app 2.0 requires lib<2``; a declaration file under ``home`` relative to it;
        a holder reached through the newest release's own requirements, with that chain after."""
        if self.kind == "python":
            said = f"{self.package} requires {self.requirement}, not the target's"
        elif self.kind == "unavailable":
            said = f"{self.package} requires {self.requirement}, which no release for the target satisfies"
        elif self.locked:
            said = f"core locks {self.requirement}"
        elif self.origin is not None:
            said = f"{_origin_text(self.origin, home)} requires {self.requirement}"
        else:
            said = f"{self.package} requires {self.requirement}"
        return said + (f" (newest: {'; '.join(self.via)})" if self.via else "")

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "requirement": self.requirement,
                "origin": self.origin.to_json() if self.origin is not None else None,
                "package": self.package, "locked": self.locked, "via": list(self.via)}


def _origin_text(origin: Origin, home: Path | None) -> str:
    if origin.plugin is None:
        return "core"
    if not origin.file:
        return f"plugin {origin.plugin!r}"
    file = Path(origin.file)
    shown = file.relative_to(home) if home is not None and file.is_relative_to(home) else file
    return f"plugin {origin.plugin!r} ({shown})"


class Releases:
    """What the sources offer the target, judged by a :class:`Provider` (not resolving: only its
    views of pages and metadata, memoised for the whole report)."""

    def __init__(self, provider: Provider) -> None:
        self.provider = provider

    def matching(self, name: NormalizedName, specifier: SpecifierSet) -> list[tuple[Version, FileLink]]:
        """(version, best file) of each release allowed by ``specifier``, newest first: a file
        usable on the target, not yanked, no pre-release unless the policy, the specifier or the
        lack of anything else allows it (PEP 440), nothing after exclude-newer."""
        return self.provider.best_files(name, [Req(name, specifier, frozenset(), f"{name}{specifier}", frozenset())])

    def newest(self, name: NormalizedName, *, since: Version | None = None) -> tuple[Version, FileLink] | None:
        """The newest release for the target; pre-releases count when ``since`` (the pinned
        version) is one, as a requirement naming a pre-release allows them."""
        specifier = SpecifierSet(f">={since}" if since is not None and since.is_prerelease else "")
        found = self.matching(name, specifier)
        if not found and specifier:
            found = self.matching(name, SpecifierSet())
        return found[0] if found else None

    def requirements(self, link: FileLink, extras: Iterable[str]) -> tuple[SpecifierSet | None, list[Requirement]] | None:
        """The Requires-Python and the requirements (markers holding on the target) of a release;
        None when its metadata is known only by building it."""
        try:
            metadata = self.provider.metadata(link)
        except MetadataUnavailable:
            return None
        return metadata.requires_python, self.provider.applying(metadata, extras)

    def fits_python(self, specifier: SpecifierSet) -> bool:
        return specifier.contains(self.provider.python_version, prereleases=True)


def direct(pin: Pin, newest: Version) -> tuple[Holder, ...]:
    """The requirements the upgrade resolution's pins state on ``pin`` that exclude ``newest``
    (module docstring, 1)."""
    return tuple(dict.fromkeys(Holder.of(p) for p in pin.parents if excludes(p.requirement, newest)))


def holders(pin: Pin, newest: tuple[Version, FileLink], pins: dict[NormalizedName, Pin],
            releases: Releases) -> tuple[Holder, ...]:
    """Who keeps ``pin`` (of the upgrade resolution, whose pins are ``pins``) below ``newest``:
    :func:`direct`, else those behind the newest release's own requirements (module docstring, 2)."""
    version, link = newest
    return direct(pin, version) or tuple(dict.fromkeys(
        _through(pin.name, version, link, pin.extras, pins, releases, (), 0)))


def excludes(requirement: str, version: Version) -> bool:
    """Whether a requirement's text (``lib<2``, ``lib[x]==1.0``) rules ``version`` out."""
    try:
        specifier = Requirement(stated(requirement)).specifier
    except InvalidRequirement:
        return False
    return not specifier.contains(version, prereleases=True)


def _through(name: NormalizedName, version: Version, link: FileLink, extras: Iterable[str],
             pins: dict[NormalizedName, Pin], releases: Releases, via: tuple[str, ...],
             depth: int) -> list[Holder]:
    """The holders behind release ``name version``'s own requirements (module docstring, 2)."""
    stated = releases.requirements(link, extras)
    if stated is None:
        return []
    requires_python, requirements = stated
    release = f"{name} {version}"
    if requires_python is not None and not releases.fits_python(requires_python):
        return [Holder("python", f"Python {requires_python}", package=release, via=via)]
    found: list[Holder] = []
    for requirement in requirements:
        dependency = canonicalize_name(requirement.name)
        pinned = pins.get(dependency)
        if pinned is not None and requirement.specifier.contains(pinned.version, prereleases=True):
            continue
        text = str(requirement).split(";")[0].strip()
        offered = releases.matching(dependency, requirement.specifier)
        if not offered:
            found.append(Holder("unavailable", text, package=release, via=via))
        elif pinned is not None:
            found += _blocking(pinned, [v for v, _ in offered], (*via, f"{release} requires {text}"))
        elif depth < _DEPTH:
            best, best_link = offered[0]
            found += _through(dependency, best, best_link, requirement.extras, pins, releases,
                              (*via, f"{release} requires {text}"), depth + 1)
    return found


def _blocking(pinned: Pin, wanted: Sequence[Version], via: tuple[str, ...]) -> list[Holder]:
    """The requirements on ``pinned`` that rule out every version in ``wanted`` (else those that
    rule out the newest of them: together they exclude the rest)."""
    every = [p for p in pinned.parents if all(excludes(p.requirement, v) for v in wanted)]
    chosen = every or [p for p in pinned.parents if excludes(p.requirement, wanted[0])]
    return [Holder.of(p, "dependency", via) for p in chosen]
