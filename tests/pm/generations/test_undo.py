"""Issue 32, "rollback is an undo": `hermes pm rollback [--to ID]` restores the generation and the
plugin selection it was built from; `hermes pm generations` lists them, `hermes pm diff A B`
compares two. Real homes, real uv builds on the local index of this folder's conftest."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.cli import main as hermes
from pm.env import generations
from pm.env.history import Changes
from pm.ops.admit import choose_memory_provider
from pm.ops.rollback import rollback
from pm.ops.sync import ALREADY
from pm.testing import LocalIndex, add_plugin, add_profile, index_from_spec, tree_digest

from .conftest import SPEC
from .helpers import latest, pm, remove_dist

CONFIG = "# my agent\nmodel: x   # keep me\nplugins:\n  enabled:\n    - notes  # first\n"


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalIndex]:
    """This folder's index, and zeta 1.0 and 1.1 (a pin that moves)."""
    with index_from_spec(tmp_path_factory.mktemp("dists"), {**SPEC, "zeta": {"1.0": None, "1.1": None}}) as started:
        yield started


def selected(home: Path) -> str:
    return generations.read_state(home)["selected"]


def enable(capsys, home: Path, name: str) -> str:
    """``hermes plugins enable NAME``; returns the generation it selected."""
    capsys.readouterr()
    assert hermes(["plugins", "enable", name, "--home", str(home)]) == 0, capsys.readouterr().err
    return selected(home)


def started(home: Path, capsys) -> str:
    """The home with only ``notes`` enabled (commented), synced; returns its generation."""
    (home / "config.yaml").write_text(CONFIG)
    assert pm(capsys, home, "sync").code == 0
    return selected(home)


def test_rollback_after_an_enable_undoes_the_enable(home: Path, capsys) -> None:
    g1 = started(home, capsys)
    plugins = tree_digest(home / "plugins")
    g2 = enable(capsys, home, "search")
    assert (home / "config.yaml").read_text() == CONFIG + "    - search\n"

    result = pm(capsys, home, "rollback")
    assert result.code == 0
    assert (home / "config.yaml").read_text() == CONFIG  # byte-identical, comments kept
    assert (selected(home), generations.read_state(home)["previous"]) == (g1, g2)
    assert tree_digest(home / "plugins") == plugins  # invariant 2
    config = home / "config.yaml"
    assert result.err == (f"- delta==1.0\n- gamma==1.0\n{config}: plugins.enabled [notes] (was [notes, search])\n"
                          f"generation {g1} is selected again; running hermes processes keep theirs until they "
                          f"restart\nreceipt: {max((home / 'pm' / 'receipts').glob('*-rollback-*.json'))}\n")
    receipt = latest(home)
    assert receipt["message"] == f"generation {g1} is selected again (was {g2})" and receipt["warnings"] == []
    assert receipt["rollback"] == {"from": g2, "to": g1, "configs": [{
        "config": str(config), "profile": None,
        "changed": {"plugins.enabled": {"from": ["notes", "search"], "to": ["notes"]}},
        "before_sha256": hashlib.sha256((CONFIG + "    - search\n").encode()).hexdigest(),
        "after_sha256": hashlib.sha256(CONFIG.encode()).hexdigest()}]}

    again = pm(capsys, home, "sync", "--json").data  # the rolled-back plugin does not come back
    assert (again["message"], again["generation"]["id"], again["generation"]["restart_required"]) == (
        ALREADY, g1, False)
    assert pm(capsys, home, "check").code == 0
    assert generations.all_ids(home) == [g1, g2]


def test_rollback_after_a_disable_enables_it_again_in_its_place(home: Path, capsys) -> None:
    (home / "config.yaml").write_text("plugins:\n  enabled:\n    - notes  # first\n    - search\n")
    assert pm(capsys, home, "sync").code == 0
    g1 = selected(home)
    before = (home / "config.yaml").read_bytes()
    assert hermes(["plugins", "disable", "notes", "--home", str(home)]) == 0
    assert (home / "config.yaml").read_text() == "plugins:\n  enabled:\n    # - notes  # first\n    - search\n"
    assert pm(capsys, home, "rollback").code == 0
    assert (home / "config.yaml").read_bytes() == before and selected(home) == g1
    assert pm(capsys, home, "sync", "--json").data["message"] == ALREADY


