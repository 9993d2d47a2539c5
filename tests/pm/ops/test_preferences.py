"""Issue 32, finding 1 and "Upgrades only when asked": enabling a plugin keeps every pin its
requirements allow (the selected generation's pins are preferred, as uv keeps an existing output
file's); ``--upgrade``, ``--upgrade-package`` and ``hermes update`` move pins deliberately, and
the receipt says which requirement moved each pin. Real wheels on a real local index, real uv."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.cli import main
from pm.env import generations
from pm.testing import build_packages, index_from_spec
from pm.testing.receipts import assert_valid_receipt

from .conftest import plugin


@pytest.fixture
def index(tmp_path):
    """lib 1.0, other 1.0, core-lib 1.0 and 2.0: the index as the home was first synced."""
    with index_from_spec(tmp_path / "dists", {"lib": {"1.0": []}, "other": {"1.0": []},
                                              "core-lib": {"1.0": [], "2.0": []}}) as served:
        yield served


@pytest.fixture
def home(env, index, monkeypatch) -> Path:
    """A home with p1 (needs lib) enabled, synced at lib 1.0; p2 (needs only other) and p3 (needs
    lib>=1.1) installed, not enabled."""
    monkeypatch.setenv("HERMES_PM_INDEX_URL", index.url)
    home = env / "home"
    plugin(home / "plugins", "p1", ["lib"])
    plugin(home / "plugins", "p2", ["other"])
    plugin(home / "plugins", "p3", ["lib>=1.1"])
    (home / "config.yaml").write_text("plugins:\n  enabled:\n    - p1\n")
    assert main(["pm", "sync", "--home", str(home)]) == 0
    assert generations.selected(home).pins == {"lib": "1.0"}
    return home


def publish(index, tmp_path: Path, spec: dict) -> None:
    """New releases appear on the running index."""
    index.add_files(build_packages(tmp_path / f"more-{len(list(tmp_path.glob('more-*')))}", spec))


def latest(home: Path) -> dict:
    receipt = json.loads((home / "pm/receipts/latest.json").read_text())
    assert_valid_receipt(receipt)
    return receipt


def test_enabling_a_plugin_keeps_the_pins_of_the_others(home, index, tmp_path, capsys):
    """Finding 1: lib 1.1 appeared; enabling p2 (needs only other) keeps lib at 1.0."""
    publish(index, tmp_path, {"lib": {"1.1": []}})
    capsys.readouterr()

    assert main(["plugins", "enable", "p2", "--home", str(home)]) == 0

    assert generations.selected(home).pins == {"lib": "1.0", "other": "1.0"}
    err = capsys.readouterr().err
    assert "lib" not in err.replace("'p2'", "")  # no "- lib==1.0 + lib==1.1" in the diff
    assert "+ other==1.0\n" in err  # an addition, as uv prints it
    assert latest(home)["changes"] == [{"package": "other", "from": None, "to": "1.0", "reason": "added",
                                        "because": {"origin": {"kind": "plugin", "plugin": "p2"},
                                                    "requirement": "other", "text": "plugin 'p2' requires other"}}]


def test_a_requirement_that_excludes_the_pin_moves_it_and_the_receipt_names_it(home, index, tmp_path, capsys):
    publish(index, tmp_path, {"lib": {"1.1": [], "1.2": []}})
    capsys.readouterr()

    assert main(["plugins", "enable", "p3", "--home", str(home)]) == 0

    assert generations.selected(home).pins == {"lib": "1.2"}
    change = {"package": "lib", "from": "1.0", "to": "1.2", "reason": "required",
              "because": {"origin": {"kind": "plugin", "plugin": "p3"}, "requirement": "lib>=1.1",
                          "text": "plugin 'p3' requires lib>=1.1"}}
    assert latest(home)["changes"] == [change]
    err = capsys.readouterr().err
    assert "- lib==1.0\n+ lib==1.2  (plugin 'p3' requires lib>=1.1)\n" in err


def test_upgrade_package_moves_only_that_pin(home, index, tmp_path):
    assert main(["plugins", "enable", "p2", "--home", str(home)]) == 0
    publish(index, tmp_path, {"lib": {"1.1": []}, "other": {"1.1": []}})

    assert main(["pm", "sync", "--home", str(home)]) == 0  # nothing changed that the user asked for
    assert latest(home)["message"] == "already in sync"
    assert main(["pm", "sync", "--upgrade-package", "LIB", "--home", str(home)]) == 0

    assert generations.selected(home).pins == {"lib": "1.1", "other": "1.0"}
    receipt = latest(home)
    assert receipt["upgrade"] == {"all": False, "packages": ["lib"]}
    assert [(c["package"], c["from"], c["to"], c["reason"]) for c in receipt["changes"]] == [
        ("lib", "1.0", "1.1", "upgrade")]


def test_upgrade_moves_every_pin_and_then_is_up_to_date(home, index, tmp_path, capsys):
    assert main(["plugins", "enable", "p2", "--home", str(home)]) == 0
    publish(index, tmp_path, {"lib": {"1.1": []}, "other": {"1.1": []}})

    capsys.readouterr()
    assert main(["pm", "resolve", "--upgrade", "--home", str(home)]) == 0
    assert capsys.readouterr().out.endswith("moves from the selected generation:\n  lib 1.0 -> 1.1  (upgraded)\n"
                                            "  other 1.0 -> 1.1  (upgraded)\n")
    assert main(["pm", "sync", "--upgrade", "--home", str(home)]) == 0
    assert generations.selected(home).pins == {"lib": "1.1", "other": "1.1"}
    selected = generations.read_state(home)["selected"]

    assert main(["pm", "sync", "--upgrade", "--home", str(home)]) == 0  # resolves again: nothing newer
    assert generations.read_state(home)["selected"] == selected
    assert latest(home)["message"].startswith("already up to date")


def test_hermes_update_upgrades_and_prints_the_diff(home, index, tmp_path, capsys):
    publish(index, tmp_path, {"lib": {"1.1": []}})
    capsys.readouterr()

    assert main(["update", "--home", str(home)]) == 0

    assert generations.selected(home).pins == {"lib": "1.1"}
    assert "- lib==1.0\n+ lib==1.1  (upgraded)\n" in capsys.readouterr().err


def test_a_pin_gone_from_the_index_is_not_preferred(env, tmp_path, monkeypatch):
    """The selected generation pinned lib 1.0; the index no longer lists it: the newest moves in."""
    with index_from_spec(tmp_path / "old", {"lib": {"1.0": [], "1.1": []}}) as old:
        monkeypatch.setenv("HERMES_PM_INDEX_URL", old.url)
        home = env / "home"
        plugin(home / "plugins", "p1", ["lib<1.1"])
        (home / "config.yaml").write_text("plugins:\n  enabled:\n    - p1\n")
        assert main(["pm", "sync", "--home", str(home)]) == 0
    with index_from_spec(tmp_path / "new", {"lib": {"1.1": [], "1.2": []}}) as new:
        monkeypatch.setenv("HERMES_PM_INDEX_URL", new.url)
        plugin(home / "plugins", "p1", ["lib"])
        assert main(["pm", "sync", "--home", str(home)]) == 0
    assert generations.selected(home).pins == {"lib": "1.2"}
    assert latest(home)["changes"] == [{"package": "lib", "from": "1.0", "to": "1.2", "reason": "not-offered",
                                        "because": None, "detail": "lib 1.0 is no longer listed by the index"}]


def test_a_core_lock_still_binds(env, index, tmp_path, monkeypatch):
    """Core's locked version moves a preferred pin (core-lib 1.0 preferred, core locks 2.0)."""
    home = env / "home"
    plugin(home / "plugins", "p1", ["core-lib"])
    (home / "config.yaml").write_text("plugins:\n  enabled:\n    - p1\n")
    monkeypatch.setenv("HERMES_PM_INDEX_URL", index.url)
    (env / "lock.txt").write_text("core-lib==1.0\n")
    assert main(["pm", "sync", "--home", str(home)]) == 0
    (env / "lock.txt").write_text("core-lib==2.0\n")
    assert main(["pm", "sync", "--home", str(home)]) == 0
    assert generations.selected(home).pins == {"core-lib": "2.0"}
    assert latest(home)["changes"][0]["because"]["text"] == "core locks core-lib==2.0"


