"""Why a preferred version was not kept (pm.resolver.moves) and the receipt's ``changes`` made of
it (pm.records.changes), on an in-memory source (the Source interface, as test_learning's)."""

from __future__ import annotations

from packaging.requirements import Requirement
from packaging.version import Version

from pm.inputs.core import Core
from pm.inputs.target import current_target
from pm.inputs.union import Origin, Tagged, Union
from pm.records.changes import changes, reasons
from pm.resolver import Policy, resolve_union
from pm.resolver.moves import moves_of
from pm.resolver.preferences import NO_UPGRADE, Preferences, Upgrade

from .test_learning import MemorySource

GRAPH = {"x": {"1.0": ["y<2"], "2.0": ["y>=2"]}, "y": {"1.0": [], "2.0": []}, "z": {"1.0": []}, "w": {"1.0": [], "2.0": []}}
PREVIOUS = {"x": "1.0", "y": "1.0", "z": "1.0", "w": "1.0"}


def resolve(roots: list[str], upgrade: Upgrade = NO_UPGRADE):
    union = Union(Core((), (), "test", None), (), tuple(Tagged(Requirement(r), Origin("p", "p/plugin.yaml")) for r in roots))
    policy = Policy(preferences=Preferences.from_pins(PREVIOUS), upgrade=upgrade)
    return resolve_union(union, current_target(), MemorySource(GRAPH, set()), policy)


def test_each_move_says_which_requirement_moved_it() -> None:
    resolution = resolve(["x", "y>=2", "w"])
    moved = {m.package: (str(m.before), str(m.after) if m.after else None, m.reason, str(m.because) if m.because else None)
             for m in resolution.moves}
    assert moved == {"x": ("1.0", "2.0", "dependency", "x 1.0 requires y<2"),
                     "y": ("1.0", "2.0", "required", "plugin 'p' (p/plugin.yaml) requires y>=2"),
                     "z": ("1.0", None, "unused", None)}
    assert {p.name: str(p.version) for p in resolution.pins} == {"x": "2.0", "y": "2.0", "w": "1.0"}  # w kept
    assert moves_of.__module__ == "pm.resolver.moves"


def test_the_receipt_changes_name_the_origin_and_the_requirement() -> None:
    found = changes(PREVIOUS, resolve(["x", "y>=2", "w"]))
    assert found[1] == {"package": "y", "from": "1.0", "to": "2.0", "reason": "required",
                        "because": {"origin": {"kind": "plugin", "plugin": "p"}, "requirement": "y>=2",
                                    "text": "plugin 'p' requires y>=2"}}
    assert found[0]["because"] == {"origin": {"kind": "package", "package": "x 1.0"}, "requirement": "y<2",
                                   "text": "x 1.0 requires y<2"}
    assert [reasons(c) for c in found] == ["x 1.0 requires y<2, which cannot be met now", "plugin 'p' requires y>=2",
                                           "no longer required"]


def test_an_upgrade_frees_only_what_it_names() -> None:
    assert {p.name: str(p.version) for p in resolve(["x", "w"], Upgrade.of(packages=["W"])).pins} == {
        "x": "1.0", "y": "1.0", "w": "2.0"}
    assert {m.package: m.reason for m in resolve(["x", "w"], Upgrade.of(True)).moves} == {
        "x": "upgrade", "y": "upgrade", "w": "upgrade", "z": "unused"}
    assert Version("1.0") == dict(Preferences.from_pins({"W": "1.0", "bad": "not a version"}).pins)["w"]


def test_a_new_project_takes_its_newest_release_that_keeps_the_preferred_roots() -> None:
    """pm.resolver.ordering rule 2: n 2.0 would move the preferred root w (its w==2.0), so n 1.0
    comes first, as uv decides (w first, then rejects n 2.0); without preferences n 2.0 and w 2.0."""
    from pm.resolver.ordering import KEEPING_LOOK

    graph = {**GRAPH, "n": {"1.0": [], "2.0": ["w==2.0"]}}
    union = Union(Core((), (), "test", None), (), tuple(Tagged(Requirement(r), Origin("p", "p/plugin.yaml")) for r in ("w", "n")))
    kept = resolve_union(union, current_target(), MemorySource(graph, set()), Policy(preferences=Preferences.from_pins(PREVIOUS)))
    fresh = resolve_union(union, current_target(), MemorySource(graph, set()), Policy())
    assert {p.name: str(p.version) for p in kept.pins} == {"w": "1.0", "n": "1.0"}
    assert {p.name: str(p.version) for p in fresh.pins} == {"w": "2.0", "n": "2.0"}
    assert KEEPING_LOOK >= 2


def test_a_requirement_the_operator_made_is_read_without_its_note() -> None:
    """An override's or constraint's text carries a note (``x==1.0 (override)``) that packaging
    cannot parse: the holders and the yanked-pin wording read the requirement itself."""
    from packaging.version import Version

    from pm.ops.holders import excludes
    from pm.resolver.model import CONSTRAINT_NOTE, OVERRIDE_NOTE, stated
    from pm.resolver.wording import _pins_exactly

    assert stated(f"numpy>=1.26{OVERRIDE_NOTE}") == "numpy>=1.26"
    assert stated(f"lib<2{CONSTRAINT_NOTE}") == "lib<2"
    assert excludes(f"lib<2{CONSTRAINT_NOTE}", Version("2.0"))
    assert not excludes(f"lib<2{OVERRIDE_NOTE}", Version("1.5"))
    assert _pins_exactly(f"x==1.0{OVERRIDE_NOTE}")
