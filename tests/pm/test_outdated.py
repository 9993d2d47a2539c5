"""``hermes pm outdated``: per pin of the selected generation, the version an upgrade would take,
the newest release for the target, and who holds it back — on a real local index of real wheels,
a home synced for real (uv), then newer releases published.

The home: core requires ``corelib`` and ``same`` and locks ``corelib==1.0``; plugin ``notes``
(pyproject) requires ``free``, ``capped<2`` and the pre-release ``pre>=2.0b1``; plugin ``search``
(manifest) requires ``app`` (whose only release requires ``deep<2``), ``tool``, ``needy``,
``modern`` and ``chain``. Synced at 1.0 everywhere (``pre`` at 2.0b1); then 2.0 of most appears:
``tool 2.0`` requires ``corelib>=2``, ``chain 2.0`` requires ``mid`` (which requires
``corelib>=2``), ``needy 2.0`` requires a project no index has, ``modern 2.0`` another Python;
``free`` also gets a pre-release and a yanked 3.0, and ``pre`` a 2.0b2.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from agent.cli import main as hermes
from pm.env import generations
from pm.inputs.union import Origin
from pm.ops.holders import Holder, excludes
from pm.ops.outdated import PinStatus, outdated
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
    "needy": {"1.0": None},
    "modern": {"1.0": None},
    "chain": {"1.0": None},
    "pre": {"1.0": None, "2.0b1": None},
}
LATER: dict[str, dict[str, Any]] = {
    "corelib": {"2.0": None},
    "free": {"2.0": None, "3.0b1": None, "3.0": {"yanked": "broken"}},
    "capped": {"2.0": None},
    "deep": {"2.0": None},
    "tool": {"2.0": ["corelib>=2"]},
    "newbie": {"1.0": None},
    "needy": {"2.0": ["ghost>=1"]},
    "modern": {"2.0": {"requires_python": ">=3.99"}},
    "chain": {"2.0": ["mid"]},
    "mid": {"1.0": ["corelib>=2"]},
    "pre": {"2.0b2": None},
}


@pytest.fixture
def index(tmp_path: Path) -> Iterator[LocalIndex]:
    with index_from_spec(tmp_path / "dists", FIRST) as started:
        yield started


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, index: LocalIndex) -> Iterator[Path]:
    home = isolated_home(tmp_path, monkeypatch, core=["corelib", "same"], lock="corelib==1.0\n", index_url=index.url,
                         config={"plugins": {"enabled": ["notes", "search"]}})
    add_plugin(home / "plugins", "notes", style="pyproject", dependencies=["free", "capped<2", "pre>=2.0b1"])
    add_plugin(home / "plugins", "search", style="manifest", dependencies=["app", "tool", "needy", "modern", "chain"])
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
        "chain    1.0     1.0      2.0     core locks corelib==1.0 (newest: chain 2.0 requires mid; "
        "mid 1.0 requires corelib>=2)\n"
        "corelib  1.0     1.0      2.0     core locks corelib==1.0\n"
        "deep     1.0     1.0      2.0     app 1.0 requires deep<2\n"
        "free     1.0     2.0      2.0\n"
        "needy    1.0     1.0      2.0     needy 2.0 requires ghost>=1, which no release for the target satisfies\n"
        "pre      2.0b1   2.0b2    2.0b2\n"
        "tool     1.0     1.0      2.0     core locks corelib==1.0 (newest: tool 2.0 requires corelib>=2)\n")
    # modern 2.0 requires Python >=3.99: not a release for this target, so modern 1.0 is the newest
    # pre is pinned at a pre-release (plugin notes asks for one): the newest counts pre-releases
    assert f"8 of 11 pins of generation {selected.id} have a newer release; 6 held back" in result.err
    receipt = latest(synced)
    assert (receipt["kind"], receipt["outcome"], receipt["exit_code"]) == ("outdated", "ok", 0)
    # it changed nothing: the same generation selected, no build, the home's files as they were
    # (but the new receipt)
    assert generations.selected(synced) == selected
    after = tree_digest(synced)
    assert {k for k in after.keys() ^ before.keys()} <= {k for k in after if "/receipts/" in f"/{k}"}
    assert {k: v for k, v in after.items() if "receipts" not in k} == {k: v for k, v in before.items()
                                                                       if "receipts" not in k}


def test_json_has_every_field_and_holders_with_their_origins(synced: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = pm(capsys, synced, "outdated", "--json")
    assert result.code == 0
    data = result.data
    assert data["kind"] == "outdated" and data["receipt_path"] == str(latest_path(synced))
    report = data["outdated"]
    assert report["generation"] == data["generation"]["id"] == generations.selected(synced).id
    assert (report["outdated"], report["held_back"], report["added"]) == (8, 6, [])
    assert rows(data) == {"app": ("1.0", "1.0", "1.0"), "capped": ("1.0", "1.0", "2.0"),
                          "chain": ("1.0", "1.0", "2.0"), "corelib": ("1.0", "1.0", "2.0"),
                          "deep": ("1.0", "1.0", "2.0"), "free": ("1.0", "2.0", "2.0"),
                          "modern": ("1.0", "1.0", "1.0"), "needy": ("1.0", "1.0", "2.0"),
                          "pre": ("2.0b1", "2.0b2", "2.0b2"),
                          "same": ("1.0", "1.0", "1.0"), "tool": ("1.0", "1.0", "2.0")}
    (free,) = [p for p in report["packages"] if p["name"] == "free"]
    assert free == {"name": "free", "pinned": "1.0", "upgrade": "2.0", "newest": "2.0", "outdated": True,
                    "moves": True, "held_back": False, "holders": []}
    notes = str(synced / "plugins" / "notes" / "pyproject.toml")
    assert holders(data, "capped") == [{"kind": "requires", "requirement": "capped<2", "package": None,
                                        "origin": {"kind": "plugin", "plugin": "notes", "file": notes},
                                        "locked": False, "via": []}]
    assert holders(data, "corelib") == [{"kind": "requires", "requirement": "corelib==1.0", "package": None,
                                         "origin": {"kind": "core"}, "locked": True, "via": []}]
    assert holders(data, "deep") == [{"kind": "requires", "requirement": "deep<2", "package": "app 1.0",
                                      "origin": None, "locked": False, "via": []}]
    assert holders(data, "tool") == [{"kind": "dependency", "requirement": "corelib==1.0", "package": None,
                                      "origin": {"kind": "core"}, "locked": True,
                                      "via": ["tool 2.0 requires corelib>=2"]}]
    assert holders(data, "chain") == [{"kind": "dependency", "requirement": "corelib==1.0", "package": None,
                                       "origin": {"kind": "core"}, "locked": True,
                                       "via": ["chain 2.0 requires mid", "mid 1.0 requires corelib>=2"]}]
    assert holders(data, "needy") == [{"kind": "unavailable", "requirement": "ghost>=1", "package": "needy 2.0",
                                       "origin": None, "locked": False, "via": []}]
    assert holders(data, "app") == holders(data, "same") == holders(data, "modern") == []


def latest_path(home: Path) -> Path:
    (path,) = [p for p in sorted((home / "pm" / "receipts").glob("*-outdated-*.json"))][-1:]
    return path


def test_a_yanked_or_pre_release_newest_is_not_the_newest_unless_pre_releases_are_allowed(
        synced: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # free 3.0 is yanked and 3.0b1 a pre-release: 2.0 is the newest (test above); with
    # pre-releases allowed the upgrade and the newest are the pre-release, never the yanked file
    data = pm(capsys, synced, "outdated", "--json", "--prereleases", "allow").data
    assert rows(data)["free"] == ("1.0", "3.0b1", "3.0b1")


def test_a_release_after_exclude_newer_is_not_the_newest(synced: Path, index: LocalIndex, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    index.add_files(build_packages(tmp_path / "future", {"capped": {"3.0": {"upload_time": "2099-01-01T00:00:00Z"}}}))
    assert rows(pm(capsys, synced, "outdated", "--json").data)["capped"] == ("1.0", "1.0", "3.0")
    cut = pm(capsys, synced, "outdated", "--json", "--exclude-newer", "2030-01-01").data
    assert rows(cut)["capped"] == ("1.0", "1.0", "2.0")


def test_all_shows_every_pin(synced: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = pm(capsys, synced, "outdated", "--all").out.splitlines()
    assert [line.split()[0] for line in out[1:]] == ["app", "capped", "chain", "corelib", "deep", "free", "modern",
                                                     "needy", "pre", "same", "tool"]
    assert out[1].split() == ["app", "1.0", "1.0", "1.0"] and out[10].split() == ["same", "1.0", "1.0", "1.0"]


def test_offline_answers_from_the_cached_pages_alone(synced: Path, index: LocalIndex,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    # before any page of the new releases was read, the cache holds the pages the sync read
    index.reset_log()
    offline = pm(capsys, synced, "outdated", "--offline", "--json")
    assert offline.code == 0 and index.requests == []
    assert offline.data["outdated"]["outdated"] == 0
    assert pm(capsys, synced, "outdated").code == 0  # online: reads the new pages
    index.reset_log()
    again = pm(capsys, synced, "outdated", "--offline", "--json")
    assert again.code == 0 and index.requests == []
    assert rows(again.data)["capped"] == ("1.0", "1.0", "2.0") and again.data["reused_resolution"] is True


def test_an_index_that_fails_is_a_failure_not_a_verdict(synced: Path, index: LocalIndex,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    index.fail_projects = {"capped": 503}
    result = pm(capsys, synced, "outdated", "--json")
    assert result.code == 1
    assert (result.data["outcome"], result.data["failure"]["kind"]) == ("failed", "index")
    assert "outdated" not in result.data
    plain = pm(capsys, synced, "outdated")
    assert plain.code == 1 and plain.out == ""
    assert "this is a failure to fetch, not a verdict on your plugins" in plain.err


def test_no_generation_says_so_and_points_at_sync(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = pm(capsys, home, "outdated")
    assert result.code == 1 and result.out == ""
    assert f"error: no generation is selected for {home}: nothing is pinned to compare with the index" in result.err
    receipt = latest(home)
    assert (receipt["kind"], receipt["outcome"], receipt["failure"]["kind"]) == ("outdated", "failed", "no-generation")
    assert receipt["next_steps"] == [{"command": f"hermes pm sync --home {home}",
                                      "why": "build a generation; then ask again"}]
    assert pm(capsys, home, "outdated", "--json").data["failure"]["kind"] == "no-generation"


def test_changed_inputs_drop_and_add_pins(synced: Path, capsys: pytest.CaptureFixture[str]) -> None:
    add_plugin(synced / "plugins", "search", style="manifest", dependencies=["app", "newbie"])  # tool dropped
    result = pm(capsys, synced, "outdated", "--json")
    assert result.code == 0
    assert rows(result.data)["tool"] == ("1.0", None, "2.0")
    assert result.data["outdated"]["added"] == [{"name": "newbie", "version": "1.0"}]
    generation = result.data["generation"]["id"]
    assert result.data["warnings"] == [f"the inputs changed since generation {generation} was built: the upgrade "
                                       "column resolves them as they are now (`hermes pm sync` builds that)"]
    table = pm(capsys, synced, "outdated").out
    assert "tool     1.0     -        2.0\n" in table


def test_a_union_without_resolution_is_a_conflict(synced: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # deep>=2 beside app 1.0's deep<2: nothing to upgrade to
    add_plugin(synced / "plugins", "notes", style="pyproject", dependencies=["free", "capped<2", "pre>=2.0b1", "deep>=2"])
    result = pm(capsys, synced, "outdated")
    assert result.code == 3 and result.out == ""
    receipt = latest(synced)
    assert (receipt["kind"], receipt["outcome"], receipt["conflict"]["plugins"]) == ("outdated", "conflict", ["search", "notes"])
    assert receipt["next_steps"] == [{"command": f"hermes pm resolve --home {synced}", "why": (
        "the union has no resolution, so nothing can be upgraded; this names the checked remedies")}]
    assert "deep>=2" in result.err


def test_the_operation_returns_the_report_as_a_value(synced: Path) -> None:
    done = outdated(synced)
    assert done.code == 0 and done.report is not None
    assert done.report.to_json() == done.receipt.extra["outdated"] == latest(synced)["outdated"]
    capped = next(p for p in done.report.pins if p.name == "capped")
    notes = Origin("notes", str(synced / "plugins" / "notes" / "pyproject.toml"))
    assert capped == PinStatus("capped", Version("1.0"), Version("1.0"), Version("2.0"),
                               (Holder("requires", "capped<2", notes),))
    assert [p.name for p in done.report.shown] == ["capped", "chain", "corelib", "deep", "free", "needy",
                                                "pre", "tool"]


def test_each_kind_of_holder_is_told_in_one_sentence(tmp_path: Path) -> None:
    file = tmp_path / "plugins" / "notes" / "pyproject.toml"
    notes = Origin("notes", str(file))
    assert Holder("requires", "lib<2", notes).describe(tmp_path) == (
        "plugin 'notes' (plugins/notes/pyproject.toml) requires lib<2")
    assert Holder("requires", "lib<2", notes).describe() == f"plugin 'notes' ({file}) requires lib<2"
    assert Holder("requires", "lib<2", Origin.core()).describe() == "core requires lib<2"
    assert Holder("requires", "lib==1.0", Origin.core(), locked=True).describe() == "core locks lib==1.0"
    assert Holder("requires", "lib<2", package="app 1.0").describe() == "app 1.0 requires lib<2"
    assert Holder("dependency", "b<2", package="c 1.0", via=("lib 2.0 requires a>=2", "a 2.0 requires b>=2")
                  ).describe() == "c 1.0 requires b<2 (newest: lib 2.0 requires a>=2; a 2.0 requires b>=2)"
    assert Holder("python", "Python >=3.99", package="lib 2.0").describe() == (
        "lib 2.0 requires Python >=3.99, not the target's")
    assert Holder("unavailable", "zz>=9", package="lib 2.0").describe() == (
        "lib 2.0 requires zz>=9, which no release for the target satisfies")
    held = PinStatus("lib", Version("1.0"), Version("1.5"), Version("2.0"))
    assert held.held_by() == ["no one requirement excludes 2.0: the upgrade resolution chose 1.5"]
    assert (held.outdated, held.moves, held.held_back) == (True, True, True)
    assert excludes("lib<2", Version("2.0")) and not excludes("lib[x]>=1", Version("2.0"))
    assert not excludes("not a requirement!", Version("2.0"))


def test_python_m_pm_and_hermes_pm_print_the_same_table(synced: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expected = pm(capsys, synced, "outdated").out
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run([sys.executable, "-m", "pm", "outdated", "--home", str(synced)], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode, done.stdout) == (0, expected), done.stderr
    assert hermes(["pm", "outdated", "--home", str(synced)]) == 0
    assert capsys.readouterr().out == expected