def _resolved(home: Path, capsys, *flags: str) -> dict:
    capsys.readouterr()
    assert main(["pm", "resolve", "--json", "--home", str(home), *flags]) == 0
    receipt = json.loads(capsys.readouterr().out)
    return {"pins": {p["name"]: p["version"] for p in receipt["resolution"]["packages"]},
            "reused": receipt["reused_resolution"]}


def test_a_stored_resolution_answers_only_the_same_preferences_and_upgrade(home, index, tmp_path, capsys):
    """The results cache is keyed by the selected generation's pins and the upgrade: --upgrade is
    never answered by a plain resolve's stored resolution, nor a resolve after the selection
    moved by one made with the old pins (the inputs' fingerprint is the same all along)."""
    publish(index, tmp_path, {"lib": {"1.1": []}})
    assert _resolved(home, capsys) == {"pins": {"lib": "1.0"}, "reused": False}
    assert _resolved(home, capsys) == {"pins": {"lib": "1.0"}, "reused": True}
    assert _resolved(home, capsys, "--upgrade") == {"pins": {"lib": "1.1"}, "reused": False}
    assert _resolved(home, capsys, "--upgrade-package", "lib") == {"pins": {"lib": "1.1"}, "reused": False}
    assert main(["pm", "sync", "--upgrade", "--home", str(home)]) == 0
    assert _resolved(home, capsys) == {"pins": {"lib": "1.1"}, "reused": False}


