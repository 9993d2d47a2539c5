"""``hermes pm audit``: the selected generation's pins with published advisories, from the
index's JSON API (PyPI's ``/pypi/<name>/<version>/json`` shape, served by the local index on
127.0.0.1), each with the fix and whether it fits (resolved, constrained to it); a home synced
for real (uv), then fixes published.

The home: core requires ``corelib``; plugin ``notes`` requires ``lib``, ``capped<2`` and
``quiet``. Synced at 1.0 everywhere; then ``lib 1.1`` and ``capped 2.0`` appear. Advisories:
``lib 1.0`` (fixed in 1.1: fits), ``capped 1.0`` (fixed in 2.0: the plugin's ``capped<2``
refuses it), ``corelib 1.0`` (no fix published), ``quiet 1.0`` (withdrawn: not one).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from pm.index.advisories import json_api_base
from pm.ops.audit import audit
from pm.testing import LocalIndex, add_plugin, build_packages, index_from_spec, isolated_home
from pm.testing.cli import latest, pm
from pm.testing.receipts import assert_valid_receipt

FIRST: dict[str, dict[str, Any]] = {"corelib": {"1.0": None}, "lib": {"1.0": None}, "capped": {"1.0": None},
                                    "quiet": {"1.0": None}}
LATER: dict[str, dict[str, Any]] = {"lib": {"1.1": None}, "capped": {"2.0": None}}


def cells(table: str) -> list[list[str]]:
    """A table's rows as their cells (columns are two spaces or more apart)."""
    return [re.split(r"\s{2,}", line.strip()) for line in table.splitlines()]


def advisory(ident: str, fixed: list[str], **more: Any) -> dict[str, Any]:
    return {"id": ident, "aliases": [f"CVE-2026-{ident[-1]}"], "summary": f"{ident} is bad", "details": "long text",
            "fixed_in": fixed, "link": f"https://osv.dev/vulnerability/{ident}", "withdrawn": None,
            "source": "osv"} | more


@pytest.fixture
def index(tmp_path: Path) -> Iterator[LocalIndex]:
    with index_from_spec(tmp_path / "dists", FIRST) as started:
        yield started


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, index: LocalIndex,
         capsys: pytest.CaptureFixture[str]) -> Iterator[Path]:
    home = isolated_home(tmp_path, monkeypatch, core=["corelib"], index_url=index.url,
                         config={"plugins": {"enabled": ["notes"]}})
    add_plugin(home / "plugins", "notes", style="manifest", dependencies=["lib", "capped<2", "quiet"])
    assert pm(capsys, home, "sync").code == 0
    index.add_files(build_packages(tmp_path / "later", LATER))
    yield home
    for path in home.rglob("pm/receipts/*.json"):
        assert_valid_receipt(json.loads(path.read_text()))


def publish(index: LocalIndex) -> None:
    index.vulnerabilities = {
        ("lib", "1.0"): [advisory("GHSA-0001", ["1.1"])],
        ("capped", "1.0"): [advisory("GHSA-0002", ["2.0"])],
        ("corelib", "1.0"): [advisory("GHSA-0003", [], summary="")],
        ("quiet", "1.0"): [advisory("GHSA-0004", ["1.1"], withdrawn="2026-01-01T00:00:00Z")],
    }


