"""Fixtures for generation tests: a real local index of tiny wheels, real homes, real uv.

Core requires ``alpha<2``; plugin ``notes`` (pyproject) requires ``beta>=1`` (which requires
``alpha>=1``); plugin ``search`` (manifest) requires ``gamma[fast]==1.0`` (the extra pulls
``delta``). A sync of that home pins alpha 1.0, beta 1.0, gamma 1.0, delta 1.0.

Every receipt a test leaves under its tmp_path is validated against the shipped schema.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pm.testing import LocalIndex, add_plugin, index_from_spec, make_home
from pm.testing.cli import isolated_env
from pm.testing.receipts import assert_valid_receipt

ROOT = Path(__file__).resolve().parents[3]

SPEC: dict[str, dict[str, Any]] = {
    "alpha": {"1.0": None, "2.0": None},
    "beta": {"1.0": ["alpha>=1"]},
    "gamma": {"1.0": {"extras": {"fast": ["delta>=1"]}}},
    "delta": {"1.0": None},
    "epsilon": {"1.0": None},
}
CORE = '[project]\nname = "host"\nversion = "1.0"\ndependencies = ["alpha<2"]\n'



@pytest.fixture(scope="session")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalIndex]:
    with index_from_spec(tmp_path_factory.mktemp("dists"), SPEC) as started:
        yield started


@pytest.fixture(scope="session")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Core's pyproject, an empty bundled-plugins folder and one pm cache for the session (a warm
    uv cache keeps each build at a few hundred milliseconds)."""
    base = tmp_path_factory.mktemp("pm-shared")
    (base / "core.toml").write_text(CORE)
    (base / "bundled").mkdir()
    return base


@pytest.fixture
def env(index: LocalIndex, shared: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """pm's environment for this test (set in-process, returned for subprocesses)."""
    return isolated_env(monkeypatch, index_url=index.url, shared=shared)


@pytest.fixture
def home(tmp_path: Path, env: dict[str, str]) -> Iterator[Path]:
    """A home with two members (notes, search); every receipt written under tmp_path is checked."""
    home = make_home(tmp_path / "home", config={"plugins": {"enabled": ["notes", "search"]}})
    add_plugin(home / "plugins", "notes", style="pyproject", dependencies=["beta>=1"])
    add_plugin(home / "plugins", "search", style="manifest", dependencies=["gamma[fast]==1.0"])
    yield home
    for path in tmp_path.rglob("pm/receipts/*.json"):
        assert_valid_receipt(json.loads(path.read_text()))