def test_rollback_takes_back_a_memory_provider_chosen_since(home: Path, capsys) -> None:
    add_plugin(home / "plugins", "recall", style="manifest", dependencies=["epsilon"], category="memory")
    g1 = started(home, capsys)
    assert choose_memory_provider(home, "recall") is None  # what `hermes memory setup recall` records
    assert pm(capsys, home, "sync").code == 0  # memory.provider makes it a member
    assert "epsilon" in generations.selected(home).pins
    assert pm(capsys, home, "rollback").code == 0
    assert (home / "config.yaml").read_text() == CONFIG and selected(home) == g1
    assert latest(home)["rollback"]["configs"][0]["changed"] == {"memory.provider": {"from": "recall", "to": None}}
    assert pm(capsys, home, "sync", "--json").data["message"] == ALREADY


def test_a_memory_provider_chosen_by_setup_stays_when_a_later_enable_is_undone(home: Path, capsys) -> None:
    add_plugin(home / "plugins", "recall", style="manifest", dependencies=["epsilon"], category="memory")
    started(home, capsys)
    g2 = enable(capsys, home, "recall")  # what `hermes memory setup recall` does: admission, then the choice
    assert choose_memory_provider(home, "recall") is None
    chosen = (home / "config.yaml").read_bytes()
    assert b"provider: recall" in chosen
    enable(capsys, home, "search")
    assert pm(capsys, home, "rollback").code == 0
    assert (home / "config.yaml").read_bytes() == chosen and selected(home) == g2
    assert latest(home)["rollback"]["configs"][0]["changed"] == {
        "plugins.enabled": {"from": ["notes", "memory/recall", "search"], "to": ["notes", "memory/recall"]}}
    assert pm(capsys, home, "sync", "--json").data["message"] == ALREADY


def test_rollback_to_an_older_generation_by_a_prefix(home: Path, capsys) -> None:
    g1 = started(home, capsys)
    g2 = enable(capsys, home, "search")
    assert hermes(["plugins", "disable", "notes", "--home", str(home)]) == 0
    g3 = selected(home)
    assert len({g1, g2, g3}) == 3

    assert pm(capsys, home, "rollback", "--to", g1[:-3]).code == 0
    assert (home / "config.yaml").read_text() == CONFIG
    state = generations.read_state(home)
    assert (state["selected"], state["previous"]) == (g1, g3)
    assert latest(home)["rollback"]["configs"][0]["changed"] == {
        "plugins.enabled": {"from": ["search"], "to": ["notes"]}}
    assert pm(capsys, home, "sync", "--json").data["message"] == ALREADY

    assert pm(capsys, home, "rollback", "--to", g2).code == 0  # forward again, to the enable
    assert (home / "config.yaml").read_text() == CONFIG + "    - search\n"
    assert pm(capsys, home, "sync", "--json").data["message"] == ALREADY
    assert pm(capsys, home, "rollback", "--to", "selected").code == 0  # nothing to restore
    assert latest(home)["message"] == f"generation {g2} stays selected"
    assert latest(home)["rollback"]["configs"] == [] and latest(home)["generation"]["restart_required"] is False


def test_generations_lists_each_with_its_selection_packages_and_changes(home: Path, capsys) -> None:
    g1 = started(home, capsys)
    g2 = enable(capsys, home, "search")
    assert pm(capsys, home, "rollback").code == 0
    listed = pm(capsys, home, "generations", "--json")
    assert listed.code == 0
    rows = listed.data["generations"]
    assert [(r["id"], r["role"], r["selected"], r["packages"], r["intact"]) for r in rows] == [
        (g1, "selected", True, 2, True), (g2, "previous", False, 4, True)]
    assert [[h["selects"] for h in r["selection"]] for r in rows] == [[["notes"]], [["notes", "search"]]]
    assert rows[1]["selection"][0] == {"home": str(home), "profile": None, "enabled": ["notes", "search"],
                                       "disabled": [], "memory_provider": None, "selects": ["notes", "search"],
                                       "keys": ["plugins", "plugins.enabled"]}
    assert rows[0]["changes"] is None
    assert rows[1]["changes"] == {"added": [{"name": "delta", "version": "1.0"}, {"name": "gamma", "version": "1.0"}],
                                  "removed": [], "moved": []}
    assert rows[0]["created_at"] == generations.load(home, g1).record["created_at"]

    text = pm(capsys, home, "generations")
    lines = text.out.splitlines()
    assert lines[0].split() == ["GENERATION", "BUILT", "ROLE", "PACKAGES", "CHANGES", "SELECTION"]
    def built(gid: str) -> str:  # generation.json's created_at, to the second
        return generations.load(home, gid).record["created_at"][:19].replace("T", " ") + " UTC"

    assert lines[1:] == [f"{g1}  {built(g1)}  selected  2         {'-':24}  home: notes",
                         f"{g2}  {built(g2)}  previous  4         +delta==1.0, +gamma==1.0  home: notes, search"]
    assert text.err == ""


