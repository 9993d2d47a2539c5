"""The operator's constraints and overrides (issue 32, finding 3): uv's meaning on a real local
index of real wheels; the receipt says what each override replaced; a refusal caused by one
plugin's pin offers a checked override step, runnable as printed."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement

from agent.cli import main as hermes_main
from pm.cli import main
from pm.env.uv_check import _all_accepted
from pm.inputs.overrides import problem
from pm.ops.override_fix import VARIABLE
from pm.resolver.imposing import Replacement, top_level_extra
from pm.resolver.model import Resolution
from pm.testing import add_plugin, index_from_spec, isolated_home
from pm.testing.index import PRESETS
from pm.testing.receipts import assert_valid_receipt

from .test_shortcut import SPEC as SHORTCUT_SPEC
from .test_shortcut import Setup, _answered_once, pins

SPEC = {
    "numpy": {"1.24": [], "1.26": [], "2.0": []},
    "lib": {"1.0": ["numpy<1.25"]},
    "win-lib": {"1.0": ["numpy<1.25; sys_platform == 'win32'"]},
    "uses-numpy": {"1.0": ["numpy"]},
    "optional": {"1.0": {"requires": [], "extras": {"fast": ["numpy<1.25"]}}},
    "other": {"1.0": [], "2.0": []},
    "tenacity": {"8.0": [], "9.0": []},
}


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    with index_from_spec(tmp_path_factory.mktemp("dists"), SPEC) as served:
        yield served


def _home(tmp_path: Path, monkeypatch, index, plugins: dict[str, list[str]], pm: dict[str, Any] | None = None,
          lock: str = "") -> Path:
    core = [line.split("==")[0] for line in lock.split()]
    home = isolated_home(tmp_path, monkeypatch, core=core, lock=lock, index_url=index.url,
                         config={"plugins": {"enabled": list(plugins)}, "pm": pm or {}})
    for name, requirements in plugins.items():
        add_plugin(home / "plugins", name, style="manifest", dependencies=requirements)
    return home


def _run(capsys, *argv: str, code: int) -> dict[str, Any]:
    assert main([*argv, "--json"]) == code
    receipt = json.loads(capsys.readouterr().out)
    assert_valid_receipt(receipt)
    return receipt


def _pins(receipt: dict[str, Any]) -> dict[str, str]:
    return {p["name"]: p["version"] for p in receipt["resolution"]["packages"]}


# -- constraints ---------------------------------------------------------------------------------

def test_a_constraint_binds_a_direct_and_a_transitive_requirement(tmp_path, monkeypatch, index, capsys):
    home = _home(tmp_path, monkeypatch, index, {"a": ["numpy"], "b": ["uses-numpy"]}, {"constraints": ["numpy<2"]})
    receipt = _run(capsys, "resolve", "--home", str(home), code=0)
    assert _pins(receipt) == {"numpy": "1.26", "uses-numpy": "1.0"}
    assert receipt["inputs"]["constraints"] == [{"requirement": "numpy<2",
                                                 "source": f"{home / 'config.yaml'} pm.constraints[0]"}]
    numpy = next(p for p in receipt["resolution"]["packages"] if p["name"] == "numpy")
    assert "uses-numpy 1.0 requires numpy<2 (constraint)" in numpy["parents"]


def test_a_constraint_never_adds_a_package(tmp_path, monkeypatch, index, capsys):
    home = _home(tmp_path, monkeypatch, index, {"a": ["uses-numpy"]}, {"constraints": ["other<2", "numpy<1.25"]})
    receipt = _run(capsys, "resolve", "--home", str(home), code=0)
    assert _pins(receipt) == {"numpy": "1.24", "uses-numpy": "1.0"}  # numpy bound through uses-numpy; no other


def test_a_constraint_that_no_version_meets_is_a_conflict(tmp_path, monkeypatch, index, capsys):
    home = _home(tmp_path, monkeypatch, index, {"a": ["numpy>=1.26"]}, {"constraints": ["numpy<1.25"]})
    receipt = _run(capsys, "resolve", "--home", str(home), code=3)
    assert {c["requirement"] for c in receipt["conflict"]["causes"]} == {"numpy>=1.26", "numpy<1.25 (constraint)"}


# -- overrides -----------------------------------------------------------------------------------

def test_an_override_replaces_a_transitive_requirement_and_the_receipt_says_whose(tmp_path, monkeypatch, index,
                                                                                   capsys):
    home = _home(tmp_path, monkeypatch, index, {"a": ["lib"], "b": ["numpy>=1.26"]})
    refused = _run(capsys, "resolve", "--home", str(home), code=3)  # lib 1.0 requires numpy<1.25
    assert refused["resolution"] is None
    overrides = tmp_path / "overrides.txt"
    overrides.write_text("# the operator's\nnumpy>=1.26\n")
    receipt = _run(capsys, "resolve", "--home", str(home), "--override", str(overrides), code=0)
    assert _pins(receipt) == {"lib": "1.0", "numpy": "2.0"}
    numpy = next(p for p in receipt["resolution"]["packages"] if p["name"] == "numpy")
    assert numpy["parents"] == ["plugin 'b' requires numpy>=1.26 (override)", "lib 1.0 requires numpy>=1.26 (override)"]
    assert receipt["inputs"]["overrides"] == [{"requirement": "numpy>=1.26", "source": f"{overrides}:2"}]
    plugin_b = {"kind": "plugin", "plugin": "b", "file": str(home / "plugins" / "b" / "plugin.yaml")}
    assert receipt["resolution"]["replaced"] == [
        {"override": "numpy>=1.26", "requirement": "numpy>=1.26", "origin": plugin_b,
         "origin_text": f"plugin 'b' ({plugin_b['file']})", "locked": False},
        {"override": "numpy>=1.26", "requirement": "numpy<1.25", "package": "lib 1.0", "locked": False}]


def test_an_override_adds_no_package_no_one_requires(tmp_path, monkeypatch, index, capsys):
    home = _home(tmp_path, monkeypatch, index, {"a": ["uses-numpy"]}, {"overrides": ["other==1.0"]})
    receipt = _run(capsys, "resolve", "--home", str(home), code=0)
    assert _pins(receipt) == {"numpy": "2.0", "uses-numpy": "1.0"}
    assert "replaced" not in receipt["resolution"]


def test_an_override_whose_marker_fails_leaves_nothing_in_the_place_of_the_requirement(tmp_path, monkeypatch,
                                                                                       index, capsys):
    home = _home(tmp_path, monkeypatch, index, {"a": ["uses-numpy"]},
                 {"overrides": ["numpy>=1.26; python_version < '3'"]})
    receipt = _run(capsys, "resolve", "--home", str(home), code=0)
    assert _pins(receipt) == {"uses-numpy": "1.0"}  # as uv: the override, not the requirement, decides


def test_an_override_takes_the_place_of_a_requirement_whatever_its_own_marker_said(tmp_path, monkeypatch, index,
                                                                                 capsys):
    home = _home(tmp_path, monkeypatch, index, {"a": ["win-lib"]})
    assert _pins(_run(capsys, "resolve", "--home", str(home), code=0)) == {"win-lib": "1.0"}
    monkeypatch.setenv("HERMES_PM_OVERRIDES", "numpy>=1.26")
    assert _pins(_run(capsys, "resolve", "--home", str(home), code=0)) == {"numpy": "2.0", "win-lib": "1.0"}  # as uv


def test_an_override_keeps_an_optional_dependency_optional(tmp_path, monkeypatch, index, capsys):
    home = _home(tmp_path, monkeypatch, index, {"a": ["optional"], "b": ["optional[fast]", "other"]},
                 {"overrides": ["numpy>=2", "other<2"]})
    receipt = _run(capsys, "resolve", "--home", str(home), code=0)
    assert _pins(receipt) == {"numpy": "2.0", "optional": "1.0", "other": "1.0"}
    (tmp_path / "plain").mkdir()
    home_without = _home(tmp_path / "plain", monkeypatch, index, {"a": ["optional"]}, {"overrides": ["numpy>=2"]})
    assert _pins(_run(capsys, "resolve", "--home", str(home_without), code=0)) == {"optional": "1.0"}


def test_several_overrides_on_one_project_all_take_its_place(tmp_path, monkeypatch, index, capsys):
    home = _home(tmp_path, monkeypatch, index, {"a": ["numpy<1.25"]},
                 {"overrides": ["numpy>=1.26", "numpy<2"]})
    assert _pins(_run(capsys, "resolve", "--home", str(home), code=0)) == {"numpy": "1.26"}


def test_an_override_on_a_core_locked_package_moves_cores_pin_and_says_so(tmp_path, monkeypatch, index, capsys):
    home = _home(tmp_path, monkeypatch, index, {"a": ["tenacity>=9"]}, lock="tenacity==8.0\n")
    assert _run(capsys, "resolve", "--home", str(home), code=3)["conflict"]["plugins"] == ["a"]  # invariant 7
    monkeypatch.setenv("HERMES_PM_OVERRIDES", "tenacity>=9")
    receipt = _run(capsys, "resolve", "--home", str(home), code=0)
    assert _pins(receipt) == {"tenacity": "9.0"}
    assert [r for r in receipt["resolution"]["replaced"] if r["locked"]] == [
        {"override": "tenacity>=9", "requirement": "tenacity==8.0", "origin": {"kind": "core"},
         "origin_text": "core", "locked": True}]
    assert receipt["inputs"]["overrides"] == [{"requirement": "tenacity>=9", "source": "$HERMES_PM_OVERRIDES line 1"}]


def test_a_flag_beats_the_environment_which_beats_config(tmp_path, monkeypatch, index, capsys):
    home = _home(tmp_path, monkeypatch, index, {"a": ["numpy"]}, {"constraints": ["numpy<1.25"]})
    assert _pins(_run(capsys, "resolve", "--home", str(home), code=0)) == {"numpy": "1.24"}
    monkeypatch.setenv("HERMES_PM_CONSTRAINTS", "numpy<2")
    assert _pins(_run(capsys, "resolve", "--home", str(home), code=0)) == {"numpy": "1.26"}
    flag = tmp_path / "c.txt"
    flag.write_text("numpy>=2\n")
    assert _pins(_run(capsys, "resolve", "--home", str(home), "--constraint", str(flag), code=0)) == {"numpy": "2.0"}


# -- bad input -----------------------------------------------------------------------------------

def _packaging_says(text: str) -> str:
    """packaging's own words for why ``text`` is not a requirement (they differ between its versions)."""
    try:
        Requirement(text)
    except InvalidRequirement as exc:
        return str(exc)
    raise AssertionError(f"{text!r} parses")


