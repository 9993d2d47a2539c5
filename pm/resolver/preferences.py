"""Preferences and upgrades: which versions a resolution tries first, and which pins may move freely.

A :class:`Preferences` is the pins of the home's selected generation (``uv pip compile -o
previous.txt`` reads its output file the same way). The provider offers a preferred version first
wherever every requirement on its project allows it and a file of it is usable on the target;
otherwise the newest first, as without one. A preference never changes a verdict: it only
reorders the candidates, so a satisfiable union stays satisfiable and a conflict stays one.

An :class:`Upgrade` frees pins from their preference, as uv's flags do: ``--upgrade`` frees every
pin, ``--upgrade-package NAME`` frees NAME's only (its dependencies keep theirs, unless the new
NAME needs them to move). ``hermes update`` resolves as ``--upgrade``. Light on purpose (no
resolvelib): every operation's options carry an Upgrade.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import InvalidVersion, Version


@dataclass(frozen=True)
class Upgrade:
    """Which pins may move freely: every one (``everything``: ``--upgrade``), the named
    ``packages`` (``--upgrade-package NAME``, canonical names), or none (the default)."""

    everything: bool = False
    packages: frozenset[NormalizedName] = frozenset()

    @classmethod
    def of(cls, everything: bool = False, packages: Iterable[str] = ()) -> Upgrade:
        return cls(bool(everything), frozenset(canonicalize_name(p) for p in packages))

    @property
    def asked(self) -> bool:
        return self.everything or bool(self.packages)

    def frees(self, name: str) -> bool:
        """Whether ``name``'s pin may move without a requirement moving it."""
        return self.everything or canonicalize_name(name) in self.packages

    def to_json(self) -> dict[str, object] | None:
        """What a receipt records (None when nothing was asked)."""
        if not self.asked:
            return None
        return {"all": self.everything, "packages": sorted(self.packages)}

    def flags(self) -> list[str]:
        """The command-line flags that ask for this upgrade."""
        if self.everything:
            return ["--upgrade"]
        return [part for name in sorted(self.packages) for part in ("--upgrade-package", name)]


NO_UPGRADE = Upgrade()
EVERYTHING = Upgrade(everything=True)


@dataclass(frozen=True)
class Preferences:
    """Versions to try first, by canonical project name (sorted, so equal sets compare equal)."""

    pins: tuple[tuple[NormalizedName, Version], ...] = ()

    @classmethod
    def from_pins(cls, pins: Mapping[str, str | Version]) -> Preferences:
        """From ``name -> version`` (a generation's pins); unparsable versions are left out."""
        found: dict[NormalizedName, Version] = {}
        for name, version in pins.items():
            try:
                found[canonicalize_name(name)] = version if isinstance(version, Version) else Version(str(version))
            except InvalidVersion:
                continue
        return cls(tuple(sorted(found.items())))

    def kept(self, upgrade: Upgrade) -> dict[NormalizedName, Version]:
        """The preferences ``upgrade`` leaves in force, by name."""
        return {name: version for name, version in self.pins if not upgrade.frees(name)}

    def key(self, upgrade: Upgrade) -> list[object]:
        """What a stored resolution made with these preferences under ``upgrade`` is keyed by:
        every pin (a freed one still decides whether a move is told as an upgrade) and the upgrade."""
        return [[f"{name}=={version}" for name, version in self.pins], upgrade.to_json()]
