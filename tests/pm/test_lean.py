"""pm.cli._lean: the shortcut's standard-library twins of what the full command uses, each held to
the same result as its twin."""

from __future__ import annotations

import os
import re
import stat
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from pm.base import errors
from pm.base.cachedir import default_cache_dir
from pm.cli import _lean
from pm.ops import receipts
from pm.records import receipt


def test_now_is_written_as_receipts_write_it() -> None:
    ours, theirs = _lean.now(), receipt.now()
    shape = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z"
    assert re.fullmatch(shape, ours) and re.fullmatch(shape, theirs)
    parsed = [datetime.fromisoformat(t.replace("Z", "+00:00")) for t in (ours, theirs)]
    assert timedelta(0) <= parsed[1] - parsed[0] < timedelta(seconds=5)


@pytest.mark.parametrize("environ", [
    {}, {"HOME": "/home/u"}, {"HOME": "/home/u/"}, {"XDG_CACHE_HOME": "/x//cache/"}, {"XDG_CACHE_HOME": "rel/./c"},
    {"HERMES_PM_CACHE_DIR": "~/c/./d/"}, {"HERMES_PM_CACHE_DIR": "//net/c"}, {"HERMES_PM_CACHE_DIR": "a/../b"},
    {"HERMES_PM_CACHE_DIR": "", "XDG_CACHE_HOME": "/x"},
])
def test_the_cache_root_is_the_cache_folder(environ: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", environ.get("HOME", "/home/me"))
    assert _lean.cache_root(environ) == str(default_cache_dir(environ))


def test_constants_are_their_twins() -> None:
    assert _lean.EXIT_FAILURE == errors.EXIT_FAILURE
    assert _lean.KEEP_RECEIPTS == receipts.KEEP


def test_a_write_is_whole_private_and_confined(tmp_path: Path) -> None:
    root = tmp_path / "home" / "pm"
    target = root / "receipts" / "latest.json"
    _lean.write(str(root), str(target), b'{"a":1}\n', mode=0o600)
    assert target.read_bytes() == b'{"a":1}\n' and stat.S_IMODE(target.stat().st_mode) == 0o600
    assert [p.name for p in target.parent.iterdir()] == ["latest.json"]  # no temporary file left
    (tmp_path / "elsewhere").mkdir()
    (root / "out").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    with pytest.raises(OSError, match="refusing to write outside"):
        _lean.write(str(root), str(root / "out" / "x.json"), b"{}", mode=0o600)
    with pytest.raises(OSError, match="refusing to write outside"):
        _lean.write(str(root), str(tmp_path / "home" / "x.json"), b"{}", mode=0o600)
    assert list((tmp_path / "elsewhere").iterdir()) == [] and not (tmp_path / "home" / "x.json").exists()


def test_prune_keeps_the_newest_receipts_and_refuses_a_link_out(tmp_path: Path) -> None:
    folder = tmp_path / "pm" / "receipts"
    folder.mkdir(parents=True)
    names = sorted(f"2026120{d}T000000000000Z-sync-{n}.json" for d in range(1, 4) for n in range(20))
    for name in [*names, "latest.json", ".x.json.tmp"]:
        (folder / name).write_text("{}")
    _lean.prune(str(tmp_path / "pm"), str(folder))
    assert sorted(p.name for p in folder.iterdir()) == sorted([*names[-_lean.KEEP_RECEIPTS:], "latest.json", ".x.json.tmp"])
    (tmp_path / "kept.json").write_text("{}")
    os.symlink(tmp_path / "kept.json", folder / "20260101T000000000000Z-sync-0.json")  # the oldest name
    with pytest.raises(OSError, match="refusing"):
        _lean.prune(str(tmp_path / "pm"), str(folder))
    assert (tmp_path / "kept.json").exists()
