"""Conflict explanations: the pure formatter over findings, and explain() over real resolutions.

The formatter tests build findings as data and assert whole sentences. The resolution tests run
the real resolver over real wheels on a real local index and assert whole messages, so they cover
what explain() takes from resolvelib's causes and from the requirements the provider remembered.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from packaging.requirements import Requirement

import pm
from pm.index import SimpleIndexSource
from pm.inputs.core import Core
from pm.inputs.target import current_target
from pm.inputs.union import Origin, Tagged, Union
from pm.resolver import Conflict, Policy, Resolution, resolve_union
from pm.resolver.explain import Cause, Finding, Unusable
from pm.resolver.wording import KINDS, format_conflict
from pm.testing import LocalIndex, index_from_spec

P = Origin("p", "plugins/p/plugin.yaml")
Q = Origin("q", "plugins/q/pyproject.toml")
CORE = Origin.core()
TARGET = current_target()
PY, PLATFORM = TARGET.python_full_version, TARGET.platform


def conflict(*findings: Finding, plugins: tuple[str, ...] = ("p",), candidate: str | None = None) -> str:
    return format_conflict(Conflict(list(findings), list(plugins), candidate))


# -- the formatter ---------------------------------------------------------------------------------

def test_kinds_are_told_hard_ones_first_then_those_a_setting_can_lift() -> None:
    findings = [
        Finding("conflict", "lib", (Cause("lib", "lib<2", P), Cause("lib", "lib>=2", Q))),
        Finding("yanked", "old", (Cause("old", "old", P),), (Unusable("1.0", "yanked"),)),
        Finding("missing", "ghost", (Cause("ghost", "ghost>=1", Q),)),
        Finding("requires-python", "python", (Cause("python", "Python >=3.99", P, "new 1.0", via_package="new"),),
                context=(Cause("new", "new", P),), python="3.11.7"),
    ]
    assert conflict(*findings, plugins=("p", "q")) == (
        "plugin 'p' (plugins/p/plugin.yaml) requires new, and the resolver tried new 1.0, which requires "
        "Python >=3.99; but the target Python is 3.11.7. "
        "plugin 'q' (plugins/q/pyproject.toml) requires ghost>=1; but no package named 'ghost' exists on the "
        "configured indexes. "
        "plugin 'p' (plugins/p/plugin.yaml) requires lib<2; plugin 'q' (plugins/q/pyproject.toml) requires "
        "lib>=2; no version of lib satisfies all of these. "
        "plugin 'p' (plugins/p/plugin.yaml) requires old; but old 1.0 is yanked; pm uses a yanked release "
        "only when core or a plugin pins that release with == or ===. "
        "Plugins involved: 'p', 'q'.")


def test_each_unusable_version_is_told_with_its_own_reason() -> None:
    versions = (Unusable("3.0", "requires-python", ">=3.12"), Unusable("2.1", "requires-python", ">=3.12"),
                Unusable("2.0", "requires-python", ">=3.13"), Unusable("1.5", "no-compatible-file", "cp311-cp311-win_amd64"),
                Unusable("1.2", "sdist-only"), Unusable("1.1", "yanked", "broken"), Unusable("1.0", "yanked", "broken"),
                Unusable("0.9", "excluded-newer", "2025-01-02T00:00:00+00:00"))
    finding = Finding("requires-python", "lib", (Cause("lib", "lib", CORE),), versions, python="3.11.7",
                      platform="linux-x86_64")
    assert conflict(finding, plugins=()) == (
        "core requires lib; but lib 3.0, 2.1 require Python >=3.12 (the target Python is 3.11.7), and "
        "lib 2.0 requires Python >=3.13 (the target Python is 3.11.7), and lib 1.5 has no file for this "
        "interpreter (Python 3.11.7 on linux-x86_64; wheels for: cp311-cp311-win_amd64), and lib 1.2 has only "
        "a source distribution for this interpreter, which pm builds only when allowed (add 'lib' to "
        "pm.allow_builds in config.yaml, or pass --allow-build lib), and lib 1.1, 1.0 are yanked (reason: "
        "broken); pm uses a yanked release only when core or a plugin pins that release with == or ===, and lib "
        "0.9 was uploaded "
        "after the pm.exclude_newer cutoff (2025-01-02T00:00:00+00:00).")


def test_long_version_lists_are_cut() -> None:
    versions = tuple(Unusable(f"1.{n}", "sdist-only") for n in range(7, 0, -1))
    finding = Finding("sdist-only", "lib[fast]", (Cause("lib[fast]", "lib[fast]", P),), versions)
    assert conflict(finding) == (
        "plugin 'p' (plugins/p/plugin.yaml) requires lib[fast]; but lib[fast] 1.7, 1.6, 1.5, 1.4, 1.3 (and 2 "
        "more) have only a source distribution for this interpreter, which pm builds only when allowed (add "
        "'lib' to pm.allow_builds in config.yaml, or pass --allow-build lib). Plugins involved: 'p'.")


def test_versions_tried_are_told_after_who_asked_for_their_package() -> None:
    causes = (Cause("b", "b==3.0", P, "a 3.0", via_package="a"), Cause("b", "b==3.0", Q, "a 3.0", via_package="a"),
              Cause("b", "b>=2,<3", Q), Cause("b", "b==1.0", P, "a 1.0", via_package="a"))
    context = (Cause("c", "c", Q), Cause("a", "a>=3", Q, "c 2.0", via_package="c"),
               Cause("a", "a!=2.0", P), Cause("a", "a<4", CORE, locked=False))
    finding = Finding("conflict", "b", causes, context=context)
    assert conflict(finding, plugins=("q", "p"), candidate="q") == (
        "plugin 'p' (plugins/p/plugin.yaml) requires a!=2.0 and core requires a<4, and the resolver tried "
        "a 3.0 (which requires b==3.0) and a 1.0 (which requires b==1.0); plugin 'q' (plugins/q/pyproject.toml) "
        "requires b>=2,<3; no version of b satisfies all of these. Other requirements involved: plugin 'q' "
        "(plugins/q/pyproject.toml) requires c; c 2.0 requires a>=3. Plugin 'q' cannot live with plugin(s) 'p'.")


def test_a_version_tried_without_a_root_asking_and_a_core_lock() -> None:
    causes = (Cause("z", "z==1.0", CORE, locked=True), Cause("z", "z>=2", P, "y 1.0", via_package="y"))
    context = (Cause("x", "x", P), Cause("y", "y", P, "x 1.0", via_package="x"))
    finding = Finding("conflict", "z", causes, context=context)
    assert conflict(finding, candidate="p") == (
        "core locks z==1.0; the resolver tried y 1.0, which requires z>=2; no version of z satisfies all of "
        "these. Other requirements involved: plugin 'p' (plugins/p/plugin.yaml) requires x; x 1.0 requires y. "
        "Plugin 'p' cannot live with the host's core requirements.")


def test_one_requirement_no_version_satisfies_names_what_exists() -> None:
    few = Finding("conflict", "lib", (Cause("lib", "lib>=3", P),), available=("2.1", "2.0"))
    many = Finding("conflict", "lib", (Cause("lib", "lib>=9", P),), available=tuple(f"1.{n}" for n in range(9, 2, -1)))
    none = Finding("conflict", "lib", (Cause("lib", "lib>=3", P),))
    assert conflict(few).startswith("plugin 'p' (plugins/p/plugin.yaml) requires lib>=3; no version of lib "
                                    "satisfies it (available: 2.1, 2.0). ")
    assert "no version of lib satisfies it (available: 1.9, 1.8, 1.7, 1.6, 1.5, …)." in conflict(many)
    assert "no version of lib satisfies it. " in conflict(none)


def test_one_version_tried_with_two_requirements_on_the_package() -> None:
    causes = (Cause("b", "b==1.0", P, "a[x,y] 1.0", via_package="a[x,y]"),
              Cause("b", "b==2.0", P, "a[x,y] 1.0", via_package="a[x,y]"))
    finding = Finding("conflict", "b", causes, context=(Cause("a[x,y]", "a[x,y]", P),))
    assert conflict(finding) == (
        "plugin 'p' (plugins/p/plugin.yaml) requires a[x,y], and the resolver tried a[x,y] 1.0, which requires "
        "b==1.0 and b==2.0; no version of b satisfies all of these. Plugins involved: 'p'.")


def test_context_is_told_once_across_findings() -> None:
    context = (Cause("c", "c", P), Cause("a", "a<2", P, "c 1.0", via_package="c"), Cause("a", "a", P))
    missing = Finding("missing", "d", (Cause("d", "d", P, "a 2.1", via_package="a"),), context=context)
    clash = Finding("conflict", "b", (Cause("b", "b>=2", P), Cause("b", "b==1", P, "a 1.0", via_package="a")),
                    context=context)
    assert conflict(clash, missing) == (
        "plugin 'p' (plugins/p/plugin.yaml) requires a, and the resolver tried a 2.1, which requires d; but "
        "no package named 'd' exists on the configured indexes. Other requirements involved: plugin 'p' "
        "(plugins/p/plugin.yaml) requires c; c 1.0 requires a<2. "
        "plugin 'p' (plugins/p/plugin.yaml) requires b>=2; plugin 'p' (plugins/p/plugin.yaml) requires a, and "
        "the resolver tried a 1.0, which requires b==1; no version of b satisfies all of these. "
        "Plugins involved: 'p'.")


def test_finding_detail_is_the_problem_alone() -> None:
    finding = Finding("yanked", "old", (Cause("old", "old", P),), (Unusable("1.0", "yanked", "CVE-1"),))
    assert finding.detail == "old 1.0 is yanked (reason: CVE-1); pm uses a yanked release only when core or a plugin pins that release with == or ==="
    assert Finding("conflict", "lib", ()).detail == ""


# -- explain() over real resolutions ----------------------------------------------------------------

SPEC: Mapping[str, Mapping[str, object]] = {
    "mixed": {"1.0": {"sdist_only": True, "requires_python": ">=3.8"},
              "1.5": {"tags": ["cp311-cp311-win_amd64"]},
              "2.0": {"requires_python": ">=3.99"}},
    "chain-x": {"1.0": ["chain-y"]},
    "chain-y": {"1.0": ["chain-z>=2"]},
    "chain-z": {"1.0": [], "2.0": []},
    "broad": {"1.0": ["chain-y>=1"]},
    "yanky": {"1.0": {"yanked": "bad"}, "0.5": []},
    "pins-yanky": {"1.0": ["yanky==1.0"]},
}


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalIndex]:
    with index_from_spec(tmp_path_factory.mktemp("dists"), SPEC) as served:
        yield served


NO_POLICY = Policy()


def resolve(index: LocalIndex, requested: Mapping[Origin, list[str]], policy: Policy = NO_POLICY) -> Resolution:
    core = Core((), (), "test", None)
    tagged = tuple(Tagged(Requirement(text), origin) for origin, texts in requested.items() for text in texts)
    with SimpleIndexSource(index.url) as source:
        return resolve_union(Union(core, (), tagged), TARGET, source, policy)


def failure(index: LocalIndex, requested: Mapping[Origin, list[str]], policy: Policy = NO_POLICY) -> Conflict:
    with pytest.raises(Conflict) as caught:
        resolve(index, requested, policy)
    return caught.value


def test_versions_of_one_package_unusable_for_different_reasons(index: LocalIndex) -> None:
    found = failure(index, {P: ["mixed"]})
    assert [(f.kind, f.package) for f in found.findings] == [("requires-python", "mixed")]
    assert str(found) == (
        f"plugin 'p' (plugins/p/plugin.yaml) requires mixed; but mixed 2.0 requires Python >=3.99 (the target "
        f"Python is {PY}), and mixed 1.5 has no file for this interpreter (Python {PY} on {PLATFORM}; wheels "
        "for: cp311-cp311-win_amd64), and mixed 1.0 has only a source distribution for this interpreter, which "
        "pm builds only when allowed (add 'mixed' to pm.allow_builds in config.yaml, or pass --allow-build "
        "mixed). Plugins involved: 'p'.")


def test_allowing_the_build_leaves_only_the_other_reasons(index: LocalIndex) -> None:
    found = failure(index, {P: ["mixed>=1.5"]}, Policy(allow_builds=frozenset({"mixed"})))
    assert str(found) == (
        f"plugin 'p' (plugins/p/plugin.yaml) requires mixed>=1.5; but mixed 2.0 requires Python >=3.99 (the "
        f"target Python is {PY}), and mixed 1.5 has no file for this interpreter (Python {PY} on {PLATFORM}; "
        "wheels for: cp311-cp311-win_amd64). Plugins involved: 'p'.")


def test_a_chain_is_told_from_the_root_that_brought_it_in(index: LocalIndex) -> None:
    found = failure(index, {P: ["chain-x"], Q: ["chain-z<2"]})
    assert found.plugins == ("p", "q")
    assert str(found) == (
        "plugin 'p' (plugins/p/plugin.yaml) requires chain-x; chain-x 1.0 requires chain-y; chain-y 1.0 requires "
        "chain-z>=2; but plugin 'q' (plugins/q/pyproject.toml) requires chain-z<2. Plugins involved: 'p', 'q'.")


def test_requirements_that_narrow_nothing_stay_out(index: LocalIndex) -> None:
    found = failure(index, {P: ["chain-y", "broad"], Q: ["chain-z<2"]})
    assert str(found) == (  # broad (chain-y>=1 through broad 1.0) ends in the same dead end: not told again
        "plugin 'p' (plugins/p/plugin.yaml) requires chain-y; chain-y 1.0 requires chain-z>=2; but plugin 'q' "
        "(plugins/q/pyproject.toml) requires chain-z<2. Plugins involved: 'p', 'q'.")


def test_a_transitive_exact_pin_takes_no_yanked_release(index: LocalIndex) -> None:
    """As uv (packse yanked/transitive-yanked-and-unyanked-dependency): only a root's pin opts in."""
    found = failure(index, {P: ["pins-yanky"]})
    assert str(found) == (
        "plugin 'p' (plugins/p/plugin.yaml) requires pins-yanky, and the resolver tried pins-yanky 1.0, which "
        "requires yanky==1.0; but yanky 1.0 is yanked (reason: bad); pm uses a yanked release only when core or "
        "a plugin pins that release with == or ===. Plugins involved: 'p'.")
    pins = {p.name: str(p.version) for p in resolve(index, {P: ["pins-yanky", "yanky==1.0"]}).pins}
    assert pins == {"pins-yanky": "1.0", "yanky": "1.0"}


def test_a_yanked_release_is_told_as_yanked(index: LocalIndex) -> None:
    found = failure(index, {P: ["yanky>=1"]})
    assert str(found) == (
        "plugin 'p' (plugins/p/plugin.yaml) requires yanky>=1; but yanky 1.0 is yanked (reason: bad); pm uses "
        "a yanked release only when core or a plugin pins that release with == or ===. Plugins involved: 'p'.")


def test_the_receipt_schema_knows_every_kind() -> None:
    schema = json.loads((Path(pm.__file__).parent / "schemas" / "receipt.schema.json").read_text())
    assert tuple(schema["$defs"]["finding"]["properties"]["kind"]["enum"]) == KINDS
