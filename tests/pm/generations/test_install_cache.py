"""The install step takes files from uv's cache first: a warm cache builds with no download, and
the sha256 of the resolution is still checked against the cached bytes."""

from __future__ import annotations

from pathlib import Path

from pm.env import generations
from pm.testing import LocalIndex

from .helpers import PINS, edit, pm, run_python


def _wheel_requests(index: LocalIndex) -> list[str]:
    """Paths of every wheel uv asked the index for (GET or HEAD; pm itself reads only metadata)."""
    return [path for _, path in index.requests if path.endswith(".whl")]


def test_a_build_whose_files_are_all_in_uv_cache_downloads_nothing(home: Path, index: LocalIndex, capsys) -> None:
    assert pm(capsys, home, "sync").code == 0  # every pinned wheel is now in uv's cache
    first = generations.selected(home)
    edit(home / "plugins" / "notes" / "pyproject.toml", '"beta>=1"', '"beta>=1,!=0.5"')  # new inputs, same pins
    index.reset_log()

    result = pm(capsys, home, "sync", "--json")

    assert result.code == 0, result.data.get("failure")
    built = generations.selected(home)
    assert built.id != first.id and {p["name"]: p["version"] for p in result.data["resolution"]["packages"]} == PINS
    assert _wheel_requests(index) == []
    assert run_python(built, "import alpha, beta, gamma, delta; print(beta.__version__)") == "1.0"


def test_a_cold_cache_downloads_every_pinned_file(home: Path, index: LocalIndex, capsys, monkeypatch,
                                                  tmp_path: Path) -> None:
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cold-cache"))
    index.reset_log()

    result = pm(capsys, home, "sync", "--json")

    assert result.code == 0, result.data.get("failure")
    assert {Path(p).name for p in _wheel_requests(index)} == {
        f"{name}-{version}-py3-none-any.whl" for name, version in PINS.items()}
    assert run_python(generations.selected(home), "import delta; print(delta.__version__)") == "1.0"
