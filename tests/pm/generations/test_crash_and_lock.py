"""Invariant 8: SIGKILL at any step of a real sync leaves the previous generation selected and
usable, and the next sync cleans up; concurrent pm processes serialize on the home lock."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from pm.env import generations
from pm.env.build import STEPS

from .helpers import edit, kill, latest, pm, pm_process, run_python, state_bytes, wait_for


@pytest.fixture
def changed(home: Path, capsys) -> generations.Generation:
    """A synced home whose notes declaration then changed (the next sync must build)."""
    assert pm(capsys, home, "sync").code == 0
    edit(home / "plugins" / "notes" / "pyproject.toml", '"beta>=1"', '"beta>=1", "epsilon"')
    current = generations.selected(home)
    assert current is not None
    return current


@pytest.mark.parametrize("step", [*STEPS, "select"])
def test_sigkill_at_each_step_leaves_the_previous_generation_selected(
        home: Path, env, changed: generations.Generation, step: str, capsys) -> None:
    before = state_bytes(home)
    process = pm_process(env, home, "sync", HERMES_PM_PAUSE_AT=step)
    marker = home / "pm" / f".paused-{step}"
    wait_for(marker, process)
    kill(process)
    marker.unlink()

    assert state_bytes(home) == before
    assert generations.selected(home) == changed
    assert run_python(changed, "import alpha, beta; print(alpha.__version__, beta.__version__)") == "1.0 1.0"
    (leftover,) = set(generations.all_ids(home)) - {changed.id}
    assert generations.is_complete(home, leftover) is (step == "select")

    result = pm(capsys, home, "sync", "--json")
    assert result.code == 0, result.err
    receipt = result.data
    if step == "select":  # the killed run had finished building: select it, build nothing
        assert receipt["message"] == f"selected generation {leftover}, already built for these inputs"
        assert receipt["warnings"] == []
        assert generations.all_ids(home) == sorted([changed.id, leftover])
    else:
        assert receipt["warnings"] == [
            f"removed unfinished generation(s) left by an interrupted run: {leftover}"]
        assert leftover not in generations.all_ids(home)
        assert len(generations.all_ids(home)) == 2
    current = generations.selected(home)
    assert generations.read_state(home)["previous"] == changed.id
    assert run_python(current, "import epsilon; print(epsilon.__version__)") == "1.0"
    assert sorted(p.name for p in (home / "pm").iterdir()) == ["generations", "lock", "receipts", "state.json"]
    assert not generations.building(home).exists()  # the killed run's half-made venv went with the next build


def test_a_killed_pm_takes_its_uv_down_with_it(home: Path, env, changed, tmp_path: Path) -> None:
    pidfile = tmp_path / "uv.pid"
    fake_uv = tmp_path / "slow-uv"
    fake_uv.write_text(f"#!/bin/sh\necho $$ > {pidfile}\nexec sleep 30\n")
    fake_uv.chmod(0o755)
    process = pm_process(env, home, "sync", HERMES_PM_UV=str(fake_uv))
    wait_for(pidfile, process)
    while not pidfile.read_text().strip():
        time.sleep(0.01)
    uv_pid = int(pidfile.read_text())
    kill(process)
    deadline = time.monotonic() + 5
    try:
        while _alive(uv_pid):
            assert time.monotonic() < deadline, "uv outlived the pm that started it"
            time.sleep(0.01)
    finally:
        if _alive(uv_pid):
            os.kill(uv_pid, 9)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # reaped by init eventually; a zombie is dead for our purpose
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_second_sync_waits_for_the_lock_or_gives_up(home: Path, env, changed, capsys) -> None:
    before = state_bytes(home)
    first = pm_process(env, home, "sync", HERMES_PM_PAUSE_AT="install")
    wait_for(home / "pm" / ".paused-install", first)
    lock = home / "pm" / "lock"
    holder = f"pid {first.pid}: python -m pm sync"

    impatient = pm(capsys, home, "sync", "--lock-timeout", "0.5")
    assert impatient.code == 1
    assert impatient.err.splitlines()[:2] == [
        f"waiting for another pm process ({holder}) to finish with {home} (lock {lock})",
        f"error: {lock}: another pm process ({holder}) still holds the home lock after 0.5s; "
        "try again later or raise --lock-timeout"]
    assert latest(home)["outcome"] == "failed"

    patient = pm_process(env, home, "sync")
    waiting = patient.stderr.readline()  # stderr is line-buffered: this is its first line
    assert waiting == f"waiting for another pm process ({holder}) to finish with {home} (lock {lock})\n"
    time.sleep(0.2)
    assert patient.poll() is None and state_bytes(home) == before
    kill(first)
    (home / "pm" / ".paused-install").unlink()
    out, err = patient.communicate(timeout=30)
    assert patient.returncode == 0, err
    assert "\nbuilt and selected generation " in "\n" + err  # after the package diff
    assert "warning: removed unfinished generation(s) left by an interrupted run: " in err
    assert len(generations.all_ids(home)) == 2 and generations.read_state(home)["previous"] == changed.id


def test_concurrent_syncs_serialize_and_build_once(home: Path, env, changed) -> None:
    processes = [pm_process(env, home, "sync", "--json") for _ in range(3)]
    results = [p.communicate(timeout=60) for p in processes]
    assert [p.returncode for p in processes] == [0, 0, 0], [err for _, err in results]
    messages = sorted(json.loads(out)["message"] for out, _ in results)
    current = generations.selected(home)
    assert messages == ["already in sync", "already in sync", f"built and selected generation {current.id}"]
    assert generations.all_ids(home) == sorted([changed.id, current.id])
    assert generations.read_state(home)["previous"] == changed.id and current.intact()


def test_gc_removes_what_a_build_killed_while_installing_left(home: Path, env, changed: generations.Generation,
                                                             capsys) -> None:
    process = pm_process(env, home, "sync", HERMES_PM_PAUSE_AT="install")
    marker = home / "pm" / ".paused-install"
    wait_for(marker, process)
    kill(process)
    marker.unlink()
    assert (generations.building(home) / "venv" / "bin" / "python").exists()  # the venv it was to fill
    (leftover,) = set(generations.all_ids(home)) - {changed.id}

    result = pm(capsys, home, "gc", "--json")
    assert result.code == 0, result.err
    assert result.data["removed"] == [leftover]
    assert not generations.building(home).exists()
    assert generations.selected(home) == changed
