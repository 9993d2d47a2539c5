"""Fixtures for the host side: clean environments, homes with a real core, real generations
built by ``hermes pm sync`` from real wheels, and real installed distributions on ``sys.path``."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

import agent.activation
import agent.process_env
import pm.cli
from pm.env import generations
from pm.env.generations import Generation
from pm.testing.homes import make_home
from pm.testing.wheels import build_wheel


@pytest.fixture(autouse=True)
def _process_state(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test starts as a fresh ``hermes`` process would: nothing activated, and whatever it
    puts on ``sys.path`` or in ``sys.modules`` under ``hermes_plugins`` is gone afterwards."""
    monkeypatch.setattr(agent.activation, "_ACTIVE", None)
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)
    agent.process_env.forget()
    yield
    agent.process_env.forget()  # no profile's .env values left in os.environ for the next test
    for name in set(sys.modules) - before:
        if name.startswith("hermes_plugins.") or name.startswith("acme_"):
            del sys.modules[name]
    importlib.invalidate_caches()


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No HERMES_* variables, HOME in tmp, pm's cache in tmp. Returns the tmp folder."""
    for name in ("HERMES_HOME", "HERMES_ENABLE_PROJECT_PLUGINS", "HERMES_BUNDLED_PLUGINS",
                 "HERMES_PM_INDEX_URL", "HERMES_PM_FIND_LINKS", "HERMES_PM_CORE",
                 "HERMES_PM_CORE_LOCK"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "pm-cache"))
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def new_home(clean_env: Path) -> Callable[..., Path]:
    """``new_home(config, name="home")``: a home whose core is empty (no requirements, empty
    lock), so a generation holds only what plugins declare. ``config`` is merged in."""

    def make(config: Mapping[str, Any] | None = None, name: str = "home") -> Path:
        host = clean_env / f"{name}-host"
        host.mkdir(exist_ok=True)
        (host / "pyproject.toml").write_text(
            '[project]\nname = "test-host"\nversion = "1.0"\ndependencies = []\n', encoding="utf-8")
        (host / "pins.txt").write_text("", encoding="utf-8")
        data: dict[str, Any] = {"pm": {"core": str(host / "pyproject.toml"),
                                       "core_lock": str(host / "pins.txt")}}
        data.update(config or {})
        return make_home(clean_env / name, config=data)

    return make


@pytest.fixture
def sync(clean_env: Path, capsys: pytest.CaptureFixture[str]) -> Callable[..., Generation]:
    """``sync(home, {"name": "version", ...})``: build those wheels (real, tiny) into a
    find-links folder and run the real ``hermes pm sync`` on ``home``; returns the generation."""

    def run(home: Path, packages: Mapping[str, str]) -> Generation:
        wheels = clean_env / "wheels"
        for name, version in packages.items():
            build_wheel(wheels, name, version)
        wheels.mkdir(exist_ok=True)
        code = pm.cli.main(["sync", "--home", str(home), "--no-index", "--find-links", str(wheels)])
        captured = capsys.readouterr()
        assert code == 0, captured.out + captured.err
        generation = generations.selected(home)
        assert generation is not None
        return generation

    return run
