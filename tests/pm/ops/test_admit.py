"""The admission contract (issue 8), written first: refuse before anything changes."""

from __future__ import annotations

import json
from pathlib import Path

from agent.cli import main
from pm.env import generations
from pm.testing.homes import tree_digest
from pm.testing.receipts import assert_valid_receipt

from .conftest import plugin


def latest(home: Path) -> dict:
    receipt = json.loads((home / "pm/receipts/latest.json").read_text())
    assert_valid_receipt(receipt)
    return receipt


def make_home(env: Path) -> Path:
    home = env / "home"
    plugin(home / "plugins", "a", ["sharedlib==1.*"])
    plugin(home / "plugins", "b", ["sharedlib>=2"], marker=env / "B-IMPORTED")
    (home / "config.yaml").write_text("# my agent\nmodel: x   # keep me\nplugins:\n  enabled:\n    - a  # first\n")
    return home


def test_refused_enable_changes_nothing_and_names_both_plugins(env, capsys):
    home = make_home(env)
    assert main(["pm", "sync", "--home", str(home)]) == 0
    config = (home / "config.yaml").read_bytes()
    selected = generations.read_state(home)["selected"]
    plugins_before = tree_digest(home / "plugins")

    assert main(["plugins", "enable", "b", "--home", str(home)]) == 3

    assert (home / "config.yaml").read_bytes() == config
    assert generations.read_state(home)["selected"] == selected
    assert tree_digest(home / "plugins") == plugins_before
    assert not (env / "B-IMPORTED").exists()
    receipt = latest(home)
    assert (receipt["kind"], receipt["outcome"], receipt["exit_code"], receipt["candidate"]) == ("admit", "conflict", 3, "b")
    assert receipt["conflict"]["plugins"] == ["b", "a"]
    assert {(c["package"], c["requirement"], c["origin"].get("plugin")) for c in receipt["conflict"]["causes"]} == {
        ("sharedlib", "sharedlib==1.*", "a"), ("sharedlib", "sharedlib>=2", "b")}
    commands = [s["command"] for s in receipt["next_steps"]]
    assert commands[:2] == [f"hermes plugins disable a --home {home}", f"hermes plugins enable b --home {home}"]
    err = capsys.readouterr().err
    assert "Plugin 'b' cannot live with plugin(s) 'a'." in err
    assert "config.yaml was not changed; the selected generation is unchanged" in err


def test_next_steps_run_as_printed_and_then_enable_succeeds(env):
    home = make_home(env)
    assert main(["pm", "sync", "--home", str(home)]) == 0
    assert main(["plugins", "enable", "b", "--home", str(home)]) == 3
    for step in latest(home)["next_steps"][:2]:
        argv = step["command"].split()
        assert argv[0] == "hermes"
        assert main(argv[1:]) == 0, step
    assert (home / "config.yaml").read_text() == "# my agent\nmodel: x   # keep me\nplugins:\n  enabled:\n    - b\n"
    receipt = latest(home)
    assert (receipt["kind"], receipt["outcome"]) == ("admit", "ok")
    assert receipt["generation"]["selected"] and receipt["generation"]["restart_required"]
    assert main(["pm", "check", "--home", str(home)]) == 0
    assert not (env / "B-IMPORTED").exists()


def test_loosening_a_pin_and_syncing_builds_a_new_generation(env):
    home = make_home(env)
    assert main(["pm", "sync", "--home", str(home)]) == 0
    first = generations.read_state(home)["selected"]
    (home / "plugins/a/plugin.yaml").write_text(json.dumps({"name": "a", "pip_dependencies": ["sharedlib>=1"]}))
    assert main(["pm", "check", "--home", str(home)]) == 4
    assert main(["plugins", "enable", "b", "--home", str(home)]) == 0
    state = generations.read_state(home)
    assert state["selected"] != first and state["previous"] == first
    pins = {p["name"]: p["version"] for p in generations.selected(home).record["resolution"]["packages"]}
    assert pins == {"sharedlib": "2.0.0"}


def test_disable_always_succeeds_and_rebuilds(env):
    home = make_home(env)
    assert main(["pm", "sync", "--home", str(home)]) == 0
    assert main(["plugins", "disable", "a", "--home", str(home)]) == 0
    assert generations.selected(home).record["resolution"]["packages"] == []
    assert latest(home)["kind"] == "disable"


