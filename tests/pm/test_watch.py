"""pm._watch on real files: what an observation holds, and that looking again tells a change."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pm import _watch
from pm.cli import _resolved, shortcut


def observe(*paths: Path) -> dict[str, str | None]:
    with _watch.watching() as watch:
        for path in paths:
            if path.is_dir():
                _watch.note_folder(path)
            else:
                _watch.note_file(path)
            _watch.note_real(path)
    return watch.seen


def test_nothing_is_noted_outside_a_watch_and_watches_nest(tmp_path: Path) -> None:
    _watch.note_file(tmp_path / "x")
    with _watch.watching() as outer:
        with _watch.watching() as inner:
            _watch.note_folder(tmp_path)
        _watch.note_file(tmp_path / "x")
    assert list(inner.seen) == [f"d:{tmp_path}"] and list(outer.seen) == [f"f:{tmp_path / 'x'}"]


def test_file_bytes_not_times_decide(tmp_path: Path) -> None:
    file = tmp_path / "plugin.yaml"
    file.write_text("a: 1\n")
    seen = observe(file)
    os.utime(file, (1, 1))
    assert _watch.unchanged(seen)
    file.write_text("a: 2\n")
    assert not _watch.unchanged(seen)


def test_a_missing_file_that_appears_is_a_change(tmp_path: Path) -> None:
    seen = observe(tmp_path / "config.yaml")
    assert seen[f"f:{tmp_path / 'config.yaml'}"] is None and _watch.unchanged(seen)
    (tmp_path / "config.yaml").write_text("")
    assert not _watch.unchanged(seen)


def test_folder_entries_kinds_and_link_targets_decide(tmp_path: Path) -> None:
    (tmp_path / "one").mkdir()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "one" / "link").symlink_to(tmp_path / "a")
    seen = observe(tmp_path / "one")
    (tmp_path / "one" / "link").unlink()
    (tmp_path / "one" / "link").symlink_to(tmp_path / "b")
    assert not _watch.unchanged(seen)
    seen = observe(tmp_path / "one")
    (tmp_path / "one" / "new").write_text("")
    assert not _watch.unchanged(seen)


def test_a_refused_file_never_holds_again(tmp_path: Path) -> None:
    with _watch.watching() as watch:
        _watch.note_refused(tmp_path / "huge.yaml")
    assert not _watch.unchanged(watch.seen)


def test_an_unknown_observation_is_a_change() -> None:
    assert not _watch.unchanged({"x:/": "1"})


def test_the_shortcut_key_covers_command_line_environment_and_folder(tmp_path: Path) -> None:
    base = shortcut.key(["python -m pm", "resolve"], tmp_path, {"A": "1"}, "/w")
    assert base == shortcut.key(["python -m pm", "resolve"], tmp_path, {"A": "1"}, "/w")
    assert len({base, shortcut.key(["python -m pm", "resolve", "--json"], tmp_path, {"A": "1"}, "/w"),
                shortcut.key(["python -m pm", "resolve"], tmp_path, {"A": "2"}, "/w"),
                shortcut.key(["python -m pm", "resolve"], tmp_path, {"A": "1"}, "/v")}) == 4


def test_a_resolution_is_rendered_from_its_receipt() -> None:
    receipt = {
        "seconds": 0.25, "target": {"python": "3.11.7", "platform": "linux-x86_64"},
        "inputs": {"plugins": [{"name": "maps", "status": "member"}, {"name": "old", "status": "disabled"}]},
        "resolution": {"packages": [
            {"name": "alpha", "version": "2.0", "required_by": [{"kind": "core"}, {"kind": "plugin", "plugin": "maps"}]},
            {"name": "beta", "version": "1.0", "required_by": [{"kind": "plugin", "plugin": "maps", "file": "x"}]}]},
    }
    assert _resolved.render(receipt).splitlines() == [
        "resolved 2 packages for core + 1 plugin(s) (Python 3.11.7, linux-x86_64) in 0.25s",
        "PACKAGE  VERSION  REQUIRED BY",
        "alpha    2.0      core, maps",
        "beta     1.0      maps",
    ]


def test_what_cannot_be_looked_at_again_never_holds() -> None:
    with _watch.watching() as watch:
        _watch.note_unwatchable("uv python find 3.99")
    assert not _watch.unchanged(watch.seen)


def test_a_program_made_executable_is_a_change(tmp_path: Path) -> None:
    program = tmp_path / "python3.99"
    program.write_text("")
    with _watch.watching() as watch:
        _watch.note_stat(program)
    program.chmod(0o755)
    assert not _watch.unchanged(watch.seen)


def test_the_default_bundled_folders_are_watched_even_when_absent(tmp_path: Path, monkeypatch: Any) -> None:
    """A checkout's plugins/memory that appears beside a wheel's copy would take its place."""
    from pm import discover

    monkeypatch.setattr(discover, "_REPO_BUNDLED", tmp_path / "repo" / "plugins" / "memory")
    monkeypatch.setattr(discover, "_PACKAGED_BUNDLED", tmp_path / "data" / "plugins" / "memory")
    (tmp_path / "data" / "plugins" / "memory").mkdir(parents=True)
    with _watch.watching() as watch:
        assert discover.default_bundled() == tmp_path / "data" / "plugins" / "memory"
    (tmp_path / "repo" / "plugins" / "memory").mkdir(parents=True)
    assert discover.default_bundled() == tmp_path / "repo" / "plugins" / "memory"
    assert not _watch.unchanged(watch.seen)


def test_plugin_names_in_the_table_cannot_drive_the_terminal() -> None:
    receipt = {"seconds": 0, "target": {"python": "3.11.7", "platform": "linux"},
               "inputs": {"plugins": [{"name": "x\x1b[2J", "status": "member"}]},
               "resolution": {"packages": [{"name": "a", "version": "1", "required_by": [
                   {"kind": "plugin", "plugin": "x\x1b[2J"}]}]}}
    shown = _resolved.render(receipt)
    assert "\x1b" not in shown and "x\\x1b[2J" in shown