def test_diff_names_added_removed_and_moved_packages(home: Path, capsys) -> None:
    add_plugin(home / "plugins", "clock", style="manifest", dependencies=["zeta==1.0"])
    (home / "config.yaml").write_text("plugins:\n  enabled: [notes, search, clock]\n")
    assert pm(capsys, home, "sync").code == 0
    g1 = selected(home)
    (home / "plugins" / "clock" / "plugin.yaml").write_text(
        json.dumps({"name": "clock", "pip_dependencies": ["zeta==1.1", "epsilon"]}))
    (home / "config.yaml").write_text("plugins:\n  enabled: [notes, clock]\n")
    assert pm(capsys, home, "sync").code == 0
    g2 = selected(home)

    diff = pm(capsys, home, "diff", g1[:-4], "selected", "--json")
    assert diff.code == 0
    assert (diff.data["from"]["id"], diff.data["to"]["id"]) == (g1, g2)
    assert diff.data["added"] == [{"name": "epsilon", "version": "1.0"}]
    assert diff.data["removed"] == [{"name": "delta", "version": "1.0"}, {"name": "gamma", "version": "1.0"}]
    assert diff.data["moved"] == [{"name": "zeta", "from": "1.0", "to": "1.1"}]
    text = pm(capsys, home, "diff", "previous", g2)
    assert text.out == "- delta==1.0\n+ epsilon==1.0\n- gamma==1.0\n~ zeta 1.0 -> 1.1\n"
    assert text.err == (f"generation {g1} -> {g2}\n"
                        "selection: home: notes, clock (was home: notes, search, clock)\n")
    same = pm(capsys, home, "diff", g2, g2)
    assert (same.out, same.err) == ("", f"generation {g2} -> {g2}\nno package changes\n")
    listed = pm(capsys, home, "generations", "--json").data["generations"]
    assert listed[1]["changes"]["moved"] == [{"name": "zeta", "from": "1.0", "to": "1.1"}]
    assert " +1 -2 ~1 " in pm(capsys, home, "generations").out  # more than three: counted


def test_unknown_and_ambiguous_ids_name_the_known_generations(home: Path, capsys) -> None:
    g1 = started(home, capsys)
    g2 = enable(capsys, home, "search")
    unknown = pm(capsys, home, "diff", "nope", g2)
    receipt = max((home / "pm" / "receipts").glob("*-diff-*.json"))
    assert (unknown.code, unknown.out) == (1, "")
    assert unknown.err == (f"error: no generation is called 'nope'; the generations are: {g1}, {g2}\n"
                           f"receipt: {receipt}\n")
    assert latest(home)["failure"]["kind"] == "unknown-generation"
    ambiguous = pm(capsys, home, "diff", g1[:4], g2)
    assert ambiguous.err.startswith(f"error: {g1[:4]!r} begins the id of more than one generation ({g1}, {g2}); "
                                    "give more of it\n")
    state = (home / "pm" / "state.json").read_bytes()
    config = (home / "config.yaml").read_bytes()
    refused = pm(capsys, home, "rollback", "--to", "nope")
    assert refused.code == 1
    assert refused.err.startswith(f"error: cannot roll back: no generation is called 'nope'; the generations are: "
                                  f"{g1}, {g2}\n")
    assert (home / "pm" / "state.json").read_bytes() == state and (home / "config.yaml").read_bytes() == config


def test_rollback_refuses_a_generation_that_is_not_intact(home: Path, capsys) -> None:
    g1 = started(home, capsys)
    g2 = enable(capsys, home, "search")
    remove_dist(generations.load(home, g1), "beta")
    config = (home / "config.yaml").read_bytes()
    refused = pm(capsys, home, "rollback", "--to", g1)
    assert refused.code == 1
    assert refused.err.startswith(f"error: cannot roll back: generation {g1} is damaged: beta==1.0 is missing\n")
    assert (home / "config.yaml").read_bytes() == config and selected(home) == g2
    done = rollback(home, to=g1[:21])  # the operation, as the dashboard runs it; the id's time
    assert (done.receipt.outcome, done.receipt.exit_code, done.receipt.generation) == ("refused", 1, None)
    assert done.receipt.failure == {"kind": "rollback", "url": None,
                                    "message": f"generation {g1} is damaged: beta==1.0 is missing"}
    assert [s["command"] for s in done.receipt.next_steps] == ["hermes pm sync"]  # no --home: none was shown
    listed = pm(capsys, home, "generations")
    assert f"! {g1} is damaged: beta==1.0 is missing" in listed.err
    assert pm(capsys, home, "generations", "--json").data["generations"][0]["problems"] == ["beta==1.0 is missing"]


