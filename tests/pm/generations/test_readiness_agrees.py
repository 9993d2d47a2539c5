"""`hermes plugins list` and `hermes pm check` give every plugin the same readiness, in every state:
before any sync, after a sync, an enable, a rollback and a disable, with inputs changed since the
build, a damaged generation, an enabled plugin whose declaration cannot be read, and from a
profile. (Before, `plugins list` called every member NOT READY whenever the inputs had changed,
where `pm check` judged each plugin, and it judged a profile against no generation at all.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent.cli import main as hermes
from pm.env import generations
from pm.testing import add_plugin, add_profile

from .helpers import edit, pm, remove_dist


def verdicts(capsys, home: Path) -> dict[str, Any]:
    """Both commands' verdicts on ``home``, asserted equal; returns them (plugin -> ready, the
    overall verdict and the problems)."""
    checked = pm(capsys, home, "check", "--json")
    judged = checked.data["readiness"]
    capsys.readouterr()
    assert hermes(["plugins", "list", "--json", "--home", str(home)]) == 0
    listed = json.loads(capsys.readouterr().out)
    by_check = {v["name"]: v["ready"] for v in judged["plugins"] if v["name"] != "core"}
    by_list = {p["name"]: p["ready"] for p in listed["plugins"] if p["ready"] is not None}
    assert by_list == by_check
    assert (listed["ready"], listed["problems"]) == (judged["ready"], judged["problems"])
    assert checked.code == (0 if judged["ready"] else 4)
    return {"plugins": by_check, "ready": judged["ready"], "problems": judged["problems"]}


def test_plugins_list_and_pm_check_agree_in_every_state(home: Path, capsys) -> None:
    (home / "config.yaml").write_text("plugins:\n  enabled:\n    - notes\n")
    assert verdicts(capsys, home) == {"plugins": {}, "ready": False,
                                      "problems": ["no generation is selected; run `hermes pm sync`"]}
    assert pm(capsys, home, "sync").code == 0
    assert verdicts(capsys, home) == {"plugins": {"notes": True}, "ready": True, "problems": []}

    assert hermes(["plugins", "enable", "search", "--home", str(home)]) == 0
    assert verdicts(capsys, home) == {"plugins": {"notes": True, "search": True}, "ready": True, "problems": []}

    edit(home / "plugins" / "notes" / "pyproject.toml", '"beta>=1"', '"beta>=1", "epsilon"')  # not synced
    changed = verdicts(capsys, home)
    assert changed["plugins"] == {"notes": False, "search": True}  # search's requirements are all installed
    assert changed["problems"] == ["inputs changed; run `hermes pm sync`"]
    edit(home / "plugins" / "notes" / "pyproject.toml", '"beta>=1", "epsilon"', '"beta>=1"')

    assert pm(capsys, home, "rollback").code == 0
    assert verdicts(capsys, home) == {"plugins": {"notes": True}, "ready": True, "problems": []}
    assert pm(capsys, home, "rollback").code == 0  # forward again
    assert hermes(["plugins", "disable", "notes", "--home", str(home)]) == 0
    assert verdicts(capsys, home) == {"plugins": {"search": True}, "ready": True, "problems": []}

    remove_dist(generations.selected(home), "gamma")
    assert verdicts(capsys, home)["plugins"] == {"search": False}


def test_an_enabled_plugin_that_cannot_be_read_is_not_ready_in_both(home: Path, capsys) -> None:
    assert pm(capsys, home, "sync").code == 0
    (home / "plugins" / "search" / "plugin.yaml").write_text("name: search\npip_dependencies: [gamma\n")
    judged = verdicts(capsys, home)
    assert judged["plugins"] == {"notes": True, "search": False} and judged["ready"] is False


def test_a_profile_is_judged_against_its_environment(home: Path, capsys) -> None:
    work = add_profile(home, "work", config={"plugins": {"enabled": ["tool"]}})
    add_plugin(work / "plugins", "tool", style="manifest", dependencies=["epsilon"])
    assert pm(capsys, home, "sync").code == 0
    capsys.readouterr()
    assert hermes(["plugins", "list", "--json", "--home", str(work)]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {p["name"]: p["ready"] for p in listed["plugins"]} == {"tool": True}
    assert verdicts(capsys, home)["plugins"] == {"notes": True, "search": True, "tool": True}
