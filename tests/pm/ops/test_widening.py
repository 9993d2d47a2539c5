"""Issue 34 finding 2: a re-pin is widening when the new declaration could add anything on any
target the catalog supports — checked here on generated declaration changes (markers dropped or
loosened, specifiers moved, requirements and extras added or removed, ``python_runtime: external``
toggled, ``requires-python`` moved, entry point groups added), each classified by
:func:`pm.ops.widening.widening` and by a brute-force oracle: the union over every target of a
finite target set (6 systems x CPython 3.8-3.15 at several patch levels) and a finite universe of
versions (releases, pre-, post-, dev- and local forms), computed independently of the module."""

from __future__ import annotations

import functools
import random

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from pm.ops.widening import Brings, admits_more, widening

# -- the oracle ------------------------------------------------------------------------------------

SYSTEMS = {  # family: [(sys_platform, platform_system, platform_machine, os_name)]
    "linux": [("linux", "Linux", "x86_64", "posix"), ("linux", "Linux", "aarch64", "posix")],
    "macos": [("darwin", "Darwin", "arm64", "posix"), ("darwin", "Darwin", "x86_64", "posix")],
    "windows": [("win32", "Windows", "AMD64", "nt"), ("win32", "Windows", "ARM64", "nt")],
}
PYTHONS = [f"3.{minor}.{patch}" for minor in range(8, 16) for patch in (0, 1, 3, 4, 5, 10)]
UNIVERSE = sorted({Version(f"{release}{tail}")
                   for release in [*(f"{x}.{y}" for x in range(5) for y in range(6)),
                                   *(f"{x}.{y}.{z}" for x in range(5) for y in range(6) for z in range(3))]
                   for tail in ("", ".dev0", "a1", "rc1", ".post1", "+local", ".0.1")})


def _environments(platforms: tuple[str, ...]) -> list[dict[str, str]]:
    return [{"os_name": os_name, "sys_platform": sys_platform, "platform_system": system,
             "platform_machine": machine, "python_version": python.rsplit(".", 1)[0],
             "python_full_version": python, "implementation_version": python, "implementation_name": "cpython",
             "platform_python_implementation": "CPython", "platform_release": "", "platform_version": "",
             "extra": ""}
            for family in (platforms or tuple(SYSTEMS)) for (sys_platform, system, machine, os_name) in SYSTEMS[family]
            for python in PYTHONS]


@functools.cache
def _applies(marker: str, environment: tuple[tuple[str, str], ...]) -> bool:
    return Marker(marker).evaluate(dict(environment))


@functools.cache
def _admitted(specifier: str) -> int:
    """The universe's versions ``specifier`` admits, as a bit set."""
    spec = SpecifierSet(specifier)
    return sum(1 << i for i, v in enumerate(UNIVERSE) if spec.contains(v, prereleases=True))


def _union_on(brings: Brings, environment: dict[str, str]) -> dict[str, tuple[frozenset[str], int]]:
    """Per project: the extras and the versions ``brings`` lets into the union on one target."""
    if not brings.declared or brings.external:
        return {}
    if brings.requires_python is not None and Version(environment["python_full_version"]) not in \
            brings.requires_python:
        return {}
    key = tuple(sorted(environment.items()))
    found: dict[str, tuple[frozenset[str], int]] = {}
    for requirement in brings.requirements:
        if requirement.marker is not None and not _applies(str(requirement.marker), key):
            continue
        extras, versions = found.get(requirement.name, (frozenset(), (1 << len(UNIVERSE)) - 1))
        found[requirement.name] = (extras | requirement.extras, versions & _admitted(str(requirement.specifier)))
    return found


def oracle(old: Brings, new: Brings, platforms: tuple[str, ...]) -> bool:
    """Whether ``new`` lets into the union anything ``old`` did not, on some target."""
    if (new.declared and not new.external) and not (old.declared and not old.external):
        return True  # it joins the union
    if new.declared and not new.external and new.entry_points - old.entry_points:
        return True
    for environment in _environments(platforms):
        before = _union_on(old, environment)
        for name, (extras, versions) in _union_on(new, environment).items():
            if name not in before or extras - before[name][0] or versions & ~before[name][1]:
                return True
    return False


# -- the generator ---------------------------------------------------------------------------------

