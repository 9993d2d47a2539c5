"""Which versions of a project a specifier allows, and whether a marker holds on the target,
worked out once per resolution.

resolvelib asks the same questions many times: on every pin it checks each requirement against
each current pin (``is_satisfied_by``), and every new combination of requirements on a project
filters all of its versions again (``find_matches``), though most of those requirements were seen
before. Here a verdict is computed once per (project, specifier set, version), and the versions a
specifier set allows once per (project, specifier set); a combination is then the smallest of its
members' allowed lists filtered by the others' sets.

Verdicts are ``SpecifierSet.contains(version, prereleases=True)`` (pre-releases are the
provider's rule to apply, not the specifier's). They are keyed by the project too: within one
project each version appears once, whatever its spelling, so a spelling-sensitive ``===`` cannot
meet two spellings of one version under one key. Safe to share between the resolver's and the
look-ahead's threads: a race only computes the same answer twice.

Markers: Requires-Dist lines are parsed once per process and shared (:mod:`pm.index._metadata`),
so the versions of a project mostly hand over the very same marker objects; a marker's verdict is
remembered per object and extra (the entry holds the marker, so its id is never reused meanwhile).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from packaging.markers import Marker
from packaging.specifiers import SpecifierSet
from packaging.version import Version


class Allowed:
    """Remembered specifier verdicts of one resolution (see the module docstring)."""

    def __init__(self) -> None:
        self._verdicts: dict[tuple[str, SpecifierSet], dict[Version, bool]] = {}
        self._lists: dict[tuple[str, SpecifierSet], tuple[tuple[Version, ...], frozenset[Version]]] = {}

    def contains(self, name: str, specifier: SpecifierSet, version: Version) -> bool:
        """Whether ``specifier`` allows ``version`` of project ``name`` (pre-releases included)."""
        key = (name, specifier)
        verdicts = self._verdicts.get(key)
        if verdicts is None:
            verdicts = self._verdicts[key] = {}
        found = verdicts.get(version)
        if found is None:
            found = verdicts[version] = specifier.contains(version, prereleases=True)
        return found

    def versions(self, name: str, versions: tuple[Version, ...],
                 specifiers: Sequence[SpecifierSet]) -> list[Version]:
        """Those of ``versions`` (project ``name``'s, in its order) that every one of
        ``specifiers`` allows, in that order. ``versions`` must be the same for a name."""
        if not specifiers:
            return list(versions)
        allowed = sorted((self._allowed(name, versions, s) for s in specifiers), key=lambda a: len(a[0]))
        rest = [members for _, members in allowed[1:]]
        return [v for v in allowed[0][0] if all(v in members for members in rest)]

    def _allowed(self, name: str, versions: tuple[Version, ...],
                 specifier: SpecifierSet) -> tuple[tuple[Version, ...], frozenset[Version]]:
        key = (name, specifier)
        found = self._lists.get(key)
        if found is None:
            kept = tuple(v for v in versions if specifier.contains(v, prereleases=True))
            found = self._lists[key] = (kept, frozenset(kept))
        return found


class Markers:
    """Remembered marker verdicts on one target environment (see the module docstring)."""

    def __init__(self, environment: Mapping[str, str]) -> None:
        self._environment = dict(environment)
        self._verdicts: dict[int, tuple[Marker, dict[str, bool]]] = {}

    def holds(self, marker: Marker, extra: str = "") -> bool:
        """``marker.evaluate`` on the target with ``extra`` ("" for none)."""
        entry = self._verdicts.get(id(marker))
        if entry is None or entry[0] is not marker:
            entry = self._verdicts[id(marker)] = (marker, {})
        found = entry[1].get(extra)
        if found is None:
            found = entry[1][extra] = marker.evaluate({**self._environment, "extra": extra})
        return found
