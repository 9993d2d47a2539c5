"""The garbage collector around a resolution (pm.resolver.resolve._collector_paused)."""

from __future__ import annotations

import gc
import weakref

from pm.resolver.resolve import _collector_paused


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the collector frees it


def test_the_collector_is_paused_then_back_without_a_pending_walk_and_still_frees_cycles() -> None:
    assert gc.isenabled()
    collections: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.callbacks.append(seen)
    try:
        with _collector_paused():
            assert not gc.isenabled()
            made = [{"n": [i]} for i in range(50_000)]  # far past the youngest generation's threshold
            cycle = _Node()
            gone = weakref.ref(cycle)
        assert gc.isenabled()
        after = [[i] for i in range(100)]  # would set off the collection pending over ``made``
    finally:
        gc.callbacks.remove(seen)
    assert collections == []
    del made, cycle, after
    assert gone() is not None  # a cycle waits for a collection...
    gc.collect()
    assert gone() is None  # ...and the next full one frees it


def test_a_paused_collector_is_left_paused() -> None:
    gc.disable()
    try:
        with _collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
