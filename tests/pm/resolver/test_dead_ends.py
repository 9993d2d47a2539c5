"""Unsatisfiable sets whose chains lead to a project with no usable version end in seconds, with
the chain named — not after resolvelib's 20,000 rounds (before learning: a->b->c->d->missing,
30 versions each, gave up after 20,000 rounds and 11.5 s; now 8 rounds, about half a second)."""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path

import pytest

from pm.cli import main
from pm.testing import index_from_spec
from pm.testing.receipts import assert_valid_receipt

WIDTH = 20  # versions per project: without learning, 20³ pins would be tried before giving up


def chain(prefix: str, depth: int, end: dict) -> dict:
    """``<prefix>-a`` … (``depth`` projects of WIDTH versions), each version needing the next
    project; the last ones need ``<prefix>-end``, described by ``end`` (``{}``: missing)."""
    names = [f"{prefix}-{chr(ord('a') + i)}" for i in range(depth)] + [f"{prefix}-end"]
    spec: dict = {name: {f"{v}.0": [after] for v in range(1, WIDTH + 1)} for name, after in itertools.pairwise(names)}
    if end:
        spec[names[-1]] = end
    return spec


SPEC = {
    **chain("miss", 4, {}),
    **chain("nowheel", 3, {"1.0": {"tags": ["cp311-cp311-win_amd64"]}}),
    **chain("newpy", 3, {"1.0": {"requires_python": ">=3.99"}}),
    "fine": {"1.0": []},
    "br-a": {f"{v}.0": [f"br-b>={v}.0"] for v in range(1, 7)},
    "br-b": {f"{v}.0": [f"br-end>={v}.0"] for v in range(1, 7)},
    "dia-top": {"1.0": ["dia-left"], "2.0": ["dia-right"]},
    "dia-left": {"1.0": ["dia-mid"], "2.0": ["dia-mid"]},
    "dia-right": {"1.0": ["dia-mid>=1"]},
    "dia-mid": {"1.0": ["dia-end"], "2.0": ["dia-end"]},
}


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    with index_from_spec(tmp_path_factory.mktemp("dists"), SPEC) as served:
        yield served


def resolve(tmp_path: Path, monkeypatch, index, requirement: str) -> tuple[int, dict, float, Path]:
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "no-bundled"))
    home = tmp_path / "home"
    (home / "plugins" / "p").mkdir(parents=True)
    (home / "plugins" / "q").mkdir(parents=True)
    (home / "plugins/p/plugin.yaml").write_text(json.dumps({"name": "p", "pip_dependencies": [requirement]}))
    (home / "plugins/q/plugin.yaml").write_text(json.dumps({"name": "q", "pip_dependencies": ["fine"]}))
    (home / "config.yaml").write_text(json.dumps({"plugins": {"enabled": ["p", "q"]}}))
    (tmp_path / "core.toml").write_text("[project]\nname='host'\ndependencies=[]\n")
    (tmp_path / "lock.txt").write_text("")
    started = time.perf_counter()
    code = main(["resolve", "--json", "--home", str(home), "--index-url", index.url,
                 "--core", str(tmp_path / "core.toml"), "--core-lock", str(tmp_path / "lock.txt")])
    seconds = time.perf_counter() - started
    return code, receipt_of(home), seconds, home / "plugins/p/plugin.yaml"


def receipt_of(home: Path) -> dict:
    receipt = json.loads((home / "pm/receipts/latest.json").read_text())
    assert_valid_receipt(receipt)
    return receipt


def every(name: str) -> str:
    return f"every version of {name} ({WIDTH} versions, 1.0 to {WIDTH}.0) requires"


def test_a_chain_to_a_missing_project_is_a_missing_project_told_from_the_plugin(tmp_path, monkeypatch, index):
    code, receipt, seconds, p = resolve(tmp_path, monkeypatch, index, "miss-a")
    assert code == 1, receipt["conflict"]
    assert seconds < 5, f"{seconds:.1f} s"
    failure = receipt["failure"]
    assert failure["kind"] == "missing-project" and failure["plugins"] == ["p"]
    assert failure["message"] == (
        f"plugin 'p' ({p}) requires miss-a; {every('miss-a')} miss-b; {every('miss-b')} miss-c; "
        f"{every('miss-c')} miss-d; {every('miss-d')} miss-end, which the index does not have "
        f"(searched {index.url}).")


