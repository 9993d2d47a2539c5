"""uv's packse resolver scenarios through the real ``hermes pm resolve``, on real wheels and sdists.

Every scenario under ``../shared/external/packse/scenarios/`` is one test, with id
``<folder>/<file stem>``. Its packages are served by one local index (see ``conftest.py``); its
root requirements are a manifest plugin's declaration, enabled in a fresh home; core adds nothing.
The test asserts the expected satisfiability, the exact expected pins when the scenario gives
them, and for an unsatisfiable scenario that the conflict blames the plugin and its message names
every package the scenario's explanation names.

uv builds sdists by default, pm only those ``pm.allow_builds`` names: a scenario with packages
usable here only as sdists runs with ``pm.allow_builds`` naming exactly those (minus its
``no_build``; see ``Scenario.allow_builds``), and the real uv builds them offline (their in-tree
backend needs no download) in the test's own cache; every other package must pin a wheel. Two of
them also run with pm's default, wheels only, and then as the printed hint says.

Scenarios describing another target (``fork/``, ``universal``, another Python or platform) are
skipped with the reason. Expectations that contradict PEP 440 or our documented policy are
``xfail(strict=True)`` with the reason below: the resolver is not bent to match them, and a strict
xfail turns red the day the outcome changes. Only :class:`ScenarioMismatch` counts as the expected
failure; a crash, an index failure or a build failure is a real failure.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
from packaging.utils import canonicalize_name
from packaging.version import Version

from pm.cli import main
from pm.testing import LocalIndex, add_plugin, make_home
from pm.testing.receipts import assert_valid_receipt

from .scenarios import SCENARIOS_DIR, Scenario, load_scenarios

PLUGIN = "packse"

_PEP_440 = ("expectation contradicts PEP 440, which accepts a pre-release when no final release "
            "satisfies the specifier, or when a specifier names a pre-release")
#: Scenario id -> why its expectation is not PEP 440 (uv's own pre-release policy differs).
CONTRADICTS_PEP_440 = {
    "prereleases/package-only-prereleases-in-range":
        f"{_PEP_440}: no final release satisfies a>0.1.0, so PEP 440 selects a 1.0.0a1",
    "prereleases/transitive-package-only-prereleases-in-range":
        f"{_PEP_440}: no final release satisfies b>0.1, so PEP 440 selects b 1.0.0a1",
    "prereleases/transitive-prerelease-and-stable-dependency":
        f"{_PEP_440}: c==2.0.0b1 names a pre-release, so PEP 440 selects c 2.0.0b1",
    "prereleases/transitive-prerelease-and-stable-dependency-many-versions":
        f"{_PEP_440}: c>=2.0.0b1 names a pre-release (and no final release satisfies it), "
        "so PEP 440 selects c 2.0.0b9",
    "prereleases/transitive-prerelease-and-stable-dependency-many-versions-holes":
        f"{_PEP_440}: c<2.0.0b5 names a pre-release (and no final release satisfies "
        "c>1.0.0,<2.0.0b5), so PEP 440 selects c 2.0.0b4",
}

#: Scenario id -> why the expected resolution needs an sdist that pm cannot build here. Scenarios
#: whose expectation needs a build run with ``pm.allow_builds`` (see ``Scenario.allow_builds``).
NEEDS_SDIST_BUILD: dict[str, str] = {}

#: Scenario id -> why the expectation differs from a policy docs/design.md sets on purpose.
DIFFERS_FROM_POLICY: dict[str, str] = {}

#: Scenario id -> a resolver bug (reported to the lead; the scenario is its regression test).
RESOLVER_BUGS: dict[str, str] = {}


class ScenarioMismatch(AssertionError):
    """The outcome differs from what the scenario expects (the failure a strict xfail expects)."""


def _params() -> list[Any]:
    if not SCENARIOS_DIR.is_dir():
        pytest.skip(f"packse scenarios not found at {SCENARIOS_DIR}", allow_module_level=True)
    known = {**CONTRADICTS_PEP_440, **NEEDS_SDIST_BUILD, **DIFFERS_FROM_POLICY, **RESOLVER_BUGS}
    params = []
    scenarios = load_scenarios()
    stale = set(known) - {s.id for s in scenarios}
    assert not stale, f"xfail entries name no scenario: {sorted(stale)}"
    for scenario in scenarios:
        marks: list[Any] = []
        if (reason := scenario.other_target()) is not None:
            assert scenario.id not in known, f"{scenario.id} is skipped and marked xfail"
            marks.append(pytest.mark.skip(reason=reason))
        elif scenario.id in known:
            marks.append(pytest.mark.xfail(strict=True, raises=ScenarioMismatch,
                                           reason=known[scenario.id]))
        params.append(pytest.param(scenario, id=scenario.id, marks=marks))
    return params


def write_home(root: Path, scenario: Scenario, *, builds: bool = True) -> Path:
    """A home whose one enabled plugin declares the scenario's root requirements.

    Options map onto settings: ``prereleases`` → ``pm.prereleases: allow``; uv's default of
    building sdists (minus ``no_build``) → ``pm.allow_builds`` naming the packages only usable as
    sdists here (``builds=False``: pm's default, wheels only).
    """
    config: dict[str, Any] = {"plugins": {"enabled": [PLUGIN]}}
    pm: dict[str, Any] = {}
    if scenario.options.get("prereleases"):
        pm["prereleases"] = "allow"
    if builds and scenario.allow_builds():
        pm["allow_builds"] = scenario.allow_builds()
    if pm:
        config["pm"] = pm
    home = make_home(root / "home", config=config)
    requires = [scenario.rename(r) for r in scenario.root_requires]
    if scenario.root_requires_python is None:
        add_plugin(home / "plugins", PLUGIN, style="manifest", dependencies=requires)
    else:
        add_plugin(home / "plugins", PLUGIN, style="pyproject", dependencies=requires,
                   requires_python=scenario.root_requires_python)
    return home


def run_resolve(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code = main(["resolve", "--json", *argv])
    receipt = json.loads(capsys.readouterr().out)
    assert_valid_receipt(receipt)
    return code, receipt


def check_resolution(scenario: Scenario, receipt: dict[str, Any]) -> None:
    packages = receipt["resolution"]["packages"]
    pins = {p["name"]: p["version"] for p in packages}
    allowed = scenario.allow_builds()
    sdists = [p["file"]["filename"] for p in packages if not p["file"]["filename"].endswith(".whl")
              and canonicalize_name(p["name"]) not in allowed]
    assert not sdists, f"wheels only (pm.allow_builds: {allowed}), yet pinned {sdists}"
    if not scenario.satisfiable:
        raise ScenarioMismatch(f"expected no resolution, got {pins}")
    if scenario.expected_packages:
        expected = {scenario.prefixed(n): str(Version(v))
                    for n, v in scenario.expected_packages.items()}
        got = {canonicalize_name(n): str(Version(v)) for n, v in pins.items()}
        if got != expected:
            raise ScenarioMismatch(f"expected pins {expected}, got {got}")


def check_conflict(scenario: Scenario, receipt: dict[str, Any]) -> None:
    conflict = receipt["conflict"]
    if scenario.satisfiable:
        raise ScenarioMismatch(f"expected a resolution, got a conflict: {conflict['message']}")
    assert conflict["plugins"] == [PLUGIN], conflict
    assert conflict["causes"], conflict
    message = conflict["message"]
    missing = [n for n in scenario.explained_names() if not _names(message, scenario.prefixed(n))]
    if missing:
        raise ScenarioMismatch(f"the explanation names {missing}, the conflict message does not: "
                               f"{message}")


def check_missing(scenario: Scenario, receipt: dict[str, Any]) -> None:
    """No resolution because a required project does not exist: told as a missing project (a
    failure about a declaration, exit 1), never as a conflict."""
    failure = receipt["failure"]
    if scenario.satisfiable:
        raise ScenarioMismatch(f"expected a resolution, got a missing project: {failure['message']}")
    assert failure["plugins"] == [PLUGIN], failure
    assert receipt["conflict"] is None and receipt["outcome"] == "failed", receipt
    message = failure["message"]
    unnamed = [n for n in scenario.explained_names() if not _names(message, scenario.prefixed(n))]
    if unnamed:
        raise ScenarioMismatch(f"the explanation names {unnamed}, the message does not: {message}")


def _names(text: str, name: str) -> bool:
    """Whether ``text`` names project ``name`` (alone, or followed by extras or a version)."""
    return re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", text.lower()) is not None


def _isolate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache (pages, sdist builds) and a bundled-plugins folder of this test's own."""
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "no-bundled"))
    (tmp_path / "no-bundled").mkdir()