def test_bad_config_entries_are_named_by_file_and_key(tmp_path, monkeypatch, index, capsys):
    home = _home(tmp_path, monkeypatch, index, {"a": ["numpy"]},
                 {"overrides": ["numpy>=1.26", "numpy>>1"], "constraints": ["numpy[fast]<2", "x @ https://h/x.whl"]})
    receipt = _run(capsys, "resolve", "--home", str(home), code=1)
    config = home / "config.yaml"
    assert receipt["failure"]["kind"] == "config"
    assert receipt["failure"]["message"] == (
        f"{config}: pm.overrides[1]: 'numpy>>1' is not a PEP 508 requirement: {_packaging_says('numpy>>1')}; "
        f"{config}: pm.constraints[0]: 'numpy[fast]<2': a constraint restricts versions only; extras add nothing "
        f"(drop [fast]); "
        f"{config}: pm.constraints[1]: 'x @ https://h/x.whl' is a direct URL requirement; pm installs from indexes "
        f"only (give a version range)")


def test_a_bad_line_of_a_file_or_variable_is_named_by_its_number(tmp_path, monkeypatch, index, capsys):
    home = _home(tmp_path, monkeypatch, index, {"a": ["numpy"]})
    bad = tmp_path / "o.txt"
    bad.write_text("numpy>=1\n\n-r other.txt\nnumpy >= = 2\n")
    receipt = _run(capsys, "resolve", "--home", str(home), "--override", str(bad), code=2)
    assert receipt["failure"]["message"] == (
        f"--override {bad}: line 3: '-r other.txt': options are not read here, only requirement lines; "
        f"line 4: 'numpy >= = 2' is not a PEP 508 requirement: {_packaging_says('numpy >= = 2')}")
    receipt = _run(capsys, "resolve", "--home", str(home), "--constraint", str(tmp_path / "absent.txt"), code=2)
    assert receipt["failure"]["message"].startswith(f"--constraint {tmp_path / 'absent.txt'}: ")
    monkeypatch.setenv("HERMES_PM_CONSTRAINTS", "numpy<2\nnumpy[x]<3")
    receipt = _run(capsys, "resolve", "--home", str(home), code=2)
    assert receipt["failure"]["message"] == ("HERMES_PM_CONSTRAINTS: line 2: 'numpy[x]<3': a constraint restricts "
                                             "versions only; extras add nothing (drop [x])")


