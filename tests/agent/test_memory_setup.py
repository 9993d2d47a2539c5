"""agent.memory_setup.prepare_provider: preparing a provider goes through pm's operations, on the
environment the home runs on — for a profile, its primary home's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent.memory_cli import main
from agent.memory_setup import prepare_provider
from pm.env import generations
from pm.testing.homes import make_home


@pytest.fixture
def profile(new_home: Callable[..., Path], make_index: Callable[..., Any],
            monkeypatch: pytest.MonkeyPatch) -> Path:
    """A primary home (no plugins) with a profile ``work`` whose memory provider is the bundled
    ``jsonl_journal`` (it declares PyYAML>=6); the index serves PyYAML 6.0. No generation yet."""
    index = make_index({"pyyaml": {"6.0": []}})
    monkeypatch.setenv("HERMES_PM_INDEX_URL", index.url)
    primary = new_home()
    return make_home(primary / "profiles" / "work", config={"memory": {"provider": "jsonl_journal"}})


def test_setup_on_a_profile_builds_and_selects_in_the_primarys_environment(
        profile: Path, capsys: pytest.CaptureFixture[str]) -> None:
    primary = profile.parent.parent
    assert main(["setup", "jsonl_journal", "--home", str(profile)]) == 0, capsys.readouterr().err
    selected = generations.selected(primary)
    assert selected is not None and "pyyaml" in selected.pins
    assert not (profile / "pm" / "generations").exists()  # nothing built where nothing activates it
    receipt = generations.read_state(primary)
    assert receipt["selected"] == selected.id


def test_prepare_on_a_profile_reports_the_primarys_sync(profile: Path) -> None:
    told: list[str] = []
    preparation = prepare_provider(profile, "jsonl_journal", say=told.append)
    assert preparation.ready and preparation.selected
    assert preparation.receipt is not None
    assert (preparation.receipt.kind, preparation.receipt.outcome) == ("sync", "ok")
    assert preparation.receipt.home == profile.parent.parent
    assert preparation.readiness.generation is not None
    assert preparation.readiness.generation.id == generations.read_state(profile.parent.parent)["selected"]


def test_a_refused_preparation_prints_steps_that_run_as_printed(
        new_home: Callable[..., Path], make_index: Callable[..., Any], monkeypatch: pytest.MonkeyPatch) -> None:
    import shlex
    import subprocess

    from agent.cli import main as hermes

    monkeypatch.setenv("HERMES_PM_INDEX_URL", make_index({"unrelated": {"1.0": []}}).url)  # no PyYAML
    home = new_home(name="my home")
    preparation = prepare_provider(home, "jsonl_journal", say=lambda _: None)
    assert not preparation.ready and preparation.next_steps
    for command, _ in preparation.next_steps:
        argv = shlex.split(command)
        if argv[0] == "hermes":
            assert hermes(argv[1:]) != 2, command
        else:
            assert subprocess.run(argv, capture_output=True, check=False).returncode == 0, command
