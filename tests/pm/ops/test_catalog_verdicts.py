"""The gate's verdicts as values (pm.ops.catalog_verdicts) and their rendering
(pm.cli._catalog_out): each resolver outcome's kind, a collision's row told from its own
findings, annotations escaped as GitHub reads them, tables wrapped at spaces, the count line."""

from __future__ import annotations

from pm.cli import _catalog_out as out
from pm.index.base import IndexFailure
from pm.inputs.union import Origin
from pm.ops.catalog_check import Report
from pm.ops.catalog_judge import _told_for
from pm.ops.catalog_verdicts import EntryVerdict, TogetherPass, Where, collision_groups, judged
from pm.resolver.explain import Cause, Conflict, Finding
from pm.resolver.missing import MissingProjects

T = "linux / Python 3.12"


def _cause(package: str, requirement: str, plugin: str | None) -> Cause:
    return Cause(package, requirement, Origin(plugin, f"{plugin}.yaml") if plugin else Origin.core())


def test_each_outcome_alone_has_its_kind() -> None:
    sdist = Conflict([Finding("sdist-only", "native", (_cause("native", "native", "n"),))], ["n"], None)
    core = Conflict([Finding("conflict", "corelib", (_cause("corelib", "corelib<2", None),
                                                     _cause("corelib", "corelib>=2", "c")))], ["c"], None)
    python = Conflict([Finding("requires-python", "oldpy", (_cause("oldpy", "oldpy", "o"),))], ["o"], None)
    own = Conflict([Finding("conflict", "lib", (_cause("lib", "lib<1", "s"), _cause("lib", "lib>1", "s")))], ["s"],
                   None)
    missing = MissingProjects([Finding("missing", "ghost-lib", (_cause("ghost-lib", "ghost-lib", "g"),))],
                              ["http://i/simple/"], {}, None)
    kinds = {name: judged(name, T, outcome) for name, outcome in
             {"n": sdist, "c": core, "o": python, "s": own, "g": missing,
              "x": IndexFailure("http://i/simple/x/", "HTTP 503")}.items()}
    assert {n: v.kind for n, v in kinds.items()} == {"n": "no-wheel", "c": "collides-with-core", "o": "requires-python",
                                                     "s": "refused", "g": "missing-project", "x": "not-judged"}
    assert kinds["c"].core == ("corelib<2",) and kinds["g"].projects == ("ghost-lib",)
    assert kinds["n"].label == "refused alone: no wheel for this target" and kinds["n"].verdict == "refused alone"
    assert kinds["x"].stops_the_gate and not kinds["s"].stops_the_gate


def test_a_collisions_row_is_told_from_the_findings_that_name_it() -> None:
    pair = Finding("conflict", "lib", (_cause("lib", "lib<2", "a"), _cause("lib", "lib>=2", "b")))
    trio = Finding("conflict", "tri", tuple(_cause("tri", f"tri!={v}", f"g{v}") for v in (1, 2, 3)))
    both = Conflict([pair, trio], ["a", "b", "g1", "g2", "g3"], None)
    assert collision_groups(both, ["a", "b", "g1", "g2", "g3", "fine"]) == (("a", "b"), ("g1", "g2", "g3"))
    told = _told_for(both, "a")
    assert told == str(Conflict([pair], ["a", "b"], None)) and "tri" not in told


def _report() -> Report:
    report = Report("catalog.d", [T, "macos / Python 3.12"])
    report.where = {"a": Where("catalog.d/a.yaml", "https://x/a.git@" + "0" * 40, "plugin.yaml"),
                    "b": Where("catalog.d/b.yaml", "https://x/b.git@" + "1" * 40, "plugin.yaml")}
    long = " ".join(f"word{i}" for i in range(60)) + " 100%\nnext"
    report.verdicts = [EntryVerdict("a", T, "ok", "", pins=3).colliding(("b",), ("a", "b"), long),
                       EntryVerdict("b", T, "ok", pins=3, reused=True).colliding(("a",), ("a", "b"), long),
                       EntryVerdict("a", "macos / Python 3.12", "ok", pins=3),
                       EntryVerdict("b", "macos / Python 3.12", "ok", pins=3)]
    report.together = [TogetherPass(T, ("a", "b"), "collides", (("a", "b"),), long),
                       TogetherPass("macos / Python 3.12", ("a", "b"), "ok", pins=4)]
    report.reused = ["b"]
    return report


def test_annotations_are_escaped_and_name_the_partners() -> None:
    first = out.github(_report())[0]
    assert first.startswith("::error file=catalog.d/a.yaml,title=a on linux / Python 3.12%3A collides::collides "
                            "with b; in group a, b: word0 word1 ")
    assert first.endswith(" 100%25%0Anext (declared in https://x/a.git@" + "0" * 40 + ":plugin.yaml)")
    assert len(out.github(_report())) == 2


def test_the_table_wraps_at_spaces_and_says_reused_and_the_summary_counts() -> None:
    table = out.table(_report())
    assert all(len(line) < 160 for line in table.splitlines())
    assert "collides (reused)" in table and table.count("(reused)") == 1
    assert [w for w in " ".join(table.splitlines()).split() if w.startswith("word")] == [
        f"word{i}" for i in range(60)] * 2
    assert out.summary(_report()) == [
        "together on linux / Python 3.12: 1 resolve; colliding: {a, b}",
        "together on macos / Python 3.12: 1 resolve; the 2 entries fit together (4 pins)",
        "2 of 2 entries refused on 1 of 2 targets (1 judged alone before: reused from --changed-since)"]
    assert Report("c", [T]).exit_code == 0 and _report().exit_code == 3
    assert out.markdown(_report()).count("100%<br>next") == 2
    assert out._md("a | b\nc") == "a \\| b<br>c"


def test_the_count_line_of_a_catalog_that_fits() -> None:
    one = Report("c", [T])
    one.verdicts = [EntryVerdict("a", T, "ok", pins=1)]
    assert out.summary(one) == ["the one entry fits on 1 target"]
    one.verdicts.append(EntryVerdict("b", T, "ok", pins=1))
    assert out.summary(one) == ["all 2 entries fit on 1 target"]
