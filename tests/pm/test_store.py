"""pm.base.store: every write atomic (a new file renamed over the old: a reader holding the old one
keeps reading it whole, a crash leaves old or new, never half) and confined to its roots."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pm.base.store import Store, StoreError
from pm.env import generations


def test_a_write_replaces_the_file_and_never_changes_it_in_place(tmp_path: Path) -> None:
    store = Store(tmp_path)
    path = store.write_bytes(tmp_path / "state.json", b'{"selected": "old"}')
    with path.open("rb") as reader:  # a process that opened the old state
        inode = os.fstat(reader.fileno()).st_ino
        store.write_bytes(path, b'{"selected": "new one"}')
        assert reader.read() == b'{"selected": "old"}'
    assert path.stat().st_ino != inode and path.read_bytes() == b'{"selected": "new one"}'
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]  # no temporary file left


@pytest.mark.parametrize("durable", [True, False])
def test_a_write_that_need_not_be_durable_is_as_atomic_and_skips_only_the_fsyncs(tmp_path: Path, durable: bool) -> None:
    """``durable=False`` (a file inside an incomplete generation) is still a new file renamed over
    the old, with its mode; only the fsync of the file and of its folder are left out (counted by
    strace on a real process)."""
    strace = shutil.which("strace")
    if strace is None:
        pytest.skip("strace is not installed: cannot count the fsync calls")
    target = tmp_path / "requirements.txt"
    target.write_bytes(b"old")
    inode = target.stat().st_ino
    code = (f"from pathlib import Path; from pm.base.store import Store; "
            f"Store(Path({str(tmp_path)!r})).write_bytes(Path({str(target)!r}), b'new', mode=0o600, durable={durable})")
    log = tmp_path / "strace.log"
    done = subprocess.run([strace, "-f", "-e", "trace=fsync,fdatasync", "-o", str(log), sys.executable, "-c", code],
                          capture_output=True, text=True, check=False, cwd=Path(__file__).resolve().parents[2])
    if done.returncode != 0 and "ptrace" in done.stderr:
        pytest.skip(f"strace cannot trace here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    assert target.read_bytes() == b"new" and target.stat().st_ino != inode
    assert target.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["requirements.txt", "strace.log"]
    fsyncs = [line for line in log.read_text().splitlines() if "fsync(" in line]
    assert len(fsyncs) == (2 if durable else 0), fsyncs


def test_selecting_a_generation_replaces_state_json(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = Store.for_home(home)
    store.write_json(home / "pm" / generations.STATE_FILE, {"selected": None, "previous": None})
    before = (home / "pm" / generations.STATE_FILE).stat().st_ino
    generation = generations.Generation("g1", home / "pm" / "generations" / "g1", {"fingerprint": "f"})
    generations.select(home, store, generation)
    assert (home / "pm" / generations.STATE_FILE).stat().st_ino != before
    assert generations.read_state(home)["selected"] == "g1"


def test_a_write_outside_the_roots_is_refused_before_touching_disk(tmp_path: Path) -> None:
    store = Store(tmp_path / "pm")
    with pytest.raises(StoreError, match="refusing to write outside"):
        store.write_bytes(tmp_path / "plugins" / "x" / "evil.py", b"")
    assert not (tmp_path / "plugins").exists()


def test_an_atomic_replace_sets_the_mode_first_and_leaves_nothing_behind(tmp_path: Path) -> None:
    """pm.base.atomic, under Store, the index cache and the shortcut: the mode is the file's from
    the start, and a failed replace (here: the target is a folder) leaves the old state alone."""
    from pm.base.atomic import replace_with

    target = tmp_path / "f.json"
    replace_with(target, b"one", mode=0o640)
    assert target.read_bytes() == b"one" and target.stat().st_mode & 0o777 == 0o640
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x").write_text("kept")
    with pytest.raises(OSError):
        replace_with(tmp_path / "d", b"two", durable=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d", "f.json"] and (tmp_path / "d" / "x").read_text() == "kept"
