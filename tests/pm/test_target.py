"""The target interpreter's facts: probed once, then read from pm's cache while it is unchanged."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from pm.base.errors import TargetError
from pm.inputs import target


@pytest.fixture
def counting_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A real interpreter behind a script that logs each start; pm's cache in tmp_path."""
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    log = tmp_path / "starts.log"
    script = tmp_path / "python"
    script.write_text(f'#!/bin/sh\necho started >> "{log}"\nexec "{sys.executable}" "$@"\n')
    script.chmod(0o755)
    target._probed.cache_clear()
    return script, log


def starts(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_another_interpreter_is_probed_once_then_read_from_the_cache(counting_python) -> None:
    script, log = counting_python
    first = target.target_for(str(script))
    assert starts(log) == 1 and first.python_full_version == target.current_target().python_full_version
    target._probed.cache_clear()  # a new pm process
    assert target.target_for(str(script)) == first
    assert starts(log) == 1


def test_a_changed_interpreter_is_probed_again(counting_python) -> None:
    script, log = counting_python
    target.target_for(str(script))
    stat = script.stat()
    os.utime(script, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    target._probed.cache_clear()
    target.target_for(str(script))
    assert starts(log) == 2


def test_a_damaged_entry_is_probed_again(counting_python, tmp_path: Path) -> None:
    script, log = counting_python
    first = target.target_for(str(script))
    for entry in (tmp_path / "cache" / "targets-v1").rglob("*"):
        if entry.is_file():
            entry.write_bytes(b'{"python": 1}')
    target._probed.cache_clear()
    assert target.target_for(str(script)) == first and starts(log) == 2


def test_a_missing_interpreter_is_a_target_error_and_nothing_is_cached(counting_python, tmp_path: Path) -> None:
    with pytest.raises(TargetError):
        target.target_for(str(tmp_path / "no-such-python"))
    assert not (tmp_path / "cache" / "targets-v1").exists()