def test_a_generation_without_a_recorded_selection_is_listed_as_unknown_and_not_restored(home: Path, capsys) -> None:
    g1 = started(home, capsys)
    g2 = enable(capsys, home, "search")
    record_file = generations.root(home) / g1 / generations.GENERATION_FILE
    record = json.loads(record_file.read_text())
    del record["selection"]  # as a pm before this one wrote it
    record_file.write_text(json.dumps(record))

    assert pm(capsys, home, "generations", "--json").data["generations"][0]["selection"] is None
    assert pm(capsys, home, "generations").out.splitlines()[1].endswith("selection unknown")
    config = (home / "config.yaml").read_bytes()
    refused = pm(capsys, home, "rollback")
    assert refused.code == 1
    assert refused.err.startswith(
        f"error: cannot roll back: the previous generation {g1} does not record the plugin selection it was built "
        "from (an older pm built it), so rolling back to it could not restore that selection; nothing is guessed\n")
    assert (home / "config.yaml").read_bytes() == config and selected(home) == g2
    assert latest(home)["outcome"] == "refused" and latest(home)["failure"]["kind"] == "rollback"


def test_rollback_restores_every_profile_sharing_the_environment(home: Path, capsys) -> None:
    work_config = "# the work profile\nplugins:\n  enabled: []\n"
    work = add_profile(home, "work")
    (work / "config.yaml").write_text(work_config)
    add_plugin(work / "plugins", "tool", style="manifest", dependencies=["epsilon"])
    g1 = started(home, capsys)
    enable(capsys, work, "tool")  # the profile's own plugin: its config.yaml is edited
    assert (work / "config.yaml").read_text() == "# the work profile\nplugins:\n  enabled:\n    - tool\n"
    enable(capsys, home, "search")
    plugins = tree_digest(home / "plugins"), tree_digest(work / "plugins")

    assert pm(capsys, home, "rollback", "--to", g1).code == 0
    assert (home / "config.yaml").read_text() == CONFIG
    assert (work / "config.yaml").read_text() == work_config
    assert [(c["profile"], c["changed"]) for c in latest(home)["rollback"]["configs"]] == [
        (None, {"plugins.enabled": {"from": ["notes", "search"], "to": ["notes"]}}),
        ("work", {"plugins.enabled": {"from": ["tool"], "to": []}})]
    assert (tree_digest(home / "plugins"), tree_digest(work / "plugins")) == plugins
    assert pm(capsys, work, "sync", "--json").data["message"] == ALREADY  # from the profile too
    assert pm(capsys, work, "check").code == 0
    assert pm(capsys, work, "generations", "--json").data["home"] == str(home)  # the environment's

    late = add_profile(home, "late")  # made after every generation: left as it is, and said so
    done = pm(capsys, home, "rollback", "--json")
    assert done.code == 0
    assert f"profile 'late' was made after generation {done.data['generation']['id']} was built; its selection is " \
           "left as it is" in done.data["warnings"]
    assert (late / "config.yaml").read_text() == "{}\n"


def test_changes_between_two_sets_of_pins() -> None:
    changes = Changes.between({"a": "1", "B": "1", "c": "1"}, {"a": "2", "c": "1", "d": "1"})
    assert changes == Changes(added=(("d", "1"),), removed=(("B", "1"),), moved=(("a", "1", "2"),))
    assert changes.lines() == ["~ a 1 -> 2", "- B==1", "+ d==1"]
    assert changes.summary() == "~a 1 -> 2, -B==1, +d==1"
    assert changes.summary(longest=2) == "+1 -1 ~1"
    assert Changes.between({"a": "1"}, {"a": "1"}).summary() == "none"


def test_a_config_that_cannot_be_read_refuses_the_rollback_and_nothing_changes(home: Path, capsys) -> None:
    work = add_profile(home, "work", config={"plugins": {"enabled": []}})
    g1 = started(home, capsys)
    g2 = enable(capsys, home, "search")
    (work / "config.yaml").write_text("plugins:\n  enabled: yes\n")  # broken since g1 was built
    config, state = (home / "config.yaml").read_bytes(), (home / "pm" / "state.json").read_bytes()
    refused = pm(capsys, home, "rollback", "--to", g1)
    assert refused.code == 1
    assert refused.err.splitlines()[0] == (f"error: {work / 'config.yaml'}: plugins.enabled: must be a list of plugin "
                                           "names, got bool True")
    assert (home / "config.yaml").read_bytes() == config and (home / "pm" / "state.json").read_bytes() == state
    assert selected(home) == g2 and latest(home)["failure"]["kind"] == "config"