def test_the_advisories_of_the_pins_with_their_fixes_checked(home: Path, index: LocalIndex,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    publish(index)
    result = pm(capsys, home, "audit")
    assert result.code == 0, result.err
    assert cells(result.out) == [
        ["PACKAGE", "PINNED", "ADVISORY", "FIX"],
        ["capped", "1.0", "GHSA-0002 (CVE-2026-2)", ">=2.0: does not fit (the union does not resolve with it)"],
        ["GHSA-0002 is bad"], ["https://osv.dev/vulnerability/GHSA-0002"],
        ["corelib", "1.0", "GHSA-0003 (CVE-2026-3)", "no fixed version published"],
        ["long text"], ["https://osv.dev/vulnerability/GHSA-0003"],
        ["lib", "1.0", "GHSA-0001 (CVE-2026-1)", ">=1.1: fits (lib 1.1 resolves)"],
        ["GHSA-0001 is bad"], ["https://osv.dev/vulnerability/GHSA-0001"]]
    assert "GHSA-0004" not in result.out  # withdrawn
    assert "3 advisories for 3 of 4 pins of generation" in result.err
    receipt = latest(home)
    assert (receipt["kind"], receipt["outcome"], receipt["exit_code"]) == ("audit", "ok", 0)
    found = {a["id"]: a for a in receipt["audit"]["advisories"]}
    assert {k: found["GHSA-0001"][k] for k in ("name", "version", "aliases", "fixed_in", "fix", "fix_fits",
                                                 "fix_resolves_to", "link")} == {
        "name": "lib", "version": "1.0", "aliases": ["CVE-2026-1"], "fixed_in": ["1.1"], "fix": "1.1",
        "fix_fits": True, "fix_resolves_to": "1.1", "link": "https://osv.dev/vulnerability/GHSA-0001"}
    assert (found["GHSA-0002"]["fix_fits"], found["GHSA-0003"]["fix"]) == (False, None)
    assert sorted(receipt["audit"]["vulnerable"]) == ["capped", "corelib", "lib"]


def test_strict_exits_4_on_an_advisory_and_json_carries_the_report(home: Path, index: LocalIndex,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    publish(index)
    result = pm(capsys, home, "audit", "--strict", "--json")
    assert result.code == 4
    assert (result.data["kind"], result.data["outcome"]) == ("audit", "not-ready")
    assert len(result.data["audit"]["advisories"]) == 3


def test_no_advisory_exits_0_even_strict(home: Path, index: LocalIndex, capsys: pytest.CaptureFixture[str]) -> None:
    index.vulnerabilities = {("quiet", "1.0"): [advisory("GHSA-0004", [], withdrawn="2026-01-01T00:00:00Z")]}
    result = pm(capsys, home, "audit", "--strict")
    assert result.code == 0, result.err
    assert result.out == ""
    assert "no published advisories for the 4 pins of generation" in result.err


def test_an_index_without_a_json_api_is_unavailable_never_clean(home: Path, index: LocalIndex,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    index.json_api = False
    result = pm(capsys, home, "audit")
    assert result.code == 1
    assert f"advisories unavailable for {index.url}" in result.err
    assert "no published advisories" not in result.err
    receipt = latest(home)
    assert (receipt["kind"], receipt["failure"]["kind"]) == ("audit", "advisories-unavailable")


def test_answers_are_cached_with_validators_and_offline_reads_the_cache(home: Path, index: LocalIndex,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    publish(index)
    assert pm(capsys, home, "audit").code == 0
    index.reset_log()
    assert pm(capsys, home, "audit").code == 0
    answers = [t.status for t in index.transfers if t.path.startswith("/pypi/")]
    assert answers == [304] * 4  # each revalidated by its ETag, no body sent again
    index.reset_log()
    offline = pm(capsys, home, "audit", "--offline", "--json")
    assert offline.code == 0, offline.err
    assert len(offline.data["audit"]["advisories"]) == 3
    assert not [p for _, p in index.requests if p.startswith("/pypi/")]


def test_offline_without_a_cached_answer_is_unavailable(home: Path, index: LocalIndex,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    result = pm(capsys, home, "audit", "--offline")
    assert result.code == 1
    assert "advisories unavailable for" in result.err and "--offline" in result.err


def test_the_json_api_base_is_a_setting_for_other_indexes(home: Path, index: LocalIndex,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    publish(index)
    config = home / "config.yaml"
    data = yaml.safe_load(config.read_text())
    data["pm"]["json_api_url"] = f"{index.root}/nowhere/"
    config.write_text(yaml.safe_dump(data))
    assert pm(capsys, home, "audit").code == 1  # the setting is used: nothing answers there
    result = pm(capsys, home, "audit", "--json-api-url", f"{index.root}/pypi/", "--json")
    assert result.code == 0, result.err
    assert len(result.data["audit"]["advisories"]) == 3


def test_the_json_api_base_is_derived_from_a_simple_index_url() -> None:
    assert json_api_base("https://pypi.org/simple/") == "https://pypi.org/pypi/"
    assert json_api_base("https://mirror.example/root/simple") == "https://mirror.example/root/pypi/"
    assert json_api_base("https://example.org/packages/") is None
    assert json_api_base("/srv/wheels") is None
    assert json_api_base("/srv/wheels", "https://example.org/json") == "https://example.org/json/"


def test_a_home_without_a_generation_has_nothing_to_audit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          index: LocalIndex) -> None:
    (tmp_path / "bare").mkdir()
    bare = isolated_home(tmp_path / "bare", monkeypatch, core=["corelib"], index_url=index.url)
    done = audit(bare)
    assert (done.code, done.report) == (1, None)
    assert done.receipt.failure is not None and done.receipt.failure["kind"] == "no-generation"
    assert done.receipt.next_steps[0]["command"].startswith("hermes pm sync")


def test_outdated_shows_the_cached_advisories_without_asking_for_them(home: Path, index: LocalIndex,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    publish(index)
    before = pm(capsys, home, "outdated")  # nothing audited yet: no column, no /pypi/ request
    assert before.code == 0, before.err
    assert "ADVISORIES" not in before.out
    assert pm(capsys, home, "audit").code == 0
    index.reset_log()
    after = pm(capsys, home, "outdated", "--all")
    assert after.code == 0, after.err
    rows = {row[0]: row for row in cells(after.out)}
    assert rows["PACKAGE"][4] == "ADVISORIES"
    assert rows["lib"][4] == "GHSA-0001" and rows["capped"][4] == "GHSA-0002"
    assert not [p for _, p in index.requests if p.startswith("/pypi/")]
    data = pm(capsys, home, "outdated", "--json").data
    assert data["outdated"]["advisories"] == {"capped": ["GHSA-0002"], "corelib": ["GHSA-0003"], "lib": ["GHSA-0001"]}


def test_a_pin_from_a_find_links_folder_has_no_advisories_to_give(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    wheels = tmp_path / "wheels"
    build_packages(wheels, {"corelib": {"1.0": None}})
    (tmp_path / "flat").mkdir()
    flat = isolated_home(tmp_path / "flat", monkeypatch, core=["corelib"],
                         config={"pm": {"no_index": True, "find_links": [str(wheels)]}})
    assert pm(capsys, flat, "sync").code == 0
    result = pm(capsys, flat, "audit")
    assert result.code == 1
    assert f"advisories unavailable for {wheels}" in result.err