@pytest.mark.parametrize("scenario", _params())
def test_scenario(
    scenario: Scenario,
    packse_index: LocalIndex,
    empty_core: tuple[Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _isolate(tmp_path, monkeypatch)
    home = write_home(tmp_path, scenario)
    core, lock = empty_core
    code, receipt = run_resolve(["--home", str(home), "--index-url", packse_index.url,
                                 "--core", str(core), "--core-lock", str(lock)], capsys)
    failure = receipt.get("failure") or {}
    assert code in (0, 3) or failure.get("kind") == "missing-project", f"exit {code}: {failure}"
    statuses = {p["name"]: p["status"] for p in receipt["inputs"]["plugins"]}
    assert statuses == {PLUGIN: "member"}, statuses
    if code == 0:
        check_resolution(scenario, receipt)
    elif code == 3:
        check_conflict(scenario, receipt)
    else:
        check_missing(scenario, receipt)


#: Scenarios whose expectation needs a build, run both ways: wheels only, then as the hint says.
BOTH_WAYS = ["wheels/no-wheels",
             "requires_python/incompatible-python-compatible-override-available-no-wheels"]


@pytest.mark.parametrize("scenario_id", BOTH_WAYS)
def test_wheels_only_names_the_sdist_only_package_and_its_hint_resolves(
    scenario_id: str,
    packse_index: LocalIndex,
    empty_core: tuple[Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (scenario,) = [s for s in load_scenarios() if s.id == scenario_id]
    (name,) = scenario.allow_builds()
    _isolate(tmp_path, monkeypatch)
    home = write_home(tmp_path, scenario, builds=False)
    core, lock = empty_core
    settings = ["--index-url", packse_index.url, "--core", str(core), "--core-lock", str(lock)]
    code, receipt = run_resolve(["--home", str(home), *settings], capsys)

    assert code == 3, receipt
    conflict = receipt["conflict"]
    assert [(f["kind"], f["package"]) for f in conflict["findings"]] == [("sdist-only", name)]
    (requirement,) = [scenario.rename(r) for r in scenario.root_requires]
    version = scenario.packages["a"][0].version
    assert conflict["message"] == (
        f"plugin {PLUGIN!r} ({home / 'plugins' / PLUGIN / 'plugin.yaml'}) requires {requirement}; "
        f"but {name} {version} has only a source distribution for this interpreter, which pm "
        f"builds only when allowed (add {name!r} to pm.allow_builds in config.yaml, or pass "
        f"--allow-build {name}). Plugins involved: {PLUGIN!r}.")
    hint = f"hermes pm resolve --allow-build {name} --home {home}"
    assert hint in [step["command"] for step in receipt["next_steps"]]

    code, receipt = run_resolve([*shlex.split(hint)[3:], *settings], capsys)  # as printed
    assert code == 0, receipt["conflict"] or receipt.get("failure")
    check_resolution(scenario, receipt)
    (pin,) = receipt["resolution"]["packages"]
    assert pin["file"]["filename"] == f"{name.replace('-', '_')}-{version}.tar.gz"
