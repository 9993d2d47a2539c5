"""Root context (pm.resolver.learning): a requirement the root requirements on its project rule
out is dead, and so is every candidate that states it — soundly: a set that has a solution is
never refused because of it (pre-releases, extras, markers and === counted), and a refusal names
the roots that ruled the link out. Real wheels on the local index, the real resolver."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import pytest
from packaging.requirements import Requirement

from pm.index import SimpleIndexSource
from pm.inputs.core import Core
from pm.inputs.target import current_target
from pm.inputs.union import Origin, Tagged, Union
from pm.resolver import Conflict, Policy, resolve_union
from pm.testing import LocalIndex, index_from_spec

SPEC: Mapping[str, Mapping[str, object]] = {
    "lib": {"1.0": [], "2.0rc1": [], "2.0": {"extras": {"fast": ["speedup"]}}},
    "speedup": {"1.0": []},
    "wide": {f"0.{i}.0": [] for i in range(120)},
    "needs-old": {"1.0": ["lib<2"]},
    "needs-rc": {"1.0": ["lib>=2.0rc1,<2.1"]},
    "needs-any": {"1.0": ["lib>=1"]},
    "needs-fast": {"1.0": ["lib[fast]>=2"]},
    "needs-old-on-py2": {"1.0": ["lib<2; python_version < '3'"]},
    "deep-a": {f"{v}.0": ["deep-b"] for v in range(1, 6)},
    "deep-b": {f"{v}.0": ["deep-c"] for v in range(1, 6)},
    "deep-c": {f"{v}.0": ["lib<2"] for v in range(1, 6)},
}
P = Origin("p", "plugins/p/plugin.yaml")


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalIndex]:
    with index_from_spec(tmp_path_factory.mktemp("dists"), SPEC) as served:
        yield served


def solve(index: LocalIndex, core: list[str], plugin: list[str], max_rounds: int = 2000) -> dict[str, str]:
    tagged = tuple([Tagged(Requirement(t), Origin.core()) for t in core]
                   + [Tagged(Requirement(t), P) for t in plugin])
    with SimpleIndexSource(index.url) as source:
        resolution = resolve_union(Union(Core((), (), "test", None), (), tagged), current_target(), source,
                                   Policy(), max_rounds=max_rounds)
    return {str(p.name): str(p.version) for p in resolution.pins}


def refused(index: LocalIndex, core: list[str], plugin: list[str]) -> Conflict:
    with pytest.raises(Conflict) as caught:
        solve(index, core, plugin, max_rounds=200)
    return caught.value


@pytest.mark.parametrize(("core", "plugin", "pins"), [
    (["lib==2.0rc1"], ["needs-rc"], {"lib": "2.0rc1", "needs-rc": "1.0"}),  # a pre-release the roots allow
    (["lib[fast]==2.0"], ["needs-any"], {"lib": "2.0", "needs-any": "1.0", "speedup": "1.0"}),  # extras
    (["lib==2.0"], ["needs-fast"], {"lib": "2.0", "needs-fast": "1.0", "speedup": "1.0"}),
    (["lib==2.0"], ["needs-old-on-py2"], {"lib": "2.0", "needs-old-on-py2": "1.0"}),  # a marker that does not hold
    (["lib===2.0"], ["needs-any"], {"lib": "2.0", "needs-any": "1.0"}),
    (["lib<3", "wide>=0.10"], ["needs-old"], {"lib": "1.0", "needs-old": "1.0", "wide": "0.119.0"}),
])
def test_what_the_roots_allow_is_never_ruled_out(index: LocalIndex, core: list[str], plugin: list[str],
                                                  pins: dict[str, str]) -> None:
    assert solve(index, core, plugin) == pins


def test_a_collision_three_links_down_is_refused_naming_the_core_pin(index: LocalIndex) -> None:
    found = refused(index, ["lib==2.0", "wide>=0.1"], ["deep-a"])
    assert list(found.plugins) == ["p"]
    assert str(found) == (
        "plugin 'p' (plugins/p/plugin.yaml) requires deep-a; every version of deep-a (5 versions, 1.0 to 5.0) "
        "requires deep-b; every version of deep-b (5 versions, 1.0 to 5.0) requires deep-c; every version of "
        "deep-c (5 versions, 1.0 to 5.0) requires lib<2; but core requires lib==2.0. Plugins involved: 'p'.")