def test_the_shortcut_of_a_resolve_misses_once_the_selected_generation_moved(home, index, tmp_path):
    """A real ``python -m pm resolve`` twice: the second from memory; after a sync --upgrade
    selected another generation, the same command line is a miss and answers the new pins."""
    import os
    import subprocess
    import sys

    publish(index, tmp_path, {"lib": {"1.1": []}})
    argv = [sys.executable, "-m", "pm", "resolve", "--json", "--home", str(home)]

    def run() -> dict:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False, env=dict(os.environ))
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    assert run()["resolution"]["packages"][0]["version"] == "1.0"
    assert run().get("shortcut") is True
    assert main(["pm", "sync", "--upgrade", "--home", str(home)]) == 0
    again = run()
    assert "shortcut" not in again and again["resolution"]["packages"][0]["version"] == "1.1"


def test_a_pin_yanked_since_is_kept_with_a_warning_as_uv_keeps_it(env, tmp_path, monkeypatch):
    home = env / "home"
    plugin(home / "plugins", "p1", ["lib"])
    (home / "config.yaml").write_text("plugins:\n  enabled:\n    - p1\n")
    with index_from_spec(tmp_path / "old", {"lib": {"1.0": []}}) as old:
        monkeypatch.setenv("HERMES_PM_INDEX_URL", old.url)
        assert main(["pm", "sync", "--home", str(home)]) == 0
    with index_from_spec(tmp_path / "new", {"lib": {"1.0": {"yanked": "broken"}, "1.1": []}}) as new:
        monkeypatch.setenv("HERMES_PM_INDEX_URL", new.url)
        assert main(["pm", "sync", "--home", str(home)]) == 0
        assert generations.selected(home).pins == {"lib": "1.0"}
        assert "lib 1.0 is yanked on the index (broken); kept as the selected generation's pin: " \
               "--upgrade-package lib moves it" in latest(home)["warnings"]
        assert main(["pm", "sync", "--upgrade-package", "lib", "--home", str(home)]) == 0
        assert generations.selected(home).pins == {"lib": "1.1"}


def test_a_profile_sharing_the_environment_shares_its_preferences(home, index, tmp_path):
    """Enabling a plugin in a profile resolves the environment's union, preferring the primary's
    selected generation: lib stays 1.0 for the profile's own plugin too."""
    from pm.testing import add_profile

    profile = add_profile(home, "work", config={"plugins": {"enabled": []}})
    plugin(profile / "plugins", "p4", ["lib", "other"])
    publish(index, tmp_path, {"lib": {"1.1": []}})

    assert main(["plugins", "enable", "p4", "--home", str(profile)]) == 0

    assert generations.selected(home).pins == {"lib": "1.0", "other": "1.0"}
    assert [c["package"] for c in latest(home)["changes"]] == ["other"]


def test_upgrade_with_a_frozen_sync_is_a_usage_error(home, capsys):
    capsys.readouterr()
    assert main(["pm", "sync", "--from", str(home / "pm/receipts/latest.json"), "--upgrade", "--home", str(home)]) == 2
    assert "--upgrade and --upgrade-package resolve; --from builds exactly the files of FILE" in capsys.readouterr().err


def test_an_upgrade_package_that_is_no_project_name_is_a_usage_error(home, capsys):
    capsys.readouterr()
    assert main(["pm", "resolve", "--upgrade-package", "no such", "--home", str(home)]) == 2
    assert "--upgrade-package 'no such': not a project name" in capsys.readouterr().err