def test_config_changed_during_admission_is_refused(env, monkeypatch):
    home = make_home(env)
    (home / "plugins/b/plugin.yaml").write_text(json.dumps({"name": "b", "pip_dependencies": ["sharedlib<2"]}))
    import pm.env.build

    real_build = pm.env.build.build

    def build_then_edit(*args, **kwargs):  # another writer edits config.yaml mid-transaction
        generation = real_build(*args, **kwargs)
        (home / "config.yaml").write_text((home / "config.yaml").read_text() + "# edited elsewhere\n")
        return generation

    monkeypatch.setattr(pm.env.build, "build", build_then_edit)
    before_state = generations.read_state(home)
    assert main(["plugins", "enable", "b", "--home", str(home)]) == 1
    assert (home / "config.yaml").read_text().endswith("# edited elsewhere\n")
    assert "- b" not in (home / "config.yaml").read_text()
    assert generations.read_state(home) == before_state
    assert "changed while pm was working" in latest(home)["failure"]["message"]


def test_a_profiles_own_plugin_is_admitted_in_that_profile_and_conflicts_are_refused(env):
    home = env / "home"
    plugin(home / "plugins", "a", ["sharedlib==1.*"])
    (home / "config.yaml").write_text("plugins:\n  enabled:\n    - a\n")
    work = home / "profiles" / "work"
    plugin(work / "plugins" / "tools", "b", ["sharedlib>=2"])
    plugin(work / "plugins" / "tools", "c", ["sharedlib>=1"])
    (work / "config.yaml").write_text("plugins:\n  enabled: []\n")
    assert main(["pm", "sync", "--home", str(home)]) == 0
    primary, profile = (home / "config.yaml").read_bytes(), (work / "config.yaml").read_bytes()

    assert main(["plugins", "enable", "b", "--home", str(home)]) == 3  # collides with a, one home over
    assert ((home / "config.yaml").read_bytes(), (work / "config.yaml").read_bytes()) == (primary, profile)
    assert latest(home)["conflict"]["plugins"] == ["tools/b", "a"]

    assert main(["plugins", "enable", "c", "--home", str(home)]) == 0
    assert (home / "config.yaml").read_bytes() == primary
    assert (work / "config.yaml").read_text() == "plugins:\n  enabled:\n    - tools/c\n"
    assert latest(home)["message"] == "plugin 'c' enabled in profile 'work'"
    assert main(["plugins", "enable", "c", "--home", str(home)]) == 0
    assert latest(home)["message"] == "plugin 'c' is already enabled"


def test_rollback_after_an_enable_takes_the_plugin_out_again(env, capsys):
    home = make_home(env)
    assert main(["pm", "sync", "--home", str(home)]) == 0
    assert main(["plugins", "disable", "a", "--home", str(home)]) == 0
    disabled = (home / "config.yaml").read_bytes()
    assert main(["plugins", "enable", "b", "--home", str(home)]) == 0
    capsys.readouterr()
    assert main(["pm", "rollback", "--home", str(home)]) == 0
    assert "warning" not in capsys.readouterr().err  # before, b stayed enabled and was not ready
    assert (home / "config.yaml").read_bytes() == disabled
    assert main(["pm", "check", "--home", str(home)]) == 0


def test_rollback_says_which_plugin_the_older_generation_does_not_satisfy(env, capsys):
    home = make_home(env)
    assert main(["pm", "sync", "--home", str(home)]) == 0
    (home / "plugins/a/plugin.yaml").write_text(json.dumps({"name": "a", "pip_dependencies": ["sharedlib==1.*",
                                                                                              "extra-lib"]}))
    assert main(["pm", "sync", "--home", str(home)]) == 0
    capsys.readouterr()
    assert main(["pm", "rollback", "--home", str(home)]) == 0
    err = capsys.readouterr().err  # the selection is restored; a's declaration asks for more since
    assert "warning: after rollback, a is not ready: " in err
    assert "requires extra-lib; installed: not installed (run `hermes pm sync`, or disable it)" in err


def test_enable_edits_a_flow_style_config(env):
    """`{}` is what yaml.safe_dump({}) writes; enabling used to end in a ParserError traceback."""
    home = env / "home"
    plugin(home / "plugins", "a", ["sharedlib==1.*"])
    (home / "config.yaml").write_text("{}\n")
    assert main(["plugins", "enable", "a", "--home", str(home)]) == 0
    assert (home / "config.yaml").read_text() == "plugins:\n  enabled:\n  - a\n"
    assert (latest(home)["kind"], latest(home)["outcome"]) == ("admit", "ok")


