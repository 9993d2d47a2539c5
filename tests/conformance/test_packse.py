"""uv's packse resolver scenarios through the real ``hermes pm resolve``, on real wheels.

Every scenario under ``../shared/external/packse/scenarios/`` is one test, with id
``<folder>/<file stem>``. Its packages are served by one local index (see ``conftest.py``); its
root requirements are a manifest plugin's declaration, enabled in a fresh home; core adds nothing.
The test asserts the expected satisfiability, the exact expected pins when the scenario gives
them, and for an unsatisfiable scenario that the conflict blames the plugin and its message names
every package the scenario's explanation names.

Scenarios describing another target (``fork/``, ``universal``, another Python or platform) are
skipped with the reason. Expectations that contradict PEP 440 or our documented policy, or that
need an sdist build (pm installs wheels only unless ``pm.allow_builds`` names the package), are
``xfail(strict=True)`` with the reason below: the resolver is not bent to match them, and a strict
xfail turns red the day the outcome changes. Only :class:`ScenarioMismatch` counts as the expected
failure; a crash or an index failure is a real failure.
"""

from __future__ import annotations

import json
import re
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

_SDIST = "needs an sdist build: pm installs wheels only unless pm.allow_builds names the package"
#: Scenario id -> why the expected resolution needs an sdist (wheels-only is our default policy).
NEEDS_SDIST_BUILD = {
    "wheels/no-wheels": f"{_SDIST}; a 1.0.0 has only an sdist",
    "wheels/no-binary": f"{_SDIST}; no_binary forbids a's wheel, leaving only its sdist",
    "wheels/no-wheels-with-matching-platform":
        f"{_SDIST}; a 1.0.0's only wheel is for macosx ppc64",
    "requires_python/incompatible-python-compatible-override-available-no-wheels":
        f"{_SDIST}; a 1.0.0 has only an sdist",
    "requires_python/incompatible-python-compatible-override-unavailable-no-wheels":
        f"{_SDIST}; a 1.0.0 has only an sdist",
    "requires_python/incompatible-python-compatible-override-no-compatible-wheels":
        f"{_SDIST} (uv reads the sdist's static metadata); a 1.0.0's only wheel is tagged "
        "foo-none-any",
    "requires_python/incompatible-python-compatible-override-other-wheel":
        f"{_SDIST} (uv reads the sdist's static metadata); a 1.0.0 (Python >=3.10) has only an "
        "sdist and a 2.0.0 needs Python >=3.12",
}

#: Scenario id -> why the expectation differs from a policy DESIGN.md sets on purpose.
DIFFERS_FROM_POLICY = {
    "yanked/transitive-yanked-and-unyanked-dependency":
        "expectation follows uv, where only a root == pin opts into a yanked release; DESIGN.md "
        "(\"yanked files skipped unless pinned with ==\") and PEP 592 let a's c==2.0.0 select the "
        "yanked c 2.0.0",
}

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


def write_home(root: Path, scenario: Scenario) -> Path:
    """A home whose one enabled manifest plugin declares the scenario's root requirements."""
    config: dict[str, Any] = {"plugins": {"enabled": [PLUGIN]}}
    if scenario.options.get("prereleases"):
        config["pm"] = {"prereleases": "allow"}
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
    sdists = [p["file"]["filename"] for p in packages if not p["file"]["filename"].endswith(".whl")]
    assert not sdists, f"wheels only (no pm.allow_builds), yet pinned {sdists}"
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


def _names(text: str, name: str) -> bool:
    """Whether ``text`` names project ``name`` (alone, or followed by extras or a version)."""
    return re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", text.lower()) is not None


@pytest.mark.parametrize("scenario", _params())
def test_scenario(
    scenario: Scenario,
    packse_index: LocalIndex,
    empty_core: tuple[Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "no-bundled"))
    (tmp_path / "no-bundled").mkdir()
    home = write_home(tmp_path, scenario)
    core, lock = empty_core
    code, receipt = run_resolve(["--home", str(home), "--index-url", packse_index.url,
                                 "--core", str(core), "--core-lock", str(lock)], capsys)
    assert code in (0, 3), f"exit {code}: {receipt.get('failure')}"
    statuses = {p["name"]: p["status"] for p in receipt["inputs"]["plugins"]}
    assert statuses == {PLUGIN: "member"}, statuses
    if code == 0:
        check_resolution(scenario, receipt)
    else:
        check_conflict(scenario, receipt)
