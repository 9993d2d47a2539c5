"""pm.env.generations, pm.env.leases and pm.env.readiness.startup_check as functions."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from pm.base.store import Store
from pm.base.watch import Watch
from pm.env import generations, leases
from pm.env.readiness import startup_check
from pm.testing import tree_digest

from .conftest import ROOT
from .helpers import edit, pm, remove_dist

_CREATE = """
import sys
from pathlib import Path
from pm.env import generations
from pm.base.store import Store
home = Path(sys.argv[1])
store = Store.for_home(home)
print("\\n".join(generations.create(home, store, "sha256:" + "0" * 64)[0] for _ in range(50)))
"""


def test_generation_ids_are_unique_across_concurrent_processes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "pm").mkdir(parents=True)
    processes = [subprocess.Popen([sys.executable, "-c", _CREATE, str(home)], stdout=subprocess.PIPE, text=True,
                                  env={"PYTHONPATH": str(ROOT)}) for _ in range(6)]
    ids = [line for p in processes for line in p.communicate(timeout=60)[0].split()]
    assert [p.returncode for p in processes] == [0] * 6
    assert len(ids) == len(set(ids)) == 300
    assert sorted(ids) == generations.all_ids(home)
    assert all(not generations.is_complete(home, gid) for gid in ids)


def test_startup_check_is_cheap_and_writes_nothing(home: Path, capsys) -> None:
    assert pm(capsys, home, "sync").code == 0
    before = tree_digest(home)
    startup_check(home)
    timings = []
    for _ in range(20):
        started = time.perf_counter()
        readiness = startup_check(home)
        timings.append(time.perf_counter() - started)
    assert readiness.ready and readiness.problems == ()
    assert statistics.median(timings) < 0.05, timings  # a few ms here; a subprocess or a fetch would show
    assert tree_digest(home) == before

    remove_dist(generations.selected(home), "beta")
    assert [v.reason() for v in startup_check(home).verdicts] == [
        "ready", "requires beta>=1; installed: not installed", "ready"]
    edit(home / "plugins" / "search" / "plugin.yaml", "gamma[fast]==1.0", "gamma==1.0")
    changed = startup_check(home)
    assert changed.problems == ("inputs changed; run `hermes pm sync`",) and not changed.ready


def test_a_missing_interpreter_makes_the_generation_damaged(home: Path, capsys) -> None:
    assert pm(capsys, home, "sync").code == 0
    current = generations.selected(home)
    current.python.unlink()
    assert current.problems() == [f"its interpreter {current.python} is missing"]
    assert startup_check(home).problems == (
        f"generation {current.id} is damaged: its interpreter {current.python} is missing",)
    result = pm(capsys, home, "env")
    assert (result.code, result.err) == (1, f"error: generation {current.id} is damaged: its interpreter "
                                            f"{current.python} is missing; run `hermes pm sync`\n")
    rebuilt = pm(capsys, home, "sync", "--json").data
    assert rebuilt["warnings"] == [f"generation {current.id} is damaged (its interpreter {current.python} is "
                                   "missing); building a new one"]


def test_a_lease_of_a_recycled_pid_does_not_count(home: Path) -> None:
    store = Store.for_home(home)
    leases.take(home, "g-live", store)
    # pid 1 is alive, but it is not the process that wrote this lease (another start time)
    store.write_json(leases.folder(home) / "1.json", {"pid": 1, "generation": "g-old", "started": "0"})
    assert leases.live(home) == {os.getpid(): "g-live"}
    assert leases.prune(home, store) == [1]
    leases.release(home, store)
    assert leases.live(home) == {} and list(leases.folder(home).iterdir()) == []


def test_looking_for_a_built_generation_reads_only_the_records_of_its_fingerprint(tmp_path: Path) -> None:
    """Every sync that must build first asks whether one is built already; with a generation per
    update kept for months, reading every generation.json made that question grow with them."""
    home, store = tmp_path / "home", Store(tmp_path / "home" / "pm")
    wanted, other = "sha256:" + "a" * 64, "sha256:" + "b" * 64
    made = {}
    for fingerprint in (other, wanted, other, other):
        gid, path = generations.create(home, store, fingerprint)
        store.write_json(path / generations.GENERATION_FILE, {"fingerprint": fingerprint, "resolution": {"packages": []},
                                                                "target": {"markers": {"python_version": "3.11"}}})
        (path / "venv" / "bin").mkdir(parents=True)
        (path / "venv" / "bin" / "python").touch()
        made[gid] = fingerprint
    watch = Watch()
    found = generations.find_built(home, wanted, watch=watch)
    assert found is not None and made[found.id] == wanted
    read = {key.split("/")[-2] for key in watch.seen if key.endswith(generations.GENERATION_FILE)}
    assert read == {found.id}
