"""``hermes pm outdated``: per pin of the selected generation, the version an upgrade would take,
the newest release for the target, and who holds it back — on a real local index of real wheels,
a home synced for real (uv), then newer releases published.

The home: core requires ``corelib`` and locks ``corelib==1.0``; plugin ``notes`` (pyproject)
requires ``free`` and ``capped<2``; plugin ``search`` (manifest) requires ``app`` (whose only
release requires ``deep<2``) and ``tool``. Synced at 1.0 everywhere; then 2.0 of each appears,
``tool 2.0`` requiring ``corelib>=2``, and ``free`` also gets a pre-release and a yanked 3.0.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pm.env import generations
from pm.testing import LocalIndex, add_plugin, build_packages, index_from_spec, isolated_home, tree_digest
from pm.testing.cli import latest, pm
from pm.testing.receipts import assert_valid_receipt

FIRST: dict[str, dict[str, Any]] = {
    "corelib": {"1.0": None},
    "free": {"1.0": None},
    "capped": {"1.0": None},
    "app": {"1.0": ["deep<2"]},
    "deep": {"1.0": None},
    "tool": {"1.0": None},
    "same": {"1.0": None},
}
LATER: dict[str, dict[str, Any]] = {
    "corelib": {"2.0": None},
    "free": {"2.0": None, "3.0b1": None, "3.0": {"yanked": "broken"}},
    "capped": {"2.0": None},
    "deep": {"2.0": None},
    "tool": {"2.0": ["corelib>=2"]},
}


@pytest.fixture
def index(tmp_path: Path) -> Iterator[LocalIndex]:
    with index_from_spec(tmp_path / "dists", FIRST) as started:
        yield started


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, index: LocalIndex) -> Iterator[Path]:
    home = isolated_home(tmp_path, monkeypatch, core=["corelib", "same"], lock="corelib==1.0\n", index_url=index.url,
                         config={"plugins": {"enabled": ["notes", "search"]}})
    add_plugin(home / "plugins", "notes", style="pyproject", dependencies=["free", "capped<2"])
    add_plugin(home / "plugins", "search", style="manifest", dependencies=["app", "tool"])
    yield home
    for path in home.rglob("pm/receipts/*.json"):
        assert_valid_receipt(json.loads(path.read_text()))


@pytest.fixture
def synced(home: Path, index: LocalIndex, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """The home synced at 1.0 everywhere, then the later releases published."""
    assert pm(capsys, home, "sync").code == 0
    index.add_files(build_packages(tmp_path / "later", LATER))
    return home


def rows(data: dict[str, Any]) -> dict[str, tuple[str, str | None, str | None]]:
    return {p["name"]: (p["pinned"], p["upgrade"], p["newest"]) for p in data["outdated"]["packages"]}


def holders(data: dict[str, Any], name: str) -> list[dict[str, Any]]:
    (found,) = [p["holders"] for p in data["outdated"]["packages"] if p["name"] == name]
    return found


def test_the_table_names_who_holds_each_pin_back(synced: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = tree_digest(synced)
    selected = generations.selected(synced)
    assert selected is not None
    result = pm(capsys, synced, "outdated")
    assert result.code == 0, result.err
    assert result.out == (
        "PACKAGE  PINNED  UPGRADE  NEWEST  HELD BACK BY\n"
        "capped   1.0     1.0      2.0     plugin 'notes' (plugins/notes/pyproject.toml) requires capped<2\n"
        "corelib  1.0     1.0      2.0     core locks corelib==1.0\n"
        "deep     1.0     1.0      2.0     app 1.0 requires deep<2\n"
        "free     1.0     2.0      2.0\n"
        "tool     1.0     1.0      2.0     core locks corelib==1.0 (newest: tool 2.0 requires corelib>=2)\n")
    assert f"5 of 7 pins of generation {selected.id} have a newer release; 4 held back" in result.err
    receipt = latest(synced)
    assert (receipt["kind"], receipt["outcome"], receipt["exit_code"]) == ("outdated", "ok", 0)
    # it changed nothing: the same generation selected, no build, the home's files as they were
    # (but the new receipt)
    assert generations.selected(synced) == selected
    after = tree_digest(synced)
    assert {k for k in after.keys() ^ before.keys()} <= {k for k in after if "/receipts/" in f"/{k}"}
    assert {k: v for k, v in after.items() if "receipts" not in k} == {k: v for k, v in before.items()
                                                                       if "receipts" not in k}
