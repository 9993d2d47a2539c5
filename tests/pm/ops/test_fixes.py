"""Fixes that were checked (issue 20): after a refusal every remedy pm prints was resolved first;
one that would not resolve is dropped; a relaxed pin names the newest release that fits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pm.cli import main
from pm.testing import add_plugin, index_from_spec, isolated_home
from pm.testing.receipts import assert_valid_receipt

SPEC = {
    "tenacity": {"8.0": [], "9.0": []},
    "agentkit": {"0.1": ["tenacity<9"], "0.2": ["tenacity<9"], "0.3": ["tenacity>=9"]},
    "markdownish": {"2.0": [], "2.1": []},
    "twice": {"1.0": ["tenacity<9", "markdownish<2.1"]},
}


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    with index_from_spec(tmp_path_factory.mktemp("dists"), SPEC) as served:
        yield served


@pytest.fixture
def home(tmp_path: Path, monkeypatch, index) -> Path:
    return isolated_home(tmp_path, monkeypatch, core=["tenacity"], lock="tenacity==9.0\n", index_url=index.url,
                         config={"plugins": {"enabled": []}})


def _resolve_with(home: Path, capsys, candidate: str) -> dict:
    assert main(["resolve", "--home", str(home), "--with", candidate, "--json"]) == 3
    receipt = json.loads(capsys.readouterr().out)
    assert_valid_receipt(receipt)
    return receipt


def test_a_pin_colliding_with_core_through_its_dependency_names_the_newest_release_that_fits(home, capsys):
    add_plugin(home / "plugins", "p", style="manifest", dependencies=["agentkit==0.1"])
    receipt = _resolve_with(home, capsys, "p")
    checked = [s for s in receipt["next_steps"] if s.get("checked")]
    assert [s["command"] for s in checked] == [f"hermes pm why agentkit --home {home}"]
    assert checked[0]["why"] == ("checked: agentkit 0.3 fits core and every other plugin (resolved with "
                                 "'agentkit==0.1' of plugin 'p' relaxed); ask the author of 'p' to allow it")
    assert not [s for s in receipt["next_steps"] if " disable " in s["command"]]  # core is not set aside


def test_setting_a_partner_aside_is_suggested_only_when_it_resolves(home, capsys):
    add_plugin(home / "plugins", "old", style="manifest", dependencies=["markdownish<2.1"])
    add_plugin(home / "plugins", "new", style="manifest", dependencies=["markdownish>=2.1"])
    (home / "config.yaml").write_text((home / "config.yaml").read_text().replace("enabled: []", "enabled: [new]"))
    receipt = _resolve_with(home, capsys, "old")
    disable = [s for s in receipt["next_steps"] if " disable " in s["command"]]
    assert disable == [{"command": f"hermes plugins disable new --home {home}", "checked": True, "kind": "set-aside",
                        "why": "checked: core and every other plugin resolve without 'new' (pm never disables a "
                               "plugin for you)"}]
    assert receipt["next_steps"][1]["command"] == f"hermes pm resolve --with old --home {home}"  # then retry


def test_a_partner_whose_absence_does_not_help_is_not_suggested(home, capsys):
    # 'both' collides with core (tenacity<9) and with 'new' (markdownish): setting 'new' aside alone
    # still fails, so it is not printed; relaxing the pin on markdownish would not resolve either
    add_plugin(home / "plugins", "new", style="manifest", dependencies=["markdownish>=2.1"])
    add_plugin(home / "plugins", "both", style="manifest", dependencies=["markdownish<2.1", "tenacity<9"])
    (home / "config.yaml").write_text((home / "config.yaml").read_text().replace("enabled: []", "enabled: [new]"))
    receipt = _resolve_with(home, capsys, "both")
    assert receipt["conflict"]["plugins"] == ["both", "new"]
    assert not [s for s in receipt["next_steps"] if " disable " in s["command"]]
    assert all(s.get("checked", True) for s in receipt["next_steps"])


def test_the_round_limit_names_where_the_rounds_went_and_how_to_raise_it(home, capsys, monkeypatch):
    add_plugin(home / "plugins", "p", style="manifest", dependencies=["agentkit", "markdownish"])
    monkeypatch.setenv("HERMES_PM_MAX_ROUNDS", "2")
    assert main(["resolve", "--home", str(home), "--with", "p", "--json"]) == 1
    receipt = json.loads(capsys.readouterr().out)
    assert_valid_receipt(receipt)
    failure = receipt["failure"]
    assert failure["kind"] == "too-complex"
    assert failure["message"].startswith("too complex to resolve: gave up after 2 resolver rounds (not a conflict)")
    assert failure["message"].endswith("raise the limit with HERMES_PM_MAX_ROUNDS (now 2), or narrow the "
                                       "requirements named here")
    assert receipt["next_steps"][-1]["command"] == f"HERMES_PM_MAX_ROUNDS=10 hermes pm resolve --home {home}"
    monkeypatch.setenv("HERMES_PM_MAX_ROUNDS", "lots")
    assert main(["resolve", "--home", str(home), "--with", "p"]) == 2
    assert "HERMES_PM_MAX_ROUNDS='lots': expected a positive whole number" in capsys.readouterr().err


def test_a_relaxed_pin_keeps_its_extras_and_marker_and_touches_only_that_plugin() -> None:
    from packaging.requirements import Requirement

    from pm.inputs.core import Core
    from pm.inputs.union import Origin, Tagged, Union
    from pm.ops.fixes import _relaxed, _without

    p, q = Origin("p", "/p/plugin.yaml"), Origin("q", "/q/plugin.yaml")
    text = "agentkit[fast]==0.1; python_version >= '3.8'"
    union = Union(Core((), (), "core.toml", None), (), (Tagged(Requirement(text), p), Tagged(Requirement(text), q)))
    relaxed = _relaxed(union, "p", str(Requirement(text)))
    assert [str(t.requirement) for t in relaxed.requirements] == [
        'agentkit[fast]; python_version >= "3.8"', str(Requirement(text))]
    assert [t.origin for t in _without(union, "q").requirements] == [p]


def test_a_refusal_carries_its_proof_from_the_roots(home, capsys):
    add_plugin(home / "plugins", "p", style="manifest", dependencies=["agentkit==0.1"])
    receipt = _resolve_with(home, capsys, "p")
    assert receipt["failure"] is None
    (proof,) = receipt["conflict"]["proof"]
    assert proof["steps"][0].startswith("plugin 'p' (") and proof["steps"][0].endswith(") requires agentkit==0.1")
    assert "agentkit 0.1 requires tenacity<9" in proof["steps"]
    assert proof["conclusion"] == "core locks tenacity==9.0 and core requires tenacity"


def test_a_pinned_release_that_collides_twice_is_told_with_both_collisions(home, capsys):
    """As uv tells it: one version, every requirement of it that core rules out."""
    (home.parent / "lock.txt").write_text("tenacity==9.0\nmarkdownish==2.1\n")
    add_plugin(home / "plugins", "p", style="manifest", dependencies=["twice==1.0"])
    receipt = _resolve_with(home, capsys, "p")
    (proof,) = receipt["conflict"]["proof"]
    assert proof["steps"][1:] == ["twice 1.0 requires tenacity<9", "twice 1.0 requires markdownish<2.1"]
    assert proof["conclusion"] == "core locks tenacity==9.0 and core requires tenacity; core locks markdownish==2.1"
