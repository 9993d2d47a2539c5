"""Issue 34 finding 8: `kill -9` during `catalog check` left full clones in
`$TMPDIR/hermes-pm-catalog-*` (3 of 5 kills), never removed. Now the next run sweeps the folders
of dead runs (never a live run's), and SIGTERM or SIGINT removes the run's own — real processes,
real signals, a real git repository and index."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from pm.cli import main
from pm.ops.scratch import OWNER, UNOWNED_AGE, sweep
from pm.testing import index_from_spec, make_home
from pm.testing.catalogs import plugin_repo

ROOT = Path(__file__).resolve().parents[3]
PREFIX = "hermes-pm-catalog-"


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    with index_from_spec(tmp_path_factory.mktemp("scratch-dists"), {"tinyhttp": {"1.0": []}}) as served:
        yield served


@pytest.fixture
def check(tmp_path: Path, index, monkeypatch) -> list[str]:
    """The argv of a `catalog check` of one entry; $TMPDIR is tmp_path/tmp, for this process too."""
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "none"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    repo, commit = plugin_repo(tmp_path / "repos", "web", ["tinyhttp"])
    catalog = tmp_path / "catalog.json"
    catalog.write_text(json.dumps({"entries": [{"name": "web", "source": {"git": str(repo), "commit": commit}}],
                                   "removed": []}))
    (tmp_path / "core.toml").write_text("[project]\nname = 'host'\ndependencies = []\n")
    (tmp_path / "lock.txt").write_text("")
    make_home(tmp_path / "home")
    return ["catalog", "check", str(catalog), "--home", str(tmp_path / "home"), "--index-url", index.url,
            "--core", str(tmp_path / "core.toml"), "--core-lock", str(tmp_path / "lock.txt")]


def _folders(tmp_path: Path) -> set[Path]:
    return set((tmp_path / "tmp").glob(f"{PREFIX}*"))


def _paused(check: list[str], tmp_path: Path) -> tuple[subprocess.Popen[bytes], Path]:
    """A real `catalog check` process stopped once its entry is cloned; (it, its scratch folder)."""
    before = _folders(tmp_path)
    process = subprocess.Popen([sys.executable, "-m", "pm", *check],
                               env={**os.environ, "PYTHONPATH": str(ROOT), "HERMES_PM_PAUSE_AT": "catalog-fetched"},
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not (paused := [f for f in _folders(tmp_path) - before if (f / ".paused").exists()]):
        assert process.poll() is None and time.monotonic() < deadline, "the check never paused"
        time.sleep(0.02)
    (folder,) = paused
    assert [*folder.glob("*/src/plugin.yaml")]  # the clone is there (one per repository and commit)
    return process, folder


def test_a_killed_runs_clones_are_swept_by_the_next_run_and_a_live_runs_kept(check: list[str], tmp_path: Path,
                                                                             capsys) -> None:
    killed, dead = _paused(check, tmp_path)
    killed.send_signal(signal.SIGKILL)
    assert killed.wait() == -signal.SIGKILL
    assert dead.is_dir()  # what kill -9 leaves
    alive, running = _paused(check, tmp_path)  # a concurrent run, still working
    unowned_old = tmp_path / "tmp" / f"{PREFIX}old"
    (unowned_old / "web").mkdir(parents=True)
    os.utime(unowned_old, (time.time() - UNOWNED_AGE - 60,) * 2)
    unowned_new = tmp_path / "tmp" / f"{PREFIX}new"  # a run between mkdtemp and its owner file
    unowned_new.mkdir()
    try:
        assert main(check) == 0, capsys.readouterr().err
        assert _folders(tmp_path) == {running, unowned_new}  # its own folder is gone too
        assert [*running.glob("*/src/plugin.yaml")]
    finally:
        alive.kill()
        alive.wait()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_sigterm_or_sigint_removes_the_runs_clones(check: list[str], tmp_path: Path, signum: int) -> None:
    process, folder = _paused(check, tmp_path)
    process.send_signal(signum)
    assert process.wait(timeout=30) == 1  # interrupted, said so
    assert not folder.exists() and _folders(tmp_path) == set()


def test_only_folders_whose_owner_is_gone_are_swept(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    for name, pid in (("dead", int(gone.stdout)), ("mine", os.getpid())):
        (tmp_path / f"{PREFIX}{name}").mkdir()
        (tmp_path / f"{PREFIX}{name}" / OWNER).write_text(json.dumps({"pid": pid, "started": None}))
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / f"{PREFIX}link").symlink_to(tmp_path / "elsewhere")
    assert sweep(PREFIX) == [tmp_path / f"{PREFIX}dead"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere", f"{PREFIX}link", f"{PREFIX}mine"]