def test_a_chain_to_a_project_without_a_wheel_for_the_target_is_a_named_conflict(tmp_path, monkeypatch, index):
    code, receipt, seconds, p = resolve(tmp_path, monkeypatch, index, "nowheel-a")
    assert code == 3, receipt["failure"]
    assert seconds < 5, f"{seconds:.1f} s"
    conflict = receipt["conflict"]
    assert [(f["kind"], f["package"]) for f in conflict["findings"]] == [("no-compatible-file", "nowheel-a")]
    chain = conflict["findings"][0]["dead_end"]
    links = []
    while chain["needs"]:
        (needs,) = chain["needs"]
        links.append((chain["package"], len(needs["versions"])))
        chain = needs["dead"]
    assert links == [("nowheel-a", WIDTH), ("nowheel-b", WIDTH), ("nowheel-c", WIDTH)]
    assert (chain["package"], chain["kind"], chain["versions"][0]["fact"]) == (
        "nowheel-end", "no-compatible-file", "cp311-cp311-win_amd64")
    assert conflict["findings"][0]["detail"].startswith("nowheel-end 1.0 has no file for this interpreter")
    assert conflict["message"].startswith(f"plugin 'p' ({p}) requires nowheel-a; {every('nowheel-a')} nowheel-b; ")
    platform = receipt["target"]["platform"]
    assert conflict["message"].endswith(
        f"{every('nowheel-c')} nowheel-end; but nowheel-end 1.0 has no file for this interpreter (Python "
        f"{receipt['target']['markers']['python_full_version']} on {platform}; wheels for: cp311-cp311-win_amd64). "
        "Plugins involved: 'p'.")
    assert conflict["plugins"] == ["p"]


def test_a_chain_to_a_project_that_needs_a_newer_python_is_a_named_conflict(tmp_path, monkeypatch, index):
    code, receipt, seconds, p = resolve(tmp_path, monkeypatch, index, "newpy-a")
    assert code == 3, receipt["failure"]
    assert seconds < 5, f"{seconds:.1f} s"
    python = receipt["target"]["markers"]["python_full_version"]
    assert receipt["conflict"]["message"] == (
        f"plugin 'p' ({p}) requires newpy-a; {every('newpy-a')} newpy-b; {every('newpy-b')} newpy-c; "
        f"{every('newpy-c')} newpy-end; but newpy-end 1.0 requires Python >=3.99 (the target Python is {python}). "
        "Plugins involved: 'p'.")


def test_a_dead_requirement_reached_twice_is_told_once(tmp_path, monkeypatch, index):
    code, receipt, _, p = resolve(tmp_path, monkeypatch, index, "dia-top")
    assert code == 1, receipt["conflict"]
    assert receipt["failure"]["message"] == (
        f"plugin 'p' ({p}) requires dia-top; dia-top 2.0 requires dia-right; dia-right 1.0 requires dia-mid>=1; "
        "every version of dia-mid that fits (2 versions, 1.0 to 2.0) requires dia-end, which the index does not "
        f"have (searched {index.url}); dia-top 1.0 requires dia-left; every version of dia-left (2 versions, 1.0 "
        "to 2.0) requires dia-mid; every version of dia-mid (2 versions, 1.0 to 2.0) requires dia-end (see above).")


def test_many_branches_are_told_three_at_a_time_and_the_rest_counted(tmp_path, monkeypatch, index):
    code, receipt, _, p = resolve(tmp_path, monkeypatch, index, "br-a")
    assert code == 1, receipt["conflict"]
    assert receipt["failure"]["message"] == (
        f"plugin 'p' ({p}) requires br-a; br-a 6.0 requires br-b>=6.0; br-b 6.0 requires br-end>=6.0, which the "
        f"index does not have (searched {index.url}); br-a 5.0 requires br-b>=5.0; br-b 5.0 requires br-end>=5.0, "
        "which is not there either; br-a 4.0 requires br-b>=4.0; br-b 4.0 requires br-end>=4.0, which is not there "
        "either; br-a 3.0, 2.0, 1.0 require other requirements that cannot be satisfied either.")


def test_the_proof_takes_a_handful_of_rounds_not_the_round_limit(tmp_path, index):
    from packaging.requirements import Requirement

    from pm.index import open_sources
    from pm.inputs.core import Core
    from pm.inputs.target import current_target
    from pm.inputs.union import Origin, Tagged, Union
    from pm.resolver import MissingProjects, Policy, resolve_union

    core = Core((), (), "test", None)
    union = Union(core, (), (Tagged(Requirement("miss-a"), Origin("p", "plugin.yaml")),))
    with open_sources([index.url], [], offline=False, cache_dir=tmp_path / "cache") as source, \
            pytest.raises(MissingProjects) as raised:
        resolve_union(union, current_target(), source, Policy(), max_rounds=20)
    assert raised.value.projects == ("miss-end",)


def test_a_proof_knows_its_leaves_its_links_and_whether_it_was_cut() -> None:
    from pm.resolver.deadends import DeadEnd, Needs, Unusable

    end = DeadEnd("x-end", "x-end", "no-compatible-file", (Unusable("1.0", "no-compatible-file", "win"),))
    chain = DeadEnd("x-a", "x-a", "needs", needs=(Needs(("2.0", "1.0"), end),
                                                  Needs(("0.5",), DeadEnd("x-b", "x-b", "cut"))), total=3)
    assert [leaf.package for leaf in chain.leaves()] == ["x-end"]
    assert [(parent.package, needs.versions) for parent, needs in chain.edges()] == [
        ("x-a", ("2.0", "1.0")), ("x-a", ("0.5",))]
    assert not chain.complete and end.complete and end.is_leaf and not chain.is_leaf
    assert chain.to_json()["needs"][0]["dead"]["versions"] == [{"version": "1.0", "kind": "no-compatible-file", "fact": "win"}]
