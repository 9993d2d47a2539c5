"""Dead-end learning never rejects a union that has a resolution: random small indexes (missing
projects, wheels for another platform, exact / range / excluding specifiers) resolved by pm and
by brute force over every assignment, through an in-memory source implementing the Source
interface (so hundreds of cases run in seconds). The real-wheel cases in cases/dead-end-*.json
and the differential test against uv cover the same ground more slowly."""

from __future__ import annotations

import itertools
import random

import pytest
from packaging.requirements import Requirement
from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import Version

from pm.index.base import FileLink, Metadata
from pm.inputs.core import Core
from pm.inputs.target import current_target
from pm.inputs.union import Origin, Tagged, Union
from pm.resolver import Conflict, MissingProjects, Policy, TooComplex, resolve_union

Graph = dict[str, dict[str, list[str]]]  # project -> version -> requirements
OTHER_PLATFORM = "cp311-cp311-win_amd64"


class MemorySource:
    """Wheels that exist only as FileLink and Metadata values; ``foreign`` ones are for another
    platform."""

    def __init__(self, graph: Graph, foreign: set[tuple[str, str]]) -> None:
        self.files: dict[NormalizedName, tuple[FileLink, ...]] = {}
        self.metadata_of: dict[FileLink, Metadata] = {}
        for name, versions in graph.items():
            links = []
            for version, requires in versions.items():
                tag = OTHER_PLATFORM if (name, version) in foreign else "py3-none-any"
                filename = f"{name.replace('-', '_')}-{version}-{tag}.whl"
                link = FileLink(filename, f"file:///memory/{filename}", sha256="0" * 64)
                self.metadata_of[link] = Metadata(canonicalize_name(name), Version(version),
                                                  tuple(Requirement(r) for r in requires))
                links.append(link)
            self.files[canonicalize_name(name)] = tuple(links)

    def links(self, name: NormalizedName) -> tuple[FileLink, ...]:
        return self.files.get(canonicalize_name(name), ())

    def metadata(self, link: FileLink) -> Metadata:
        return self.metadata_of[link]

    def prefetch(self, names: object) -> None:
        pass

    def prefetch_metadata(self, links: object) -> None:
        pass


def random_case(seed: int) -> tuple[Graph, set[tuple[str, str]], list[str]]:
    rng = random.Random(seed)
    names = [f"p{i}" for i in range(rng.randint(4, 7))]
    graph: Graph = {}
    for i, name in enumerate(names):
        if i and rng.random() < 0.15:
            continue  # a project no source has
        graph[name] = {}
        for version in rng.sample(["1", "2", "3"], rng.randint(1, 3)):
            requires = [other + rng.choice(["", "==1", "==2", ">=2", "<3", "!=2"])
                        for other in rng.sample(names, rng.randint(0, 2)) if other != name]
            graph[name][version] = requires
    foreign = {(n, v) for n, versions in graph.items() for v in versions if rng.random() < 0.1}
    roots = [rng.choice(names) + rng.choice(["", ">=2", "<2"]) for _ in range(rng.randint(1, 4))]
    return graph, foreign, roots


def satisfiable(graph: Graph, foreign: set[tuple[str, str]], roots: list[str]) -> bool:
    """Whether some choice of (project -> usable version or nothing) satisfies every root and
    every chosen version's requirements: every assignment is tried."""
    names = sorted(graph)
    choices = [[None, *(v for v in graph[n] if (n, v) not in foreign)] for n in names]

    def holds(text: str, chosen: dict[str, str | None]) -> bool:
        requirement = Requirement(text)
        version = chosen.get(canonicalize_name(requirement.name))
        return version is not None and requirement.specifier.contains(version, prereleases=True)

    for combination in itertools.product(*choices):
        chosen = dict(zip(names, combination, strict=True))
        if all(holds(r, chosen) for r in roots) and all(
                holds(r, chosen) for n, v in chosen.items() if v is not None for r in graph[n][v]):
            return True
    return False


def resolves(graph: Graph, foreign: set[tuple[str, str]], roots: list[str]) -> bool:
    union = Union(Core((), (), "test", None), (), tuple(Tagged(Requirement(r), Origin("p", "plugin.yaml")) for r in roots))
    try:
        resolve_union(union, current_target(), MemorySource(graph, foreign), Policy(), max_rounds=2_000)
    except (Conflict, MissingProjects):
        return False
    return True


@pytest.mark.parametrize("chunk", range(4))
def test_pm_resolves_exactly_the_unions_brute_force_can(chunk: int) -> None:
    wrong = []
    for seed in range(chunk * 100, chunk * 100 + 100):
        graph, foreign, roots = random_case(seed)
        if resolves(graph, foreign, roots) != satisfiable(graph, foreign, roots):
            wrong.append((seed, roots, graph, sorted(foreign)))
    assert not wrong, wrong


