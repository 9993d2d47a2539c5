"""Issue 15: hostile plugin files and configs get a clear error naming the file; every other plugin
is unaffected; output and receipts stay small; nothing crashes with a traceback."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from pm.testing.cli import latest, pm
from tests.pm.test_yaml import BOMB

GOOD = "[project]\nname = 'good'\ndependencies = ['alpha>=1']\n"


def home_with(tmp_path: Path, files: dict[str, str], enabled: list[str]) -> Path:
    home = tmp_path / "home"
    files = {"config.yaml": "plugins:\n  enabled: [" + ", ".join(["good", *enabled]) + "]\n",
             "plugins/good/pyproject.toml": GOOD, **files}
    for name, text in files.items():
        path = home / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return home


def scan(capsys: Any, home: Path) -> tuple[dict[str, Any], str]:
    started = time.monotonic()
    result = pm(capsys, home, "scan", "--json")
    assert time.monotonic() - started < 5
    assert result.code == 0, result.err
    assert len(result.out) + len(result.err) < 20_000
    assert (home / "pm/receipts/latest.json").stat().st_size < 50_000
    plugins = {p["name"]: p for p in latest(home)["inputs"]["plugins"]}
    assert plugins["good"]["status"] == "member"
    assert plugins["good"]["requirements"] == ["alpha>=1"]
    return plugins, result.out + result.err


@pytest.mark.parametrize(("files", "bad", "reason"), [
    ({"plugins/deep/pyproject.toml": "x = " + "[" * 100_000}, "deep", "nests arrays or tables too deeply"),
    ({"plugins/deep/plugin.json": '{"x": ' + "[" * 100_000}, "deep", "is not valid JSON: it nests too deeply"),
    ({"plugins/deep/plugin.yaml": "x: " + "[" * 100_000}, "deep", "is not valid YAML: line 1"),
    ({"plugins/dyn/pyproject.toml": "[project]\nname = 'd'\ndynamic = 5\n"}, "dyn",
     "project.dynamic: must be a list of field names, got 5"),
    ({"plugins/dup/plugin.yaml": "pip_dependencies: [a]\npip_dependencies: [b]\n"}, "dup",
     "duplicate key 'pip_dependencies' (first on line 1, again on line 2)"),
    ({"plugins/long/plugin.yaml": "pip_dependencies: " + json.dumps(["a b" * 100_000])}, "long",
     "is not a valid PEP 508 requirement"),
])
def test_a_hostile_enabled_plugin_is_invalid_and_named(capsys: Any, tmp_path: Path, files: dict[str, str],
                                                       bad: str, reason: str) -> None:
    plugins, _ = scan(capsys, home_with(tmp_path, files, [bad]))
    assert plugins[bad]["status"] == "invalid"
    assert reason in plugins[bad]["reason"]
    assert len(plugins[bad]["reason"]) < 2_000


def test_an_alias_bomb_in_a_plugin_that_is_not_enabled_costs_nothing(capsys: Any, tmp_path: Path) -> None:
    """Finding 3: 13 s, 1.5 GB and 312 MB of output for a 373-byte file nobody enabled."""
    plugins, _ = scan(capsys, home_with(tmp_path, {"plugins/bomb/plugin.yaml": BOMB}, []))
    assert "expands to more than 100000 nodes" in plugins["bomb"]["reason"]


def test_an_alias_bomb_in_config_is_a_clear_error(capsys: Any, tmp_path: Path) -> None:
    home = home_with(tmp_path, {}, [])
    (home / "config.yaml").write_text("plugins:\n  enabled: [good]\n" + BOMB)
    started = time.monotonic()
    result = pm(capsys, home, "scan")
    assert time.monotonic() - started < 5
    assert result.code == 1
    assert "config.yaml: is not valid YAML: line 3, " in result.err
    assert "expands to more than 100000 nodes" in result.err
    assert "Traceback" not in result.err


def test_a_second_plugins_block_in_config_is_an_error_naming_both_lines(capsys: Any, tmp_path: Path) -> None:
    """Finding 4: the second block silently dropped the first's plugins."""
    home = home_with(tmp_path, {}, [])
    (home / "config.yaml").write_text("plugins:\n  enabled: [good]\nplugins:\n  disabled: [x]\n")
    result = pm(capsys, home, "scan")
    assert result.code == 1
    assert "duplicate key 'plugins' (first on line 1, again on line 3)" in result.err


def test_a_deeply_nested_core_lock_is_a_clear_error(capsys: Any, tmp_path: Path) -> None:
    home = home_with(tmp_path, {}, [])
    lock = tmp_path / "pylock.toml"
    lock.write_text("x = " + "[" * 100_000)
    result = pm(capsys, home, "scan", "--core-lock", str(lock))
    assert result.code == 1
    assert "nests arrays or tables too deeply" in result.err
    assert "Traceback" not in result.err


def test_the_host_reads_a_hostile_config_as_empty_not_forever(tmp_path: Path) -> None:
    """The host's own settings (agent_config, runtime_cwd) read config.yaml through pm's bounds."""
    import os

    from agent import agent_config

    home = home_with(tmp_path, {}, [])
    (home / "config.yaml").write_text(BOMB)
    started = time.monotonic()
    assert agent_config.load(home) == {}
    (home / "config.yaml").unlink()
    os.mkfifo(home / "config.yaml")
    assert agent_config.load(home) == {}
    assert time.monotonic() - started < 5
