"""Issue 15: config and home hygiene — special files, looping and escaping symlinks, the lock
timeout as configured, settings that overflow, temporary files left by a kill."""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path
from typing import Any

import pytest

from pm.testing.cli import latest, pm

GOOD = "[project]\nname = 'good'\ndependencies = []\n"


def make_home(tmp_path: Path, config: str = "plugins:\n  enabled: [good]\n") -> Path:
    home = tmp_path / "home"
    (home / "plugins/good").mkdir(parents=True)
    (home / "plugins/good/pyproject.toml").write_text(GOOD)
    (home / "config.yaml").write_text(config)
    return home


def test_a_config_that_is_a_fifo_is_refused_not_waited_on(capsys: Any, tmp_path: Path) -> None:
    """Finding 8: every command hung reading the FIFO."""
    home = make_home(tmp_path)
    (home / "config.yaml").unlink()
    os.mkfifo(home / "config.yaml")
    result = pm(capsys, home, "scan")
    assert result.code == 1
    assert f"{home / 'config.yaml'}: is not a regular file (a FIFO); pm reads only files" in result.err


def test_a_config_symlinked_to_itself_is_an_error_not_no_config(capsys: Any, tmp_path: Path) -> None:
    """Finding 5: the loop read as "no config": exit 0 with nothing selected."""
    home = make_home(tmp_path)
    (home / "config.yaml").unlink()
    (home / "config.yaml").symlink_to(home / "config.yaml")
    result = pm(capsys, home, "scan")
    assert result.code == 1
    assert f"{home / 'config.yaml'}: cannot be read: Too many levels of symbolic links" in result.err


def test_a_profile_that_is_a_symlink_out_of_the_home_is_skipped(capsys: Any, tmp_path: Path) -> None:
    """Finding 9: its plugins joined the union."""
    home = make_home(tmp_path)
    outside = tmp_path / "elsewhere"
    (outside / "plugins/evil").mkdir(parents=True)
    (outside / "plugins/evil/pyproject.toml").write_text("[project]\nname = 'e'\ndependencies = ['evil']\n")
    (outside / "config.yaml").write_text("plugins:\n  enabled: [evil]\n")
    (home / "profiles").mkdir()
    (home / "profiles/work").symlink_to(outside)
    result = pm(capsys, home, "scan", "--json")
    assert result.code == 0
    receipt = latest(home)
    assert "evil" not in {p["name"] for p in receipt["inputs"]["plugins"]}
    assert f"profile 'work' skipped: it is a symlink that leaves {home}" in result.out


def test_pm_lock_timeout_from_config_is_honoured(capsys: Any, tmp_path: Path) -> None:
    """Finding 7: pm.lock_timeout was accepted but never read (the default is 600 s)."""
    home = make_home(tmp_path, "plugins:\n  enabled: [good]\npm:\n  lock_timeout: 0.2\n")
    (home / "pm").mkdir()
    with (home / "pm" / "lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        started = time.monotonic()
        result = pm(capsys, home, "sync")
    assert time.monotonic() - started < 5
    assert result.code == 1
    assert "still holds the home lock after 0.2s" in result.err


@pytest.mark.parametrize("value", ["nan", "inf", "-1"])
def test_a_lock_timeout_that_is_not_finite_and_positive_is_a_usage_error(capsys: Any, tmp_path: Path,
                                                                          value: str) -> None:
    home = make_home(tmp_path)
    result = pm(capsys, home, "sync", f"--lock-timeout={value}")
    assert result.code == 2
    assert f"--lock-timeout: {float(value)!r} is not a number of seconds (a finite number, 0 or more)" in result.err


def test_a_non_finite_lock_timeout_in_config_is_named(capsys: Any, tmp_path: Path) -> None:
    home = make_home(tmp_path, "pm:\n  lock_timeout: .nan\n")
    result = pm(capsys, home, "scan")
    assert result.code == 1
    assert "pm.lock_timeout: must be a finite number, 0 or more, got nan" in result.err


def test_exclude_newer_too_far_back_is_a_clear_error(capsys: Any, tmp_path: Path) -> None:
    """Finding 6: OverflowError traceback on every command."""
    home = make_home(tmp_path, "pm:\n  exclude_newer: 1000000 days\n")
    result = pm(capsys, home, "resolve")
    assert result.code == 2
    assert "pm.exclude_newer: '1000000 days' reaches back before the year 1" in result.err
    assert "Traceback" not in result.err


def test_temporary_files_left_by_a_kill_are_swept_under_the_lock(capsys: Any, tmp_path: Path) -> None:
    home = make_home(tmp_path, "plugins:\n  enabled: []\n")
    (home / "pm/receipts").mkdir(parents=True)
    stale = [home / "pm/.state.json.abc123.tmp", home / "pm/receipts/.latest.json.def456.tmp"]
    fresh = home / "pm/receipts/.latest.json.now.tmp"
    for path in [*stale, fresh]:
        path.write_text("{")
    for path in stale:
        os.utime(path, (time.time() - 3600, time.time() - 3600))
    pm(capsys, home, "sync")
    assert [p.exists() for p in stale] == [False, False]
    assert fresh.exists()  # a writer may still be busy with it


def test_enable_with_a_config_that_is_a_fifo_is_refused_not_waited_on(tmp_path: Path) -> None:
    from agent.cli import main

    home = make_home(tmp_path)
    (home / "config.yaml").unlink()
    os.mkfifo(home / "config.yaml")
    started = time.monotonic()
    assert main(["plugins", "enable", "good", "--home", str(home)]) == 1
    assert time.monotonic() - started < 10
    receipt = latest(home)
    assert "is not a regular file (a FIFO)" in receipt["failure"]["message"]
