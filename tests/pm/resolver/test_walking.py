"""Walking down a project's releases (pm.resolver.provider): once the resolver rejects the best
candidates of a project one after the other, the metadata of the next ones is asked for ahead,
twice as many each time, so that each rejection does not wait for its own round trips.

Through the in-memory Source of test_learning, which records what it is asked to prefetch."""

from __future__ import annotations

from collections.abc import Iterable

from packaging.requirements import Requirement

from pm.index.base import FileLink, Metadata
from pm.inputs.core import Core
from pm.inputs.target import current_target
from pm.inputs.union import Origin, Tagged, Union
from pm.resolver import Policy, resolve_union

from .test_learning import MemorySource


class Recording(MemorySource):
    def __init__(self, *args: object) -> None:
        super().__init__(*args)  # type: ignore[arg-type]
        self.prefetched: set[str] = set()
        self.calls: list[list[str]] = []
        self.asked: list[tuple[str, bool]] = []  # (file, whether it was prefetched before it was asked)

    def prefetch_metadata(self, links: Iterable[FileLink]) -> None:
        self.calls.append([link.filename for link in links])
        self.prefetched.update(self.calls[-1])

    def metadata(self, link: FileLink) -> Metadata:
        self.asked.append((link.filename, link.filename in self.prefetched))
        return super().metadata(link)


def test_the_next_releases_are_fetched_ahead_while_the_resolver_walks_down() -> None:
    walk = {str(v): ["b>=2"] for v in range(2, 31)} | {"1": []}  # every a but the oldest needs b>=2
    source = Recording({"a": walk, "b": {"1": [], "2": []}}, set())
    roots = [Tagged(Requirement(r), Origin("p", "plugin.yaml")) for r in ("b==1", "a")]

    resolution = resolve_union(Union(Core((), (), "test", None), (), tuple(roots)), current_target(), source,
                               Policy())

    assert {p.name: str(p.version) for p in resolution.pins} == {"a": "1", "b": "1"}
    first = dict(reversed(source.asked))  # each file's first ask (the look-ahead may ask again)
    walked = [(name, first[name]) for name in dict.fromkeys(n for n, _ in source.asked) if name.startswith("a-")]
    assert [name for name, _ in walked] == [f"a-{v}-py3-none-any.whl" for v in range(30, 0, -1)]
    assert all(ahead for _, ahead in walked[2:]), walked  # once the walk began, each was asked for ahead
    assert max(len(call) for call in source.calls) == 16  # ahead by at most 16 at a time, not the whole list
