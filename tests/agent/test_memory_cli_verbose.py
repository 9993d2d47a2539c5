"""Issue 25: ``-v``/``-vv``, parsed by every command that takes pm's common options, is read by
each of them — ``hermes memory`` too (it used to parse it and never look at it)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.memory_cli import main as memory
from pm.cli._output import configure


@pytest.fixture(autouse=True)
def _quiet_again() -> Iterator[None]:
    yield
    configure()


@pytest.mark.parametrize(("flag", "level"), [("-v", logging.INFO), ("-vv", logging.DEBUG)])
def test_hermes_memory_reads_v(tmp_path: Path, flag: str, level: int) -> None:
    home = tmp_path / "home"
    (home / "plugins").mkdir(parents=True)
    (home / "config.yaml").write_text("")
    memory(["status", "--home", str(home), flag])
    logger = logging.getLogger("pm")
    assert logger.level == level and logger.handlers and not logger.propagate


def test_hermes_memory_without_v_leaves_pm_log_alone(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "plugins").mkdir(parents=True)
    (home / "config.yaml").write_text("")
    memory(["status", "--home", str(home), "-v"])
    memory(["status", "--home", str(home)])
    assert logging.getLogger("pm").handlers == []
