"""A new generation's venv is made, filled and verified at one path (``generations/.building``)
and moved into its generation's folder when complete: uv asks a venv's interpreter about itself
once per path (a Python process of its own), so at a new path per generation every build paid
that question. Moved venvs must still work: console scripts, activation scripts and
``pyvenv.cfg`` work from, and name, the generation's folder."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pm.base.uv import find_uv
from pm.env import generations
from pm.testing import LocalIndex
from pm.testing.wheels import build_wheel

from .helpers import edit, pm

_CLI = b"import sys\n\n\ndef main():\n    print(sys.prefix)\n"
_ENTRY_POINTS = b"[console_scripts]\nhello-tool = hello_tool.cli:main\n"


@pytest.fixture
def logged_uv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The real uv behind a shell script that first writes its arguments to the returned log."""
    log, shim = tmp_path / "uv-calls.log", tmp_path / "uv"
    shim.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec {find_uv()} "$@"\n')
    shim.chmod(0o755)
    monkeypatch.setenv("HERMES_PM_UV", str(shim))
    return log


def test_every_build_fills_the_venv_at_one_path_and_it_works_where_it_moved(
        home: Path, index: LocalIndex, logged_uv: Path, tmp_path: Path, capsys) -> None:
    index.add_files([build_wheel(tmp_path / "dists", "hello-tool", "1.0", extra_files={
        "hello_tool/cli.py": _CLI, "hello_tool-1.0.dist-info/entry_points.txt": _ENTRY_POINTS})])
    pyproject = home / "plugins" / "notes" / "pyproject.toml"
    edit(pyproject, '"beta>=1"', '"beta>=1", "hello-tool"')
    assert pm(capsys, home, "sync").code == 0
    first = generations.selected(home)
    edit(pyproject, '"hello-tool"', '"hello-tool", "epsilon"')
    assert pm(capsys, home, "sync").code == 0
    second = generations.selected(home)
    assert first is not None and second is not None and first.id != second.id

    building = generations.building(home) / "venv" / "bin" / "python"
    installs = [line for line in logged_uv.read_text().splitlines() if line.startswith("pip install ")]
    assert {line.rsplit(" -r ", 1)[1].split()[0] for line in installs} == {
        str(first.path / "requirements.txt"), str(second.path / "requirements.txt")}  # (offline first, then not)
    assert all(f" --python {building} " in line for line in installs)
    assert not generations.building(home).exists()
    for generation in (first, second):
        venv = generation.venv
        config = (venv / "pyvenv.cfg").read_text()
        assert "relocatable = true" in config.splitlines() and ".building" not in config
        assert f'VIRTUAL_ENV="{venv}"' in (venv / "bin" / "activate").read_text()
        done = subprocess.run([str(venv / "bin" / "hello-tool")], capture_output=True, text=True, timeout=30,
                              check=False)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == str(venv)  # the script runs the moved venv's interpreter
