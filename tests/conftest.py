"""Shared fixtures over :mod:`pm.testing`: a clean uv environment and started local indexes."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from uv import find_uv_bin

from pm.testing import NO_TOOL_FILES, TOOL_VARIABLES, LocalIndex, index_from_spec

# A dead index or a 503 is retried with backoff (pm.index.http); the suite asks for failures on
# purpose, so it fails at once unless a test sets retries itself (tests/pm/index/test_network.py).
os.environ["HERMES_PM_HTTP_RETRIES"] = "0"
# No test has a person to ask: consent to a change's cargo is assumed (pm.ops.consent), as a script
# with `--yes` would; the consent tests (tests/pm/ops/test_consent.py) take it away.
os.environ["HERMES_PM_ASSUME_YES"] = "1"


@pytest.fixture(scope="session")
def uv_bin() -> str:
    """Path of the real uv binary shipped with the ``uv`` distribution."""
    return str(find_uv_bin())


@pytest.fixture
def uv_env(tmp_path: Path) -> dict[str, str]:
    """Environment for uv subprocesses: no user config, no downloads, a private cache."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("UV_", "PIP_")) and k != "VIRTUAL_ENV"}
    env.update(UV_NO_CONFIG="1", UV_PYTHON_DOWNLOADS="never",
               UV_CACHE_DIR=str(tmp_path / "uv-cache"), NO_COLOR="1")
    return env


@pytest.fixture
def make_index(tmp_path: Path) -> Iterator[Callable[..., LocalIndex]]:
    """``make_index(spec, **knobs)``: build ``spec`` under tmp_path and return a started index."""
    started: list[LocalIndex] = []

    def make(spec: Mapping[str, Mapping[str, Any]], **knobs: Any) -> LocalIndex:
        index = index_from_spec(tmp_path / f"dists-{len(started)}", spec, **knobs).start()
        started.append(index)
        return index

    yield make
    for index in started:
        index.stop()


@pytest.fixture(autouse=True)
def _no_public_index(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The default suite needs no internet: pm's last-resort index (after flag, environment and
    config) becomes a closed port on 127.0.0.1, so a test that forgets to point pm at its local
    index fails fast with "connection refused" instead of reaching the public index. Tests marked
    ``network`` keep the real default. The machine's own uv/pip index settings (variables,
    uv.toml, pip.conf: pm honours them) are turned off for every test (pm.testing.environ)."""
    for variable in TOOL_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    for variable, value in NO_TOOL_FILES.items():
        monkeypatch.setenv(variable, value)
    if request.node.get_closest_marker("network") is None:
        monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple/")


@pytest.fixture(autouse=True)
def _no_profile_env_left() -> Iterator[None]:
    """What a one-profile command put into ``os.environ`` from a profile's ``.env``
    (:mod:`agent.process_env`) is gone when the test ends, as when its process would end."""
    yield
    import sys

    loaded = sys.modules.get("agent.process_env")  # never imported on a test's behalf
    if loaded is not None:
        loaded.forget()