# -- inputs: the fingerprint, the no-op and the shortcut -----------------------------------------

def test_changing_the_overrides_makes_sync_build_again(tmp_path, monkeypatch, index, capsys):
    home = _home(tmp_path, monkeypatch, index, {"a": ["numpy"]})
    first = _run(capsys, "sync", "--home", str(home), code=0)
    assert _run(capsys, "sync", "--home", str(home), code=0)["generation"]["id"] == first["generation"]["id"]
    config = home / "config.yaml"
    config.write_text(config.read_text().replace("pm:\n", "pm:\n  overrides: ['numpy<2']\n"))
    moved = _run(capsys, "sync", "--home", str(home), code=0)
    assert moved["inputs"]["fingerprint"] != first["inputs"]["fingerprint"]
    assert moved["generation"]["id"] != first["generation"]["id"]
    assert _pins(moved) == {"numpy": "1.26"}
    assert main(["check", "--home", str(home)]) == 0  # judged with the override in the place of 'numpy'
    capsys.readouterr()


def test_a_transitive_override_builds_and_is_ready(tmp_path, monkeypatch, index, capsys):
    home = _home(tmp_path, monkeypatch, index, {"a": ["lib"], "b": ["numpy>=1.26"]}, {"overrides": ["numpy>=1.26"]})
    receipt = _run(capsys, "sync", "--home", str(home), code=0)  # uv pip check: lib wants numpy<1.25, overridden
    assert _pins(receipt) == {"lib": "1.0", "numpy": "2.0"}
    assert _run(capsys, "check", "--home", str(home), code=0)["outcome"] == "ok"


