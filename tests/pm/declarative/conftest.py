"""Fixtures for declarative builds: real wheels in a folder (the ``--find-links`` of an air-gapped
machine), a real local index serving them, real homes, real uv; every receipt is schema-checked.

Core requires ``alpha<2``; plugin ``notes`` (pyproject) requires ``beta>=1`` (which requires
``alpha>=1``); plugin ``search`` (manifest) requires ``gamma[fast]==1.0`` (the extra pulls
``delta``). A sync pins alpha 1.0, beta 1.0, delta 1.0, gamma 1.0.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pm.testing import IndexFile, LocalIndex, add_plugin, build_packages, make_home
from pm.testing.cli import isolated_env
from pm.testing.receipts import assert_valid_receipt

SPEC: dict[str, dict[str, Any]] = {
    "alpha": {"1.0": None, "2.0": None},
    "beta": {"1.0": ["alpha>=1"]},
    "gamma": {"1.0": {"extras": {"fast": ["delta>=1"]}}},
    "delta": {"1.0": None},
    "epsilon": {"1.0": None},
}
PINS = {"alpha": "1.0", "beta": "1.0", "delta": "1.0", "gamma": "1.0"}
CORE = '[project]\nname = "host"\nversion = "1.0"\ndependencies = ["alpha<2"]\n'


@pytest.fixture(scope="session")
def dists(tmp_path_factory: pytest.TempPathFactory) -> list[IndexFile]:
    """The wheels, built once into one folder (``wheels.parent``)."""
    return build_packages(tmp_path_factory.mktemp("declarative-dists"), SPEC)


@pytest.fixture(scope="session")
def wheels(dists: list[IndexFile]) -> Path:
    """The folder holding every wheel: what ``--find-links`` points at on an offline machine."""
    (folder,) = {d.path.parent for d in dists}
    return folder


@pytest.fixture
def index(dists: list[IndexFile]) -> Iterator[LocalIndex]:
    """A started index of its own (a test may stop it to go offline)."""
    with LocalIndex(dists) as served:
        yield served


@pytest.fixture(scope="session")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Core's pyproject, an empty bundled-plugins folder and a pm cache (warm uv cache) per session."""
    base = tmp_path_factory.mktemp("declarative-shared")
    (base / "core.toml").write_text(CORE)
    (base / "bundled").mkdir()
    return base


@pytest.fixture
def env(index: LocalIndex, shared: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """pm's environment for this test (set in-process, returned for subprocesses)."""
    return isolated_env(monkeypatch, index_url=index.url, shared=shared)


@pytest.fixture
def new_home(tmp_path: Path, env: dict[str, str]) -> Iterator[Callable[[str], Path]]:
    """``new_home(name)``: a home under tmp_path with members notes and search (same declarations
    in every home); every receipt written under tmp_path is checked against the schema."""

    def make(name: str) -> Path:
        home = make_home(tmp_path / name, config={"plugins": {"enabled": ["notes", "search"]}})
        add_plugin(home / "plugins", "notes", style="pyproject", dependencies=["beta>=1"])
        add_plugin(home / "plugins", "search", style="manifest", dependencies=["gamma[fast]==1.0"])
        return home

    yield make
    for path in tmp_path.rglob("pm/receipts/*.json"):
        assert_valid_receipt(json.loads(path.read_text()))


@pytest.fixture
def home(new_home: Callable[[str], Path]) -> Path:
    return new_home("home")
