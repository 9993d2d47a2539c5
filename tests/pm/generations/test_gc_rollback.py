"""`hermes pm gc` keeps selected, previous and leased generations; `rollback` verifies, then selects."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

from pm.base.store import Store
from pm.env import generations, leases

from .helpers import edit, kill, latest, pm, pm_process, remove_dist, wait_for


def build_generations(home: Path, capsys, count: int) -> list[str]:
    """``count`` syncs, each after a real change of a declaration; returns their ids, oldest first."""
    ids = []
    pyproject = home / "plugins" / "notes" / "pyproject.toml"
    for n in range(count):
        if n:
            edit(pyproject, '"beta>=1', f'"alpha>=0.{n}", "beta>=1')
        result = pm(capsys, home, "sync", "--json")
        assert result.code == 0, result.err
        ids.append(result.data["generation"]["id"])
    return ids


def test_gc_keeps_selected_previous_and_leased_and_removes_the_rest(home: Path, env, capsys) -> None:
    g1, g2, g3, g4 = build_generations(home, capsys, 4)
    store = Store.for_home(home)
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    try:
        leases.take(home, g1, store, pid=holder.pid)
        leases.take(home, g2, store, pid=gone.pid)
        edit(home / "plugins" / "notes" / "pyproject.toml", '"beta>=1"', '"beta>=1", "epsilon"')
        crashed = pm_process(env, home, "sync", HERMES_PM_PAUSE_AT="verify")
        wait_for(home / "pm" / ".paused-verify", crashed)
        kill(crashed)
        (home / "pm" / ".paused-verify").unlink()
        (unfinished,) = set(generations.all_ids(home)) - {g1, g2, g3, g4}
        assert not generations.is_complete(home, unfinished)

        result = pm(capsys, home, "gc")
        assert result.code == 0
        newest = max((home / "pm" / "receipts").glob("*-gc-*.json"))
        assert result.err == (f"removed 2 generation(s): {g2}, {unfinished}\n"
                              f"kept {g1} (in use by pid {holder.pid})\nkept {g3} (previous)\nkept {g4} (selected)\n"
                              f"receipt: {newest}\n")  # gc says where its receipt went, as every command
        assert generations.all_ids(home) == [g1, g3, g4]
        assert sorted(p.name for p in (home / "pm" / "leases").iterdir()) == [f"{holder.pid}.json"]
        receipt = latest(home)
        assert receipt["kind"] == "gc" and receipt["outcome"] == "ok"
        assert receipt["removed"] == [g2, unfinished] and receipt["lapsed_leases"] == [gone.pid]
        assert generations.read_state(home)["selected"] == g4
    finally:
        holder.kill()
        holder.wait()
    assert pm(capsys, home, "gc", "--json").data["removed"] == [g1]


def test_rollback_selects_the_previous_generation_after_verifying_it(home: Path, capsys) -> None:
    g1, g2 = build_generations(home, capsys, 2)
    result = pm(capsys, home, "rollback", "--json")
    assert result.code == 0
    assert result.data["outcome"] == "ok"
    assert result.data["generation"] == generations.load(home, g1).to_receipt(selected=True, restart_required=True)
    assert result.data["message"] == f"generation {g1} is selected again (was {g2})"
    state = generations.read_state(home)
    assert (state["selected"], state["previous"]) == (g1, g2)
    assert pm(capsys, home, "check").code == 4  # built for the older declaration
    again = pm(capsys, home, "sync", "--json").data  # the inputs still describe g2: select it, build nothing
    assert again["message"] == f"selected generation {g2}, already built for these inputs"
    assert again["generation"]["restart_required"] is True and generations.all_ids(home) == [g1, g2]


def test_rollback_refuses_a_damaged_previous_generation(home: Path, capsys) -> None:
    g1, g2 = build_generations(home, capsys, 2)
    state = (home / "pm" / "state.json").read_bytes()
    remove_dist(generations.load(home, g1), "beta")
    result = pm(capsys, home, "rollback")
    assert result.code == 1
    assert result.err == (f"error: cannot roll back: the previous generation {g1} is damaged: beta==1.0 is missing\n"
                          f"receipt: {max((home / 'pm' / 'receipts').glob('*-rollback-*.json'))}\n")
    assert (home / "pm" / "state.json").read_bytes() == state
    receipt = latest(home)
    assert receipt["outcome"] == "refused" and receipt["exit_code"] == 1 and receipt["generation"] is None
    # the step names the home it was given (runnable as printed: see tests/pm/test_next_steps.py)
    assert receipt["next_steps"] == [{"command": shlex.join(["hermes", "pm", "sync", "--home", str(home)]),
                                      "why": "build a fresh generation for the current inputs instead"}]


def test_rollback_without_a_previous_generation(home: Path, capsys) -> None:
    build_generations(home, capsys, 1)
    result = pm(capsys, home, "rollback")
    assert (result.code, result.err) == (1, "error: cannot roll back: there is no previous generation\n"
                                         f"receipt: {max((home / 'pm' / 'receipts').glob('*-rollback-*.json'))}\n")


def test_status_and_env(home: Path, capsys) -> None:
    empty = pm(capsys, home, "status")
    assert (empty.code, empty.out) == (0, f"{home}: no generation selected (run `hermes pm sync`)\n"
                                          "generations on disk: 0\n")
    assert pm(capsys, home, "env").err == "error: no generation is selected; run `hermes pm sync`\n"
    g1, g2 = build_generations(home, capsys, 2)
    current = generations.selected(home)
    result = pm(capsys, home, "status")
    receipt = latest(home)
    assert result.out == (f"selected generation: {g2}\n  path: {current.path}\n  python: {current.python}\n"
                          f"  fingerprint: {current.fingerprint}\n  packages: 4\n"
                          f"generations on disk: 2 (previous: {g1})\n"
                          f"latest receipt: sync ok at {receipt['finished_at']}  ({home / 'pm/receipts/latest.json'})\n")
    data = pm(capsys, home, "status", "--json").data
    assert data["selected"]["id"] == g2 and data["previous"] == g1 and data["packages"] == 4
    assert [(g["id"], g["role"], g["complete"]) for g in data["generations"]] == [
        (g1, "previous", True), (g2, "selected", True)]
    env = pm(capsys, home, "env")
    assert env.out == f"PYTHON={current.python}\nSITE_PACKAGES={current.site_packages}\nGENERATION={g2}\n"
    assert pm(capsys, home, "env", "--json").data == {
        "id": g2, "python": str(current.python), "site_packages": str(current.site_packages),
        "fingerprint": current.fingerprint}
    done = subprocess.run([str(current.python), "-c", "import sys; print(sys.prefix)"], capture_output=True,
                          text=True, check=True)
    assert done.stdout.strip() == str(current.venv)