# -- the checked override step -------------------------------------------------------------------

def _override_steps(receipt: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in receipt["next_steps"] if s.get("kind") == "override"]


def test_a_refusal_by_one_plugins_pin_offers_a_checked_override_that_runs_as_printed(tmp_path, monkeypatch, index,
                                                                                    capsys):
    home = _home(tmp_path, monkeypatch, index, {"numeric": ["numpy>=1.26"]})
    add_plugin(home / "plugins", "stats-tool", style="manifest", dependencies=["numpy<1.25"])
    config = (home / "config.yaml").read_bytes()
    assert hermes_main(["plugins", "enable", "stats-tool", "--home", str(home)]) == 3
    capsys.readouterr()
    receipt = json.loads((home / "pm" / "receipts" / "latest.json").read_text())
    assert (home / "config.yaml").read_bytes() == config
    assert _override_steps(receipt) == [{
        "command": f"HERMES_PM_OVERRIDES='numpy>=1.26' hermes plugins enable stats-tool --home {home}",
        "why": "checked: the override 'numpy>=1.26' makes 'stats-tool' fit (numpy 2.0 resolves with it in the place "
               "of every requirement on numpy); its author declared 'numpy<1.25'; at your own risk. This command "
               "applies it once; to keep it, add 'numpy>=1.26' to pm.overrides in config.yaml",
        "checked": True, "kind": "override"}]
    words = shlex.split(_override_steps(receipt)[0]["command"])
    variable, _, value = words[0].partition("=")  # what the shell does with the leading assignment
    assert variable == VARIABLE
    monkeypatch.setenv(variable, value)
    assert hermes_main(words[2:]) == 0
    capsys.readouterr()
    admitted = json.loads((home / "pm" / "receipts" / "latest.json").read_text())
    assert {p["name"]: p["version"] for p in admitted["resolution"]["packages"]} == {"numpy": "2.0"}
    assert admitted["resolution"]["replaced"][-1]["requirement"] == "numpy<1.25"


