"""Metadata read by range requests is re-checked against the installed wheels.

The index here serves no PEP 658 files, so the resolver reads each wheel's METADATA by HTTP range
requests, which no sha256 covers; after uv installs the generation (checking every file's
sha256), each installed dist-info must say what the resolution used."""

from __future__ import annotations

import shutil
from pathlib import Path

from pm.env import generations
from pm.index._ranges import TAIL
from pm.testing import LocalIndex, build_packages, build_wheel
from pm.testing.wheels import metadata_bytes

from .conftest import SPEC
from .helpers import PINS, edit, pm

BETA = "beta-1.0-py3-none-any.whl"


def test_a_sync_by_ranges_checks_and_selects(home: Path, capsys, monkeypatch, tmp_path: Path) -> None:
    files = build_packages(tmp_path / "dists", SPEC)
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    with LocalIndex(files, metadata_files=False) as index:
        monkeypatch.setenv("HERMES_PM_INDEX_URL", index.url)
        result = pm(capsys, home, "sync", "--json")
        transfers = [t for t in index.transfers if t.path.startswith("/files/")]
    assert result.code == 0, result.data
    pins = {p["name"]: p["version"] for p in result.data["resolution"]["packages"]}
    assert pins == PINS
    # pm asked each wheel once for its last 64 KiB (these wheels are smaller: all of it, as 206);
    # uv then fetched the pinned files its own way (HEAD, ranges, GET) and checked their sha256.
    wheels = sorted(f"/files/{name}-{version}-py3-none-any.whl" for name, version in PINS.items())
    by_pm = [t for t in transfers if t.range == f"bytes=-{TAIL}"]
    assert sorted(t.path for t in by_pm) == wheels and {t.status for t in by_pm} == {206}
    # Each pinned wheel went out whole exactly once: to uv, for the install (none to pm).
    whole = sorted(t.path for t in transfers if t.method == "GET" and t.range is None)
    assert whole == wheels


def test_metadata_by_range_unlike_the_installed_wheel_fails_the_sync(home: Path, capsys, monkeypatch,
                                                                     tmp_path: Path) -> None:
    """A mirror whose range answers come from a stale copy of beta's wheel (it said beta needs
    epsilon too) while the whole file, which uv installs and hash-checks, is the real one."""
    files = build_packages(tmp_path / "dists", SPEC)
    stale = build_wheel(tmp_path / "stale", "beta", "1.0", requires_dist=["alpha>=1", "epsilon>=1"])
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache-1"))
    with LocalIndex(files, metadata_files=False) as index:
        monkeypatch.setenv("HERMES_PM_INDEX_URL", index.url)
        assert pm(capsys, home, "sync").code == 0
        before = generations.selected(home)
        assert before is not None
        edit(home / "plugins" / "notes" / "pyproject.toml", '"beta>=1"', '"beta>=1", "delta"')
        index.stale_ranges[BETA] = stale
        monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache-2"))
        result = pm(capsys, home, "sync", "--json")
        url = f"{index.root}/files/{BETA}"
    assert (result.code, result.data["outcome"], result.data["conflict"]) == (1, "failed", None)
    assert result.data["failure"]["kind"] == "metadata-mismatch"
    assert result.data["failure"]["message"] == (
        f"{url}: the installed wheel's Requires-Dist differs from the metadata read by range requests "
        "when resolving (resolved with 'alpha>=1', 'epsilon>=1'; installed: 'alpha>=1'); the index "
        "served other bytes for the ranges than for the file, so this resolution cannot be trusted")
    after = generations.selected(home)
    assert after is not None and after.id == before.id
    assert generations.all_ids(home) == [before.id]


def test_a_reused_resolution_keeps_its_range_metadata_for_the_check(home: Path, capsys, monkeypatch,
                                                                    tmp_path: Path) -> None:
    """`pm resolve` reads beta's metadata by range (stale) and stores the resolution; `pm sync`
    reuses it (the pages are unchanged) even with the range cache gone and the mirror fixed, and
    still checks the installed wheel against the metadata that resolution was made with."""
    files = build_packages(tmp_path / "dists", SPEC)
    stale = build_wheel(tmp_path / "stale", "beta", "1.0", requires_dist=["alpha>=1", "epsilon>=1"])
    cache = tmp_path / "cache"
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(cache))
    with LocalIndex(files, metadata_files=False) as index:
        monkeypatch.setenv("HERMES_PM_INDEX_URL", index.url)
        index.stale_ranges[BETA] = stale
        assert pm(capsys, home, "resolve").code == 0
        shutil.rmtree(cache / "ranges-v1")
        index.stale_ranges.clear()
        result = pm(capsys, home, "sync", "--json")
        url = f"{index.root}/files/{BETA}"
    assert (result.code, result.data["outcome"]) == (1, "failed")
    assert result.data["failure"]["message"].startswith(
        f"{url}: the installed wheel's Requires-Dist differs from the metadata read by range requests")
    assert generations.selected(home) is None


def test_a_pep_658_metadata_file_unlike_its_wheel_fails_the_sync_naming_it(home: Path, capsys, monkeypatch,
                                                                          tmp_path: Path) -> None:
    """An index whose .metadata file for beta says it needs epsilon too, while the wheel (which uv
    installs and hash-checks) does not: caught by pm, naming the file, not left to uv's text."""
    files = build_packages(tmp_path / "dists", SPEC)
    stale = build_wheel(tmp_path / "stale", "beta", "1.0", requires_dist=["alpha>=1", "epsilon>=1"])
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    with LocalIndex(files) as index:
        index.lying_metadata[BETA] = metadata_bytes(stale)
        monkeypatch.setenv("HERMES_PM_INDEX_URL", index.url)
        result = pm(capsys, home, "sync", "--json")
        url = f"{index.root}/files/{BETA}"
    assert (result.code, result.data["outcome"], result.data["conflict"]) == (1, "failed", None)
    assert result.data["failure"]["message"] == (
        f"{url}: the installed wheel's Requires-Dist differs from the metadata of its PEP 658 metadata file "
        "when resolving (resolved with 'alpha>=1', 'epsilon>=1'; installed: 'alpha>=1'); the index's "
        "metadata file disagrees with the wheel it describes, so this resolution cannot be trusted")
    assert generations.selected(home) is None and generations.all_ids(home) == []
