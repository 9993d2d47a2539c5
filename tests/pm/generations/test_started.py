"""A build makes its venv before resolving (the venv depends on the target alone), so the two
run at the same time; a resolve that ends without a build takes that folder away again. The
running interpreter's venv is the standard library's, made in-process; another's is uv's."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pm.base.store import StoreError
from pm.env import generations
from pm.env.started import stdlib_venv
from pm.testing import LocalIndex

from .helpers import PINS, edit, kill, latest, pm, pm_process, run_python, state_bytes, wait_for


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


def _other_python() -> str | None:
    """The real executable of an installed interpreter other than the one running the tests
    (a shim or link resolved by asking the interpreter itself)."""
    running = os.path.realpath(sys.executable)
    for name in ("/usr/bin/python3", "python3.12", "python3.10", "python3.13", "python3"):
        found = shutil.which(name)
        if found is None:
            continue
        done = subprocess.run([found, "-c", "import os, sys; print(os.path.realpath(sys.executable))"],
                              capture_output=True, text=True, check=False, timeout=30)
        real = done.stdout.strip()
        if done.returncode == 0 and real and real != running:
            return real
    return None


def test_the_running_interpreter_gets_the_stdlib_venv_and_another_gets_uvs(home: Path, capsys) -> None:
    assert pm(capsys, home, "sync").code == 0
    ours = generations.selected(home)
    config = (ours.venv / "pyvenv.cfg").read_text()
    assert "uv = " not in config and f"home = {os.path.dirname(sys._base_executable)}" in config
    assert run_python(ours, "import alpha, delta; print(alpha.__version__, delta.__version__)") == "1.0 1.0"
    other = _other_python()
    if other is None:
        pytest.skip("no second Python interpreter on this machine")
    result = pm(capsys, home, "sync", "--python", other)
    assert result.code == 0, result.err
    theirs = generations.selected(home)
    assert theirs.id != ours.id and theirs.pins == PINS
    assert "uv = " in (theirs.venv / "pyvenv.cfg").read_text()  # made by uv venv --python OTHER
    assert run_python(theirs, "import alpha, delta; print(alpha.__version__, delta.__version__)") == "1.0 1.0"


def test_a_venv_that_cannot_be_made_is_a_store_error_naming_the_folder(tmp_path: Path) -> None:
    (tmp_path / "generation").write_text("a file where the generation's folder should be")
    venv = tmp_path / "generation" / "venv"
    with pytest.raises(StoreError) as raised:
        stdlib_venv(venv)
    assert raised.value.path == venv and str(raised.value).startswith(f"{venv}: cannot create the venv: ")


def test_a_python_without_its_venv_module_gets_uvs_venv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Some distributions ship ``venv`` apart from the interpreter: then uv makes the venv."""
    from pm.base.uv import Uv
    from pm.env.started import venv_maker

    monkeypatch.setitem(sys.modules, "venv", None)  # `import venv` raises ImportError, as where it is missing
    venv = tmp_path / "venv"
    venv_maker(sys.executable, venv, Uv(tmp_path / "uv-cache"))()
    assert "uv = " in (venv / "pyvenv.cfg").read_text()
    monkeypatch.delitem(sys.modules, "venv")
    ours = tmp_path / "ours"
    venv_maker(sys.executable, ours, Uv(tmp_path / "uv-cache"))()
    assert "uv = " not in (ours / "pyvenv.cfg").read_text() and (ours / "bin" / "python").exists()
