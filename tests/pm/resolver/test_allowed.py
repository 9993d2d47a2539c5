"""Remembered specifier verdicts (pm.resolver.allowed): the same answers as asking packaging."""

from __future__ import annotations

import itertools

from packaging.markers import Marker
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from pm.resolver.allowed import Allowed, Markers

VERSIONS = tuple(sorted((Version(v) for v in ("0.9", "1.0", "1.0.post1", "1.1rc1", "1.1", "1.2.dev0", "2.0",
                                               "2.0.1", "3.0a1", "10.0")), reverse=True))
SPECIFIERS = [SpecifierSet(s) for s in ("", ">=1.0", "<2", "!=1.1", "~=1.0", "==1.*", "===1.0", ">1.0,<=2.0",
                                          "==3.0a1", ">=1.1rc1")]


def test_verdicts_and_filters_agree_with_packaging_in_any_order_and_when_asked_again() -> None:
    allowed = Allowed()
    for _ in range(2):  # the second round answers from memory
        for specifier, version in itertools.product(SPECIFIERS, VERSIONS):
            assert allowed.contains("p", specifier, version) is specifier.contains(version, prereleases=True)
        for pair in itertools.permutations(SPECIFIERS, 2):
            expected = [v for v in VERSIONS if all(s.contains(v, prereleases=True) for s in pair)]
            assert allowed.versions("p", VERSIONS, list(pair)) == expected
    assert allowed.versions("p", VERSIONS, []) == list(VERSIONS)


def test_verdicts_are_per_project_so_spellings_never_mix() -> None:
    """``===`` compares spellings: "1.0" and "1.0.0" are equal Versions of different projects."""
    allowed, exact = Allowed(), SpecifierSet("===1.0")
    assert allowed.contains("a", exact, Version("1.0")) is True
    assert allowed.contains("b", exact, Version("1.0.0")) is False
    assert allowed.versions("b", (Version("1.0.0"),), [exact]) == []
    assert allowed.versions("a", (Version("1.0"),), [exact]) == [Version("1.0")]


def test_marker_verdicts_agree_with_packaging_per_extra_and_when_asked_again() -> None:
    environment = {"python_version": "3.11", "sys_platform": "linux", "platform_machine": "x86_64"}
    markers = Markers(environment)
    texts = ['sys_platform == "win32"', 'python_version >= "3.8"', 'extra == "fast"',
             'extra == "fast" and sys_platform == "linux"', 'extra == "slow" or python_version < "3"']
    for _ in range(2):  # the second round answers from memory
        for text, extra in itertools.product(texts, ("", "fast", "slow")):
            marker = Marker(text)
            assert markers.holds(marker, extra) is marker.evaluate({**environment, "extra": extra})
    shared = Marker('extra == "fast"')
    assert (markers.holds(shared, "fast"), markers.holds(shared, "slow"), markers.holds(shared)) == (True, False, False)
