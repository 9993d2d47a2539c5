"""Issue 34 finding 7: `kill -9` during `hermes profile delete` (3 of 4 kills that landed) removed the profile and never
rebuilt the environment, and running the command again said "no profile 'work'". The intent is
now recorded before anything is removed; a real SIGKILL at each dangerous point, then running it
again (or `hermes pm sync`) finishes the removal and the rebuild."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import pm.cli
from agent.cli import main as hermes
from agent.testing import ROOT
from pm.env import generations
from pm.env.generations import Generation
from pm.ops import pending
from pm.testing.homes import add_plugin

POINTS = ["profile-delete-recorded", "profile-delete-renamed", "profile-delete-removed"]


@pytest.fixture
def home(new_home: Callable[..., Path], sync: Callable[..., Generation]) -> Path:
    """A built home whose profile 'work' enables its own plugin beta, which alone brings otherlib."""
    home = new_home({"plugins": {"enabled": ["alpha"]}})
    add_plugin(home / "plugins", "alpha", style="pyproject", dependencies=("sharedlib>=1",))
    work = home / "profiles" / "work"
    add_plugin(work / "plugins", "beta", style="pyproject", dependencies=("otherlib>=1",))
    (work / "config.yaml").write_text("plugins:\n  enabled: [beta]\n")
    (work / "notes.txt").write_text("the profile's own things\n")
    sync(home, {"sharedlib": "1.0", "otherlib": "1.0"})
    return home


def _packages(generation: Generation | None) -> set[str]:
    assert generation is not None
    return {p["name"] for p in generation.record["resolution"]["packages"]}


def _killed_at(home: Path, point: str) -> None:
    """`hermes profile delete work --yes` as a real process, SIGKILLed at ``point``."""
    wheels = home.parent / "wheels"
    process = subprocess.Popen(
        [sys.executable, "-m", "agent.cli", "profile", "delete", "work", "--home", str(home), "--yes", "--remove-plugins",
         "--no-index", "--find-links", str(wheels)], env={**os.environ, "PYTHONPATH": str(ROOT), "HERMES_PM_PAUSE_AT": point},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    marker = home / "pm" / f".paused-{point}"
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"{point} never reached"
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.communicate()
    assert process.returncode == -signal.SIGKILL
    marker.unlink()


@pytest.mark.parametrize("point", POINTS)
def test_a_killed_profile_delete_is_finished_by_running_it_again(home: Path, point: str,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    before = generations.selected(home)
    assert _packages(before) == {"sharedlib", "otherlib"}
    _killed_at(home, point)
    assert generations.selected(home) == before  # the kill left the environment as it was
    assert pending.pending(home) == ["work"]
    assert json.loads((pending.folder(home) / "work.json").read_text())["profile"] == "work"

    code = hermes(["profile", "delete", "work", "--home", str(home), "--yes", "--remove-plugins", "--no-index",
                   "--find-links", str(home.parent / "wheels")])
    err = capsys.readouterr().err
    assert code == 0, err
    if point == "profile-delete-recorded":  # killed before anything was removed: an ordinary delete
        assert f"removed profile 'work' ({home / 'profiles' / 'work'}); the environment was rebuilt without it" in err
    else:
        assert (f"finished deleting profile 'work' ({home / 'profiles' / 'work'}), which an interrupted run had "
                "begun; the environment was rebuilt without it") in err
    assert _packages(generations.selected(home)) == {"sharedlib"}
    assert list((home / "profiles").iterdir()) == []
    assert not (home / "pm" / "deleting").exists()
    assert sorted(p.name for p in (home / "plugins").iterdir()) == ["alpha"]


@pytest.mark.parametrize("point", POINTS[1:])
def test_a_killed_profile_delete_is_finished_by_the_next_sync(home: Path, point: str,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    _killed_at(home, point)
    code = pm.cli.main(["sync", "--home", str(home), "--no-index", "--find-links", str(home.parent / "wheels"),
                        "--json"])
    receipt = json.loads(capsys.readouterr().out)
    assert code == 0, receipt
    assert "finished deleting profile 'work', which an interrupted run had begun" in receipt["warnings"]
    assert _packages(generations.selected(home)) == {"sharedlib"}
    assert list((home / "profiles").iterdir()) == [] and not (home / "pm" / "deleting").exists()


def test_a_sync_never_deletes_a_profile_whose_deletion_was_killed_before_it_began(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _killed_at(home, "profile-delete-recorded")
    assert pm.cli.main(["sync", "--home", str(home), "--no-index", "--find-links", str(home.parent / "wheels")]) == 0
    capsys.readouterr()
    assert (home / "profiles" / "work" / "notes.txt").is_file()
    assert _packages(generations.selected(home)) == {"sharedlib", "otherlib"}