VERSIONS = ["1", "1.0", "1.5", "2.0", "2.0.1", "2.1", "3.0", "1.0a1", "2.0.post1", "2"]
OPERATORS = ["==", "!=", ">=", "<=", ">", "<", "~=", "==*", "!=*"]
ATOMS = ["sys_platform == 'win32'", "sys_platform != 'win32'", "sys_platform == 'linux'", "os_name == 'nt'",
         "platform_system == 'Darwin'", "platform_machine == 'arm64'", "platform_machine != 'x86_64'",
         "python_version < '3.12'", "python_version >= '3.11'", "python_version == '3.9'",
         "python_version > '3.13'", "python_full_version >= '3.11.4'", "python_full_version < '3.12.1'",
         "implementation_name == 'pypy'", "'linux' in sys_platform"]
REQUIRES_PYTHON = [None, ">=3.9", ">=3.12", "<3.12", ">=3.11.4", "!=3.10.*"]
GROUPS = ["console_scripts", "hermes_agent.plugins"]


def _specifier(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.choice([0, 1, 1, 2])):
        operator, version = rng.choice(OPERATORS), rng.choice(VERSIONS)
        if operator.endswith("*"):
            version = rng.choice(["1", "2", "2.0", "1.5"])
            parts.append(f"{operator[:-1]}{version}.*")
        elif operator == "~=":
            parts.append(f"~={rng.choice(['1.0', '1.5', '2.0', '2.0.1'])}")
        else:
            parts.append(f"{operator}{version}")
    return ",".join(parts)


def _marker(rng: random.Random) -> str:
    if rng.random() < 0.45:
        return ""
    atoms = [rng.choice(ATOMS) for _ in range(rng.choice([1, 1, 2]))]
    return "; " + f" {rng.choice(['and', 'or'])} ".join(atoms)


def _requirement(rng: random.Random, name: str | None = None) -> Requirement:
    extras = rng.choice(["", "", "[x]", "[y]", "[x,y]"])
    return Requirement(f"{name or rng.choice('abc')}{extras}{_specifier(rng)}{_marker(rng)}")


def _declaration(rng: random.Random) -> Brings:
    return Brings(tuple(_requirement(rng) for _ in range(rng.choice([0, 1, 2, 3]))),
                  _requires_python(rng), rng.random() > 0.05, rng.random() < 0.1,
                  frozenset(g for g in GROUPS if rng.random() < 0.3))


def _requires_python(rng: random.Random) -> SpecifierSet | None:
    text = rng.choice(REQUIRES_PYTHON)
    return None if text is None else SpecifierSet(text)


def _mutated(rng: random.Random, old: Brings) -> Brings:
    """``old`` changed in one to three of the ways a new pin changes a declaration."""
    requirements = list(old.requirements)
    fields = {"requires_python": old.requires_python, "declared": old.declared, "external": old.external,
              "entry_points": old.entry_points}
    for _ in range(rng.choice([1, 1, 2, 3])):
        change = rng.choice(["marker", "marker", "specifier", "specifier", "extras", "add", "drop", "external",
                             "python", "groups"])
        if change in ("marker", "specifier", "extras") and requirements:
            i = rng.randrange(len(requirements))
            was = requirements[i]
            marker = f"; {was.marker}" if was.marker else ""
            extras = f"[{','.join(sorted(was.extras))}]" if was.extras else ""
            if change == "marker":
                marker = _marker(rng)
            elif change == "specifier":
                requirements[i] = Requirement(f"{was.name}{extras}{_specifier(rng)}{marker}")
                continue
            else:
                extras = rng.choice(["", "[x]", "[x,y]"])
            requirements[i] = Requirement(f"{was.name}{extras}{was.specifier}{marker}")
        elif change == "add":
            requirements.append(_requirement(rng))
        elif change == "drop" and requirements:
            requirements.pop(rng.randrange(len(requirements)))
        elif change == "external":
            fields["external"] = not old.external
        elif change == "python":
            fields["requires_python"] = _requires_python(rng)
        elif change == "groups":
            fields["entry_points"] = frozenset(g for g in GROUPS if rng.random() < 0.5)
    return Brings(tuple(requirements), **fields)  # type: ignore[arg-type]


def _case(seed: int) -> tuple[Brings, Brings, tuple[str, ...]]:
    rng = random.Random(seed)
    old = _declaration(rng)
    platforms = tuple(p for p in SYSTEMS if rng.random() < 0.3)
    return old, _mutated(rng, old), platforms


def _shown(brings: Brings) -> str:
    return (f"{[str(r) for r in brings.requirements]} requires-python={brings.requires_python} "
            f"declared={brings.declared} external={brings.external} groups={sorted(brings.entry_points)}")


