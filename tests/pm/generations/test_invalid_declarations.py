"""Issue 32, finding 4: a typo uninstalls a plugin. An enabled plugin whose declaration cannot be
read fails every operation that would build without it (sync, update's rebuild, admission,
disable): exit 1, the selected generation kept, the file, line and key named; ``--skip-invalid``
leaves it out with a warning. Real homes, a real local index, real uv."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.cli import main as hermes
from pm.env import generations
from pm.ops.invalid import InvalidDeclarations
from pm.testing import add_plugin

from .helpers import latest, pm

BROKEN = "pip_dependencies:\n  - gamma[fast]==1.0\n - delta>=1\n"  # line 3 lost one space of its indentation


def _break(home: Path) -> Path:
    manifest = home / "plugins" / "search" / "plugin.yaml"
    manifest.write_text(BROKEN)
    return manifest


def test_sync_refuses_while_an_enabled_plugin_cannot_be_read_and_keeps_the_generation(home: Path, capsys) -> None:
    assert pm(capsys, home, "sync").code == 0
    before = generations.selected(home)
    assert before is not None
    manifest = _break(home)

    failed = pm(capsys, home, "sync")
    assert failed.code == 1
    receipt = latest(home)
    assert (receipt["kind"], receipt["outcome"], receipt["exit_code"]) == ("sync", "failed", 1)
    problem = (f"{manifest}: is not valid YAML: line 3, column 2, in 'pip_dependencies': did not find expected key "
               "(while parsing a block mapping started on line 1, column 1)")
    assert receipt["failure"] == {
        "kind": InvalidDeclarations.kind, "url": None, "plugins": ["search"], "problems": [problem],
        "message": "an enabled plugin's declaration cannot be read, so nothing was built (the environment would "
                   f"lose what it declares): plugin 'search': {problem}; fix it or disable it, or pass "
                   "--skip-invalid to leave it out"}
    assert receipt["message"] == f"nothing was built or selected; generation {before.id} stays selected"
    assert [s["command"] for s in receipt["next_steps"]] == [
        f"hermes plugins disable search --home {home}", f"hermes pm sync --skip-invalid --home {home}"]
    assert not any("left out of the environment" in w for w in receipt["warnings"])
    assert receipt["generation"] is None and receipt["resolution"] is None
    assert generations.selected(home).id == before.id and generations.all_ids(home) == [before.id]
    assert f"error: {receipt['failure']['message']}" in failed.err
    assert "line 3, column 2, in 'pip_dependencies'" in failed.err
    assert pm(capsys, home, "check").code == 4  # and it does not read as ready




def test_skip_invalid_leaves_it_out_with_a_warning_and_a_plain_sync_still_fails(home: Path, capsys) -> None:
    assert pm(capsys, home, "sync").code == 0
    manifest = _break(home)

    skipped = pm(capsys, home, "sync", "--skip-invalid")
    assert skipped.code == 0
    receipt = latest(home)
    assert (receipt["outcome"], receipt["skipped_invalid"]) == ("ok", ["search"])
    assert receipt["warnings"] == [
        "plugin 'search' is enabled but its declaration cannot be read; left out of the environment as "
        f"--skip-invalid asks: {manifest}: is not valid YAML: line 3, column 2, in 'pip_dependencies': did not find "
        "expected key (while parsing a block mapping started on line 1, column 1)"]
    assert sorted(p["name"] for p in receipt["resolution"]["packages"]) == ["alpha", "beta"]
    assert "left out of the environment as --skip-invalid asks" in skipped.err
    left_out = generations.selected(home)

    again = pm(capsys, home, "sync")  # the generation built without it is not "already in sync"
    assert again.code == 1 and latest(home)["failure"]["kind"] == "invalid-declaration"
    assert generations.selected(home).id == left_out.id
    assert pm(capsys, home, "check").code == 4  # left out is not ready

    assert hermes(["plugins", "disable", "search", "--home", str(home)]) == 0  # disabled: nothing is lost
    assert pm(capsys, home, "sync").code == 0 and latest(home)["message"] == "already in sync"
    assert pm(capsys, home, "check").code == 0


def test_a_broken_plugin_that_is_not_enabled_fails_nothing(home: Path, capsys) -> None:
    add_plugin(home / "plugins", "idle", style="manifest", dependencies=["not a requirement!!"])
    assert pm(capsys, home, "sync").code == 0
    scanned = pm(capsys, home, "scan", "--json")
    assert {p["name"]: p["status"] for p in scanned.data["plugins"]}["idle"] == "invalid"


@pytest.mark.parametrize(("files", "named"), [
    ({"plugin.yaml": "pip_dependencies: ['gamma[fast]==1.0', 'delta=>1']\n"},
     "plugin.yaml:1: pip_dependencies[1]: 'delta=>1' is not a valid PEP 508 requirement"),
    ({"plugin.yaml": "pip_dependencies: {gamma: '==1.0'}\n"},
     "plugin.yaml:1: pip_dependencies: must be a list of requirement strings, got dict {'gamma': '==1.0'}"),
    ({"plugin.yaml": "pip_dependencies: [gamma]\n", "pyproject.toml": "[project]\nname = 'search'\ndependencies = [\n"},
     "pyproject.toml: is not valid TOML: "),
    ({"plugin.yaml": "pip_dependencies: [gamma]\n", "pyproject.toml": "[project]\nname = 'search'\ndependencies = 'gamma'\n"},
     "pyproject.toml: project.dependencies: must be a list of requirement strings, got 'gamma'"),
])
def test_every_unreadable_declaration_fails_the_sync_naming_file_and_key(home: Path, capsys, files: dict[str, str],
                                                                         named: str) -> None:
    assert pm(capsys, home, "sync").code == 0
    before = generations.read_state(home)
    for name, text in files.items():
        (home / "plugins" / "search" / name).write_text(text)
    assert pm(capsys, home, "sync").code == 1
    failure = latest(home)["failure"]
    assert failure["kind"] == "invalid-declaration" and failure["plugins"] == ["search"]
    assert failure["problems"][0].startswith(f"{home / 'plugins' / 'search' / named}")
    assert generations.read_state(home) == before


def test_admission_of_another_plugin_refuses_while_one_cannot_be_read(home: Path, capsys) -> None:
    assert pm(capsys, home, "sync").code == 0
    add_plugin(home / "plugins", "fresh", style="manifest", dependencies=["epsilon"])
    _break(home)
    config, state = (home / "config.yaml").read_bytes(), generations.read_state(home)

    assert hermes(["plugins", "enable", "fresh", "--home", str(home)]) == 1
    receipt = latest(home)
    assert (receipt["kind"], receipt["outcome"], receipt["candidate"]) == ("admit", "failed", "fresh")
    assert receipt["failure"]["kind"] == "invalid-declaration" and receipt["failure"]["plugins"] == ["search"]
    assert f"hermes plugins enable fresh --skip-invalid --home {home}" in [s["command"] for s in receipt["next_steps"]]
    assert (home / "config.yaml").read_bytes() == config and generations.read_state(home) == state
    err = capsys.readouterr().err
    assert "plugin 'search':" in err and f"hermes plugins disable search --home {home}" in err

    assert hermes(["plugins", "enable", "fresh", "--skip-invalid", "--home", str(home)]) == 0
    receipt = latest(home)
    assert receipt["outcome"] == "ok" and receipt["skipped_invalid"] == ["search"]
    assert sorted(p["name"] for p in receipt["resolution"]["packages"]) == ["alpha", "beta", "epsilon"]


def test_disabling_another_plugin_refuses_before_config_is_edited(home: Path, capsys) -> None:
    assert pm(capsys, home, "sync").code == 0
    _break(home)
    config = (home / "config.yaml").read_bytes()
    assert hermes(["plugins", "disable", "notes", "--home", str(home)]) == 1
    assert latest(home)["failure"]["plugins"] == ["search"]
    assert (home / "config.yaml").read_bytes() == config
    assert hermes(["plugins", "disable", "search", "--home", str(home)]) == 0  # the broken one itself: allowed


def test_update_refuses_its_rebuild_while_an_enabled_plugin_cannot_be_read(home: Path, capsys) -> None:
    assert pm(capsys, home, "sync").code == 0
    _break(home)
    state = generations.read_state(home)
    assert hermes(["update", "--home", str(home)]) == 1
    receipt = latest(home)
    assert (receipt["kind"], receipt["outcome"]) == ("update", "failed")
    assert receipt["failure"]["kind"] == "invalid-declaration"
    assert f"hermes update --skip-invalid --home {home}" in [s["command"] for s in receipt["next_steps"]]
    assert generations.read_state(home) == state
    assert hermes(["update", "--skip-invalid", "--home", str(home), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["skipped_invalid"] == ["search"]
    assert generations.selected(home).id != state["selected"]