def test_the_override_step_keeps_the_overrides_in_force_and_core_lock(tmp_path, monkeypatch, index, capsys):
    home = _home(tmp_path, monkeypatch, index, {"stats-tool": ["numpy<1.25", "other"]}, {"overrides": ["other<2"]},
                 lock="numpy==1.26\n")
    receipt = _run(capsys, "resolve", "--home", str(home), code=3)
    assert [s["command"] for s in _override_steps(receipt)] == [
        f"HERMES_PM_OVERRIDES='other<2\nnumpy==1.26' hermes pm resolve --home {home}"]


def test_no_override_step_when_the_override_would_not_resolve(tmp_path, monkeypatch, index, capsys):
    # numpy alone would be lifted, but stats-tool's tenacity<9 still meets core's tenacity==9.0 (and
    # the other way round): neither override resolves, so neither is offered
    home = _home(tmp_path, monkeypatch, index, {"stats-tool": ["numpy<1.25", "tenacity<9"], "numeric": ["numpy>=1.26"]},
                 lock="tenacity==9.0\n")
    receipt = _run(capsys, "resolve", "--home", str(home), code=3)
    assert receipt["conflict"]["plugins"]
    assert _override_steps(receipt) == []


def test_no_override_step_when_overrides_came_from_a_flag(tmp_path, monkeypatch, index, capsys):
    home = _home(tmp_path, monkeypatch, index, {"stats-tool": ["numpy<1.25"], "numeric": ["numpy>=1.26", "other"]})
    flag = tmp_path / "o.txt"
    flag.write_text("other<2\n")
    monkeypatch.setenv("HERMES_PM_OVERRIDES", "other<2")  # the same inputs, so the same stored refusal key
    assert _override_steps(_run(capsys, "resolve", "--home", str(home), code=3))
    assert _override_steps(_run(capsys, "resolve", "--home", str(home), "--override", str(flag), code=3)) == []



@pytest.fixture
def setup(tmp_path: Path, make_index) -> Setup:
    """The shortcut test's home, answered once (tests/pm/test_shortcut.py)."""
    return _answered_once(tmp_path, make_index(SHORTCUT_SPEC, **PRESETS["pypi"]))


def test_the_shortcut_never_answers_over_a_changed_override_file(setup: Setup) -> None:
    overrides = setup.home.parent / "overrides.txt"
    overrides.write_text("beta<2\n")
    assert not setup.shortcut_taken("--override", str(overrides))  # another command line
    assert setup.shortcut_taken("--override", str(overrides))
    assert pins(setup.latest()) == {"alpha": "2.0", "beta": "1.0"}  # alpha 2.0's beta>=2 replaced
    overrides.write_text("beta>=2\n")
    assert not setup.shortcut_taken("--override", str(overrides)), "answered from memory"
    assert pins(setup.latest()) == {"alpha": "2.0", "beta": "2.0"}
    setup.env["HERMES_PM_CONSTRAINTS"] = "beta<2"
    assert not setup.shortcut_taken(), "answered from memory"
    assert pins(setup.latest()) == {"alpha": "1.0", "beta": "1.0"}


# -- the pieces ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("marker", "extra"), [
    ('extra == "fast"', "fast"), ("python_version >= '3.8' and extra == 'Fast_X'", "fast-x"),
    ("(extra == 'a' or extra == 'b')", None), ("python_version >= '3.8'", None)])
def test_the_extra_an_optional_dependency_keeps_is_its_top_level_clause(marker, extra):
    assert top_level_extra(Marker(marker)) == extra


def test_uv_pip_check_passes_only_when_every_complaint_is_a_replaced_requirement():
    resolution = Resolution((), replaced=(Replacement("numpy>=1.26", "numpy<1.25", package="lib 1.0"),))
    said = ("Checked 2 packages in 0.31ms\nFound 1 incompatibility\n"
            "The package `lib` requires `numpy<1.25`, but `2.0` is installed\n")
    assert _all_accepted(said, resolution)
    assert not _all_accepted(said + "The package `other` requires `numpy<2`, but `2.0` is installed\n", resolution)
    assert not _all_accepted("error: something else\n", resolution)


def test_a_requirement_is_checked_once_for_every_place_it_can_come_from():
    assert problem("overrides", "numpy[fast]>=2") is None  # an override may bring extras: it replaces
    assert problem("constraints", "") == "must be a PEP 508 requirement, got ''"
