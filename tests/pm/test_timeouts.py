"""Issue 25: one rule turns a number from config, flags or the environment into a timeout
(:func:`pm.base.lock.seconds`): finite, 0 or more; the config names its file and key, the flag itself."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from agent.bounded import DEFAULT_TIMEOUT, TIMEOUT_ENV, timeout
from pm.base.errors import ConfigError
from pm.base.lock import seconds
from pm.index.bounds import REQUEST_DEADLINE, body_bounds
from pm.inputs.config import read_config
from pm.testing.cli import pm


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -1, True, "5"])
def test_what_is_not_a_number_of_seconds(value: Any) -> None:
    assert seconds(value) is None


def test_zero_is_a_timeout_unless_it_must_be_positive() -> None:
    assert seconds(0) == 0.0
    assert seconds(0, positive=True) is None
    assert seconds(2) == 2.0


@pytest.mark.parametrize("text", [".nan", ".inf", "-.inf", "-1"])
def test_a_lock_timeout_in_config_that_is_no_timeout_is_refused_with_file_and_key(tmp_path: Path, text: str) -> None:
    (tmp_path / "config.yaml").write_text(f"pm:\n  lock_timeout: {text}\n")
    with pytest.raises(ConfigError) as caught:
        read_config(tmp_path)
    assert str(caught.value).startswith(f"{tmp_path / 'config.yaml'}: pm.lock_timeout: must be a finite number, "
                                        "0 or more, got ")


def test_nan_from_config_and_from_the_flag_are_both_refused(capsys: Any, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("pm:\n  lock_timeout: .nan\n")
    from_config = pm(capsys, home, "sync")
    assert from_config.code == 1
    assert f"{home / 'config.yaml'}: pm.lock_timeout: must be a finite number, 0 or more, got nan" in from_config.err
    (home / "config.yaml").write_text("")
    from_flag = pm(capsys, home, "sync", "--lock-timeout=nan")
    assert from_flag.code == 2
    assert "--lock-timeout: nan is not a number of seconds (a finite number, 0 or more)" in from_flag.err


@pytest.mark.parametrize("text", ["nan", "inf", "-3", "0", "soon"])
def test_a_timeout_from_the_environment_that_is_no_timeout_keeps_the_default(monkeypatch: Any, text: str) -> None:
    monkeypatch.setenv(TIMEOUT_ENV, text)
    monkeypatch.setenv("HERMES_PM_REQUEST_DEADLINE", text)
    assert timeout() == DEFAULT_TIMEOUT
    assert body_bounds()[1] == REQUEST_DEADLINE
    monkeypatch.setenv(TIMEOUT_ENV, "2.5")
    assert timeout() == 2.5


_HOLD = """
import sys, time
import os
from pathlib import Path
from pm.base.lock import home_lock
from pm.base.store import Store
home = Path(sys.argv[1])
with home_lock(home, Store.for_home(home)):
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


@pytest.mark.parametrize(("text", "key", "says"), [
    ("pm:\n  lock_timeout: .nan\n", "pm.lock_timeout", "must be a finite number, 0 or more, got nan"),
    ("pm:\n  index_url: 5\n", "pm.index_url", "must be str, got 5"),
    ("plugins:\n  enabled: notes\n", "plugins.enabled", "must be a list of plugin names, got str 'notes'"),
])
def test_a_broken_config_is_refused_before_any_wait_for_the_lock(capsys: Any, tmp_path: Path, text: str,
                                                                 key: str, says: str) -> None:
    """Issue 34: with the home lock held by another process, `pm sync` on a broken config waited
    for the lock (600 s by default) before it said the config was broken. Now it says so at once.
    The holder lets go after 8 s, so before the fix this failed on the time, not by hanging."""
    import subprocess
    import sys
    import time

    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text(text)
    root = Path(__file__).resolve().parents[2]
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(home), "8"], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(root)})
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        started = time.monotonic()
        result = pm(capsys, home, "sync")
        waited = time.monotonic() - started
    finally:
        holder.kill()
        holder.wait()
    assert result.code == 1
    assert f"{home / 'config.yaml'}: {key}: {says}" in result.err
    assert "waiting for another pm process" not in result.err
    assert waited < 3, waited
