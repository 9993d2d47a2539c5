"""A build starts ``uv venv`` before resolving (the venv depends on the target alone), so the two
run at the same time; a resolve that ends without a build takes that folder away again."""

from __future__ import annotations

from pathlib import Path

from pm.env import generations
from pm.testing import LocalIndex

from .helpers import edit, kill, latest, pm, pm_process, state_bytes, wait_for


def test_the_venv_is_started_before_the_resolver_asks_the_index_anything(
        home: Path, env: dict[str, str], index: LocalIndex, capsys) -> None:
    assert pm(capsys, home, "sync").code == 0
    edit(home / "plugins" / "notes" / "pyproject.toml", '"beta>=1"', '"beta>=1", "epsilon"')
    index.reset_log()
    process = pm_process(env, home, "sync", HERMES_PM_PAUSE_AT="venv")
    wait_for(home / "pm" / ".paused-venv", process)
    assert index.requests == []  # paused where uv venv starts: the resolver has not begun
    kill(process)
    (home / "pm" / ".paused-venv").unlink()
    result = pm(capsys, home, "sync")
    assert result.code == 0, result.err
    assert any(path.startswith("/simple/") for _, path in index.requests)  # the index's pages were asked (max-age=0)


def test_a_conflict_takes_the_started_generation_folder_away(home: Path, capsys) -> None:
    assert pm(capsys, home, "sync").code == 0
    synced = generations.selected(home)
    before = state_bytes(home)
    edit(home / "plugins" / "notes" / "pyproject.toml", '"beta>=1"', '"beta>=1", "alpha>=2"')  # core: alpha<2
    result = pm(capsys, home, "sync")
    assert result.code == 3, result.err
    assert latest(home)["outcome"] == "conflict"
    assert state_bytes(home) == before
    assert generations.all_ids(home) == [synced.id]  # no folder of the build that did not happen
    assert not list((home / "pm" / "generations").glob(".*"))