def test_a_pin_failing_right_after_a_rollback_does_not_lose_the_solution() -> None:
    """Found by the random differential (seed 1460 and this smaller one): with resolvelib's
    optimistic backjumping, dia-right 1.0 failing at once (its dia-mid>=1 is dead) after a
    rollback blamed 'fine' and missed dia-top 1.0 + dia-left 1.0."""
    graph: Graph = {
        "dia-top": {"1.0": ["dia-left"], "2.0": ["dia-right"]},
        "dia-left": {"1.0": ["fine"], "2.0": ["dia-mid"]},
        "dia-right": {"1.0": ["dia-mid>=1"]},
        "dia-mid": {"1.0": ["dia-end"], "2.0": ["dia-end"]},
        "fine": {"1.0": []},
    }
    assert resolves(graph, set(), ["dia-top", "fine"])
    assert resolves(*random_case(1460)) == satisfiable(*random_case(1460))


def test_what_could_be_offered_counts_pre_releases_but_not_files_the_target_cannot_use() -> None:
    from pm.resolver.learning import Learning
    from pm.resolver.model import Req
    from pm.resolver.provider import Provider

    source = MemorySource({"p0": {"1": [], "2b1": [], "3": []}}, {("p0", "3")})
    provider = Provider(source, current_target(), Policy())
    assert isinstance(provider.learning, Learning)
    req = Req.from_requirement(Requirement("p0>=1"), frozenset())
    assert provider.learning.possible(req) == (Version("2b1"), Version("1"))
    assert not provider.learning.prove(req)  # nothing tried yet: nothing is dead
    provider.close()


def random_cycle(seed: int) -> tuple[Graph, list[str]]:
    """A cycle of 2-4 projects with 2-6 versions each (each version requiring the next project
    around it, mostly by an exact pin, sometimes also one across), and its roots."""
    rng = random.Random(seed)
    names = [f"c{i}" for i in range(rng.randint(2, 4))]
    versions = {n: [str(v) for v in range(1, rng.randint(2, 6) + 1)] for n in names}

    def specifier(name: str) -> str:
        pick = rng.choice(versions[name])
        return rng.choice([f"=={pick}"] * 4 + [f">={pick}", f"<{pick}", f"!={pick}", ""])

    graph: Graph = {}
    for i, name in enumerate(names):
        after, across = names[(i + 1) % len(names)], rng.choice(names)
        graph[name] = {v: [after + specifier(after)] + ([across + specifier(across)]
                                                         if across not in (name, after) and rng.random() < 0.3 else [])
                       for v in versions[name]}
    roots = [names[0]] + ([(other := rng.choice(names)) + specifier(other)] if rng.random() < 0.5 else [])
    return graph, roots


@pytest.mark.parametrize("chunk", range(2))
def test_cycles_are_decided_as_brute_force_decides_them_within_a_few_hundred_rounds(chunk: int) -> None:
    """Issue 33: a version whose closure needs another version of itself is proved impossible
    (never a satisfiable cycle refused), so resolvelib stops swapping pins around the cycle: each
    verdict comes within 300 rounds, where 20,000 were not enough before."""
    wrong = []
    for seed in range(chunk * 150, chunk * 150 + 150):
        graph, roots = random_cycle(seed)
        union = Union(Core((), (), "test", None), (), tuple(Tagged(Requirement(r), Origin("p", "plugin.yaml")) for r in roots))
        try:
            resolve_union(union, current_target(), MemorySource(graph, set()), Policy(), max_rounds=300)
            verdict = True
        except Conflict:
            verdict = False
        except TooComplex:
            verdict = None
        if verdict != satisfiable(graph, set(), roots):
            wrong.append((seed, roots, graph, verdict))
    assert not wrong, wrong


def test_a_cycle_with_no_solution_is_a_conflict_naming_both_projects() -> None:
    graph: Graph = {"a": {"1.0.0": ["b==1.0.0"], "2.0.0": ["b==2.0.0"]},
                    "b": {"1.0.0": ["a==2.0.0"], "2.0.0": ["a==1.0.0"]}}
    union = Union(Core((), (), "test", None), (), (Tagged(Requirement("a"), Origin("p", "plugin.yaml")),))
    with pytest.raises(Conflict) as raised:
        resolve_union(union, current_target(), MemorySource(graph, set()), Policy(), max_rounds=100)
    assert str(raised.value) == (
        "plugin 'p' (plugin.yaml) requires a; a 2.0.0 requires b==2.0.0; b 2.0.0 requires a==1.0.0, which excludes "
        "a 2.0.0 above (one environment holds one version of a); a 1.0.0 requires b==1.0.0; b 1.0.0 requires "
        "a==2.0.0, which excludes a 1.0.0 above (one environment holds one version of a). Plugins involved: 'p'.")
