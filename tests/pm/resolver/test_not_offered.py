"""The wrong index for a home: core's own pins are not listed where pm looked. A failure that
names what core asks and what the sources offer, and points at the index setting (exit 1,
``failure.kind = "not-offered"``) — never a conflict that blames healthy plugins."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pm.cli import main
from pm.testing import add_plugin, index_from_spec, isolated_home
from pm.testing.receipts import assert_valid_receipt

#: What a public index would hold for the home's names: the projects exist, at other versions.
ELSEWHERE = {"sharedlib": {"0.0.1": []}, "tinyhttp": {"0.2": [], "0.3": []}, "widget": {"1.0": []}}
#: The home's own index.
OWN = {"sharedlib": {"1.0": [], "2.0": []}, "tinyhttp": {"1.0": ["sharedlib>=1"]}, "widget": {"1.0": []}}


@pytest.fixture(scope="module")
def elsewhere(tmp_path_factory):
    with index_from_spec(tmp_path_factory.mktemp("elsewhere"), ELSEWHERE) as served:
        yield served


@pytest.fixture(scope="module")
def own(tmp_path_factory):
    with index_from_spec(tmp_path_factory.mktemp("own"), OWN) as served:
        yield served


@pytest.fixture
def home(tmp_path: Path, monkeypatch) -> Path:
    home = isolated_home(tmp_path, monkeypatch, core=["tinyhttp>=1", "ghostlib"], lock="tinyhttp==1.0\nsharedlib==2.0\n",
                         config={"plugins": {"enabled": ["x", "y"]}})
    add_plugin(home / "plugins", "x", style="manifest", dependencies=["sharedlib>=1,<3"])
    add_plugin(home / "plugins", "y", style="manifest", dependencies=["widget"])
    return home


def _core(home: Path) -> list[str]:
    return ["--core", str(home.parent / "core.toml"), "--core-lock", str(home.parent / "lock.txt")]


def test_core_pins_missing_from_the_index_blame_the_index_not_the_plugins(elsewhere, home, capsys):
    code = main(["resolve", "--json", "--home", str(home), "--index-url", elsewhere.url, *_core(home)])
    receipt = json.loads(capsys.readouterr().out)
    assert_valid_receipt(receipt)
    assert (code, receipt["outcome"], receipt["conflict"]) == (1, "failed", None)
    failure = receipt["failure"]
    assert failure["kind"] == "not-offered"
    assert failure["message"] == (
        "core requires ghostlib, but no source has 'ghostlib'; "
        "core locks sharedlib==2.0, but only sharedlib 0.0.1 is listed; "
        "core requires tinyhttp>=1 and core locks tinyhttp==1.0, but only tinyhttp 0.3, 0.2 are listed "
        f"(searched {elsewhere.url}). "
        "The host's own requirements cannot be met from these sources, so they are most likely the wrong ones "
        "for this home (no plugin is at fault): check where the index settings came from (the receipt's "
        "inputs.index.sources: --index-url, HERMES_PM_INDEX_URL, pm.index_url and pm.find_links in config.yaml, "
        "UV_*/PIP_* variables, uv.toml or pip.conf).")
    assert [(p["name"], p["offered"]) for p in failure["projects"]] == [
        ("ghostlib", []), ("sharedlib", ["0.0.1"]), ("tinyhttp", ["0.3", "0.2"])]
    assert failure["searched"] == [elsewhere.url]
    assert [s["command"] for s in receipt["next_steps"]] == [
        f"hermes pm resolve --index-url URL --home {home}", f"hermes pm resolve --home {home}"]


def test_the_person_reads_what_the_index_offers_and_where_to_change_it(elsewhere, home, capsys):
    assert main(["resolve", "--home", str(home), "--index-url", elsewhere.url, *_core(home)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: core requires ghostlib, but no source has 'ghostlib'")
    assert ("this is not a conflict between plugins: the host's own pins are not where pm looked; nothing was "
            f"changed\nnext steps:\n  hermes pm resolve --index-url URL --home {home}\n      try the index that "
            f"holds the host's pins (now {elsewhere.url}; the index URL from --index-url); then set pm.index_url in config.yaml to keep it\n") in err


def test_the_right_index_resolves_the_same_home(own, home, capsys):
    (home.parent / "core.toml").write_text("[project]\nname = 'host'\ndependencies = ['tinyhttp>=1']\n")
    assert main(["resolve", "--home", str(home), "--index-url", own.url, *_core(home)]) == 0, capsys.readouterr().err


def test_a_plugin_asking_for_a_version_no_index_has_is_that_plugins_conflict_with_the_offer_shown(
        own, home, capsys):
    (home.parent / "core.toml").write_text("[project]\nname = 'host'\ndependencies = ['tinyhttp>=1']\n")
    add_plugin(home / "plugins", "x", style="manifest", dependencies=["sharedlib>=9"])
    code = main(["resolve", "--json", "--home", str(home), "--index-url", own.url, *_core(home)])
    receipt = json.loads(capsys.readouterr().out)
    assert code == 3 and receipt["conflict"]["plugins"] == ["x"]
    assert "(available: 2.0, 1.0)" in receipt["conflict"]["message"]
