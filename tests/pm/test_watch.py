"""pm.base.watch on real files: what an observation holds, and that looking again tells a change."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pm.base import watch as _watch
from pm.cli import _resolved, shortcut


def observe(*paths: Path) -> dict[str, str | None]:
    watch = _watch.Watch()
    for path in paths:
        if path.is_dir():
            watch.folder(path)
        else:
            watch.file(path)
        watch.real(path)
    return watch.seen


def test_each_watch_keeps_its_own_and_the_unwatched_keeps_nothing(tmp_path: Path) -> None:
    """Evidence is passed, not collected in the background: a reader notes in the watch it is
    given, and a read made for no command (the default) is noted nowhere."""
    from pm.base.files import read_text

    (tmp_path / "x").write_text("a")
    one, other = _watch.Watch(), _watch.Watch()
    read_text(tmp_path / "x", watch=one)
    other.folder(tmp_path)
    read_text(tmp_path / "x")
    _watch.UNWATCHED.file(tmp_path / "x")
    assert list(one.seen) == [f"f:{tmp_path / 'x'}"] and list(other.seen) == [f"d:{tmp_path}"]
    assert _watch.UNWATCHED.seen == {}


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
    watch = _watch.Watch()
    watch.refused(tmp_path / "huge.yaml")
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
    watch = _watch.Watch()
    watch.unwatchable("uv python find 3.99")
    assert not _watch.unchanged(watch.seen)


def test_a_program_made_executable_is_a_change(tmp_path: Path) -> None:
    program = tmp_path / "python3.99"
    program.write_text("")
    watch = _watch.Watch()
    watch.stat(program)
    program.chmod(0o755)
    assert not _watch.unchanged(watch.seen)


def test_the_default_bundled_folders_are_watched_even_when_absent(tmp_path: Path, monkeypatch: Any) -> None:
    """A checkout's plugins/memory that appears beside a wheel's copy would take its place."""
    from pm.inputs import discover

    monkeypatch.setattr(discover, "_REPO_BUNDLED", tmp_path / "repo" / "plugins" / "memory")
    monkeypatch.setattr(discover, "_PACKAGED_BUNDLED", tmp_path / "data" / "plugins" / "memory")
    (tmp_path / "data" / "plugins" / "memory").mkdir(parents=True)
    watch = _watch.Watch()
    assert discover.default_bundled(watch=watch) == tmp_path / "data" / "plugins" / "memory"
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


# -- stat signatures that vouch for what was seen (no reading while they hold) ---------------------

def _counting_looks(monkeypatch: Any) -> list[str]:
    looked: list[str] = []
    for kind, look in list(_watch._LOOKS.items()):
        def counted(path: str, look: Any = look, kind: str = kind) -> Any:
            looked.append(kind + path)
            return look(path)
        monkeypatch.setitem(_watch._LOOKS, kind, counted)
    return looked


def test_a_settled_file_and_folder_are_vouched_for_by_their_stat(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(_watch, "SETTLED_NS", 0)
    (tmp_path / "plugin.yaml").write_text("name: maps\n")
    seen = observe(tmp_path / "plugin.yaml", tmp_path)
    stamps = _watch.vouch(seen)
    assert set(stamps) == {f"f:{tmp_path / 'plugin.yaml'}", f"d:{tmp_path}"}  # not the real-path one
    looked = _counting_looks(monkeypatch)
    assert _watch.unchanged(seen, stamps)
    assert [k for k in looked if k[:2] in ("f:", "d:")] == []  # neither read nor listed again


def test_a_change_in_place_breaks_the_signature_and_is_read(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(_watch, "SETTLED_NS", 0)
    manifest = tmp_path / "plugin.yaml"
    manifest.write_text("name: maps\n")
    seen = observe(manifest)
    stamps = _watch.vouch(seen)
    st = manifest.stat()
    manifest.write_text("name: mapz\n")  # same size; mtime put back: the change time still moves
    os.utime(manifest, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert not _watch.unchanged(seen, stamps)


def test_what_changed_just_now_or_holds_links_is_never_vouched_for(tmp_path: Path, monkeypatch: Any) -> None:
    (tmp_path / "fresh.yaml").write_text("x")
    assert _watch.vouch(observe(tmp_path / "fresh.yaml")) == {}  # changed within SETTLED_NS
    monkeypatch.setattr(_watch, "SETTLED_NS", 0)
    target = tmp_path / "elsewhere"
    target.mkdir()
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "maps").symlink_to(target, target_is_directory=True)
    seen = observe(tmp_path / "plugins")
    assert _watch.vouch(seen) == {}
    target.rmdir()
    target.write_text("now a file")  # the folder's own stat is unchanged; what its link leads to is not
    assert not _watch.unchanged(seen, _watch.vouch(seen) or {f"d:{tmp_path / 'plugins'}": "x"})


def test_missing_and_odd_files_are_looked_at_each_time(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(_watch, "SETTLED_NS", 0)
    os.mkfifo(tmp_path / "fifo")
    seen = observe(tmp_path / "absent.yaml", tmp_path / "fifo")
    assert _watch.vouch(seen) == {}
    (tmp_path / "absent.yaml").write_text("now here")
    assert not _watch.unchanged(seen, _watch.vouch(seen))


def test_a_fifo_where_a_file_was_is_a_change_not_a_hang(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("plugins: {}\n")
    seen = observe(config)
    config.unlink()
    os.mkfifo(config)  # nobody writes to it: opening it for reading would wait forever
    assert not _watch.unchanged(seen)
    assert _watch.file_state(config) == "not-a-file"


def test_real_paths_resolved_folder_by_folder_agree_with_realpath(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "f").write_text("")
    (tmp_path / "link").symlink_to(tmp_path / "a")
    (tmp_path / "a" / "b" / "self").symlink_to(tmp_path / "a" / "b" / "f")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    paths = [tmp_path / "link" / "b" / "f", tmp_path / "link" / "b", tmp_path / "a" / "b" / "self",
             tmp_path / "link" / "b" / "missing", tmp_path / "loop", tmp_path / "a" / ".." / "link", Path("rel")]
    known: dict[str, str] = {}
    for path in paths:
        assert _watch._realpath(str(path), known) == os.path.realpath(path), path
    seen = observe(*[p for p in paths if p.exists()])
    (tmp_path / "link").unlink()
    (tmp_path / "link").symlink_to(tmp_path / "a" / "b")
    assert not _watch.unchanged(seen)


def test_a_vouched_folder_answers_for_the_real_paths_in_it_until_it_changes(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(_watch, "SETTLED_NS", 0)
    plugins, elsewhere = tmp_path / "plugins", tmp_path / "elsewhere"
    (plugins / "maps").mkdir(parents=True)
    elsewhere.mkdir()
    watch = _watch.Watch()
    watch.folder(plugins)
    watch.real(plugins / "maps")
    stamps = _watch.vouch(watch.seen)
    assert set(stamps) == {f"d:{plugins}"}
    lstats: list[str] = []
    real_lstat = os.lstat
    monkeypatch.setattr(_watch.os, "lstat", lambda p, *a, **k: (lstats.append(str(p)), real_lstat(p, *a, **k))[1])
    assert _watch.unchanged(watch.seen, stamps)
    assert str(plugins / "maps") not in lstats  # its folder's listing, proved by its stat, answered
    (plugins / "maps").rmdir()
    (plugins / "maps").symlink_to(elsewhere, target_is_directory=True)  # the folder's times move
    assert not _watch.unchanged(watch.seen, stamps)
    os.utime(plugins)  # its listing as it was noted, but no longer proved by its stat: looked at
    assert not _watch.unchanged({f"r:{plugins / 'maps'}": str(plugins / "maps")}, {})


def test_a_big_file_noted_by_its_digest_holds_by_its_stat_until_it_changes(tmp_path: Path, monkeypatch: Any) -> None:
    """A wheel in a --find-links folder is hashed by the caller, streaming; a file over MAX_HASHED
    is never read whole by the watch, so once its signature moves it no longer holds."""
    import hashlib

    monkeypatch.setattr(_watch, "SETTLED_NS", 0)
    wheel = tmp_path / "big-1.0-py3-none-any.whl"
    wheel.write_bytes(b"a" * (_watch.MAX_HASHED + 10))
    watch = _watch.Watch()
    watch.digest(wheel, hashlib.sha256(wheel.read_bytes()).hexdigest())
    stamps = _watch.vouch(watch.seen)
    assert set(stamps) == {f"h:{wheel}"} and _watch.unchanged(watch.seen, stamps)
    st = wheel.stat()
    wheel.write_bytes(b"b" * (_watch.MAX_HASHED + 10))  # same size and mtime, other bytes
    os.utime(wheel, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert not _watch.unchanged(watch.seen, stamps)
