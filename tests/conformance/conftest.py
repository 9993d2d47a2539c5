"""One local index for every applicable packse scenario, built once per test session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pm.testing import LocalIndex, build_packages

from .scenarios import SCENARIOS_DIR, Scenario, load_scenarios


def applicable_scenarios() -> list[Scenario]:
    """Every scenario that describes the test interpreter's target (the index serves these)."""
    if not SCENARIOS_DIR.is_dir():
        return []
    return [s for s in load_scenarios() if s.other_target() is None]


@pytest.fixture(scope="session")
def packse_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalIndex]:
    """A started index serving every applicable scenario's packages (real wheels and sdists).

    Names are prefixed per scenario (see :mod:`.scenarios`), so one index serves them all; a
    name built twice would mean two scenarios share a package, which is refused.
    """
    dest = tmp_path_factory.mktemp("packse-dists")
    spec: dict[str, dict[str, dict[str, Any]]] = {}
    for scenario in applicable_scenarios():
        for name, versions in scenario.index_spec().items():
            if name in spec:
                raise ValueError(f"{scenario.id}: package {name!r} is already on the index")
            spec[name] = versions
    with LocalIndex(build_packages(dest, spec)) as index:
        yield index


@pytest.fixture(scope="session")
def empty_core(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A core that adds nothing: ``[project] dependencies = []`` and an empty lock."""
    root = tmp_path_factory.mktemp("core")
    (root / "pyproject.toml").write_text('[project]\nname = "host"\ndependencies = []\n')
    (root / "lock.txt").write_text("")
    return root / "pyproject.toml", root / "lock.txt"