@pytest.mark.parametrize("chunk", range(4))
def test_generated_repins_are_classified_as_the_union_over_every_target_says(chunk: int) -> None:
    wrong = []
    widened = 0
    for seed in range(chunk * 500, chunk * 500 + 500):
        old, new, platforms = _case(seed)
        said = widening(old, new, platforms)
        expected = oracle(old, new, platforms)
        widened += expected
        if bool(said) is not expected:
            wrong.append(f"seed {seed} on {platforms or 'every platform'}: said {said}, the union says "
                         f"{'widening' if expected else 'not widening'}\n  old {_shown(old)}\n  new {_shown(new)}")
    assert not wrong, "\n".join(wrong[:5])
    assert 100 < widened < 400  # both answers are exercised


# -- the findings, by name -------------------------------------------------------------------------

def _brings(*texts: str, **fields: object) -> Brings:
    return Brings(tuple(Requirement(t) for t in texts), **fields)  # type: ignore[arg-type]


def test_a_requirement_that_loses_its_marker_widens() -> None:
    said = widening(_brings("sunrise-calc; sys_platform == 'win32'"), _brings("sunrise-calc"))
    assert said == ["'sunrise-calc; sys_platform == \"win32\"' widened to 'sunrise-calc' "
                    "(it now applies on darwin arm64 / Python 3.8.0)"]
    assert widening(_brings("sunrise-calc"), _brings("sunrise-calc; sys_platform == 'win32'")) == []


def test_a_marker_is_judged_on_the_platforms_the_entry_supports() -> None:
    old, new = _brings("sunrise-calc; sys_platform == 'win32'"), _brings("sunrise-calc")
    assert widening(old, new, ("windows",)) == []
    assert widening(old, new, ("windows", "linux")) == [
        "'sunrise-calc; sys_platform == \"win32\"' widened to 'sunrise-calc' (it now applies on linux aarch64 / "
        "Python 3.8.0)"]


def test_dropping_python_runtime_external_joins_the_union() -> None:
    assert widening(_brings("a>=1", external=True), _brings("a>=1")) == [
        "python_runtime: external dropped: it joins the union", "a new requirement 'a>=1'"]
    assert widening(_brings("a>=1"), _brings("a>=1", external=True)) == []


def test_a_new_entry_point_group_widens() -> None:
    assert widening(_brings("a"), _brings("a", entry_points=frozenset({"console_scripts"}))) == [
        "new entry point groups ['console_scripts']"]


def test_requires_python_widened_lets_the_plugin_in_on_more_pythons() -> None:
    assert widening(_brings("a", requires_python=SpecifierSet(">=3.12")),
                    _brings("a", requires_python=SpecifierSet(">=3.11"))) == [
        "'a' now applies on darwin arm64 / Python 3.11.0 too"]


def test_a_marker_on_a_variable_no_target_fixes_is_compared_as_text() -> None:
    old = _brings("a; platform_release == '6.1'")
    assert widening(old, old) == []
    assert widening(old, _brings("a; platform_release == '6.2'")) == [
        "requirements whose markers pm cannot evaluate for every target changed: "
        "['a; platform_release == \"6.1\"', 'a; platform_release == \"6.2\"']"]


def test_a_shared_unevaluable_marker_counts_where_the_plugin_joins_the_union() -> None:
    old = _brings("a; platform_release == '6.1'", requires_python=SpecifierSet(">=3.12"))
    assert widening(old, _brings("a; platform_release == '6.1'", requires_python=SpecifierSet(">=3.12"))) == []
    assert widening(old, _brings("a; platform_release == '6.1'")) == [
        "requirements whose markers pm cannot evaluate may apply on darwin arm64 / Python 3.8.0, where the plugin "
        "was not in the union before: ['a; platform_release == \"6.1\"']"]


@pytest.mark.parametrize(("old", "new", "wider"), [
    (">=1,<2", ">=1.5,<2", False), (">=1,<2", ">=1,<3", True), ("==1.0", "==1.*", True), ("~=1.4", ">=1.4,<2", False),
    (">1.0", ">=1.0", True), ("<2", "<=2", True), ("==1.0", "==1.0.0", False), ("!=1.3", "", True),
    ("<2", "<2.0a1", True),  # <2 admits no pre-release of 2; <2.0a1 admits 2.0.dev0 (">1.0", ">1.0.post1", False), ("===1.0", "===1.0", False), ("===1.0", "==1.0", True),
])
def test_what_admits_more(old: str, new: str, wider: bool) -> None:
    assert admits_more((SpecifierSet(old),), (SpecifierSet(new),)) is wider