def test_enable_and_disable_keep_a_crlf_config_crlf(env):
    home = env / "home"
    plugin(home / "plugins", "a", ["sharedlib==1.*"])
    plugin(home / "plugins", "c", [])
    (home / "config.yaml").write_bytes(b"# mine\r\nplugins:\r\n  enabled:\r\n    - c\r\n")
    assert main(["plugins", "enable", "a", "--home", str(home)]) == 0
    assert (home / "config.yaml").read_bytes() == b"# mine\r\nplugins:\r\n  enabled:\r\n    - c\r\n    - a\r\n"
    assert main(["plugins", "disable", "c", "--home", str(home)]) == 0
    assert (home / "config.yaml").read_bytes() == b"# mine\r\nplugins:\r\n  enabled:\r\n    - a\r\n"


def test_enabling_a_plugin_that_requires_a_missing_project_is_refused_as_a_failure(env, capsys):
    home = make_home(env)
    assert main(["pm", "sync", "--home", str(home)]) == 0
    config = (home / "config.yaml").read_bytes()
    selected = generations.read_state(home)["selected"]
    plugin(home / "plugins", "typo", ["sharedlibb>=1"], marker=env / "TYPO-IMPORTED")

    assert main(["plugins", "enable", "typo", "--home", str(home)]) == 1

    assert (home / "config.yaml").read_bytes() == config
    assert generations.read_state(home)["selected"] == selected
    assert not (env / "TYPO-IMPORTED").exists()
    receipt = latest(home)
    assert (receipt["kind"], receipt["outcome"], receipt["exit_code"], receipt["conflict"]) == ("admit", "failed", 1, None)
    failure = receipt["failure"]
    assert (failure["kind"], failure["plugins"]) == ("missing-project", ["typo"])
    assert [(p["name"], p["suggestion"]) for p in failure["projects"]] == [("sharedlibb", "sharedlib")]
    assert [s["command"] for s in receipt["next_steps"]] == [
        f"hermes pm scan --home {home}", f"hermes plugins enable typo --home {home}"]
    assert "cannot live with" not in capsys.readouterr().err


def test_a_sync_whose_union_names_a_missing_project_keeps_the_selected_generation(env):
    home = make_home(env)
    assert main(["pm", "sync", "--home", str(home)]) == 0
    selected = generations.read_state(home)["selected"]
    plugin(home / "plugins", "a", ["sharedlibb"])

    assert main(["pm", "sync", "--home", str(home)]) == 1

    assert generations.read_state(home)["selected"] == selected
    receipt = latest(home)
    assert (receipt["kind"], receipt["outcome"], receipt["failure"]["kind"]) == ("sync", "failed", "missing-project")
    assert [s["command"] for s in receipt["next_steps"]] == [
        f"hermes pm scan --home {home}", f"hermes pm sync --home {home}", f"hermes plugins disable a --home {home}"]


def test_enable_and_disable_keep_the_mode_of_config_yaml(env):
    """A config.yaml made private because it holds an index token stays private (it was made
    0644 by every rewrite); the receipts and the generation's record of the run are private too."""
    home = make_home(env)
    (home / "config.yaml").chmod(0o600)
    assert main(["plugins", "disable", "a", "--home", str(home)]) == 0
    assert (home / "config.yaml").stat().st_mode & 0o777 == 0o600
    assert main(["plugins", "enable", "a", "--home", str(home)]) == 0
    assert (home / "config.yaml").stat().st_mode & 0o777 == 0o600
    (home / "config.yaml").chmod(0o640)
    assert main(["plugins", "disable", "a", "--home", str(home)]) == 0
    assert (home / "config.yaml").stat().st_mode & 0o777 == 0o640
    receipts = sorted((home / "pm" / "receipts").glob("*.json"))
    assert len(receipts) >= 4 and {p.stat().st_mode & 0o777 for p in receipts} == {0o600}
    generation = generations.previous(home) or generations.selected(home)
    assert generation is not None
    for name in ("generation.json", "requirements.txt"):
        assert (generation.path / name).stat().st_mode & 0o777 == 0o600, name
