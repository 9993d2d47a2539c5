"""pm.base.store: every write atomic (a new file renamed over the old: a reader holding the old one
keeps reading it whole, a crash leaves old or new, never half) and confined to its roots."""

from __future__ import annotations

import os
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
