"""Fetch concurrency: the sizing rule on data, the operators' override, and a real index whose
latency decides how many threads fetch from it."""

from __future__ import annotations

import pytest
from packaging.utils import canonicalize_name

from pm.index import SimpleIndexSource
from pm.index.concurrency import MAX_WORKERS, Latency, fetch_workers, workers_setting
from pm.testing import LocalIndex

#: (cores, latency in seconds or None) -> fetch threads: one per core, one more per 5 ms, at most 32.
TABLE = {
    (1, None): 1, (2, None): 2, (4, None): 4, (64, None): 32,
    (1, 0.0): 1, (2, 0.0): 2, (8, 0.0): 8, (32, 0.0): 32, (64, 0.0): 32,
    (2, 0.001): 2, (2, 0.002): 2, (2, 0.003): 3, (2, 0.010): 4, (8, 0.010): 10,
    (1, 0.020): 5, (2, 0.050): 12, (4, 0.050): 14, (16, 0.050): 26,
    (2, 0.100): 22, (2, 0.150): 32, (8, 0.150): 32, (2, 0.500): 32, (2, 30.0): 32,
    (0, 0.0): 1, (-3, 0.010): 1 + 2, (2, -1.0): 2,
}


@pytest.mark.parametrize(("cpus", "latency"), list(TABLE))
def test_fetch_workers_follows_the_rule(cpus: int, latency: float | None) -> None:
    assert fetch_workers(cpus, latency) == TABLE[cpus, latency]


def test_fetch_workers_grows_with_latency_and_never_passes_the_bound() -> None:
    counts = [fetch_workers(2, ms / 1000) for ms in range(0, 1000)]
    assert counts == sorted(counts) and counts[0] == 2 and counts[-1] == MAX_WORKERS


@pytest.mark.parametrize(("value", "expected"), [
    ("6", 6), (" 40 ", 40), ("1", 1), ("0", None), ("-2", None), ("many", None), ("2.5", None), ("", None),
])
def test_the_operators_setting(monkeypatch: pytest.MonkeyPatch, value: str, expected: int | None) -> None:
    monkeypatch.setenv("HERMES_PM_FETCH_WORKERS", value)
    assert workers_setting() == expected


def test_latency_is_the_shortest_answer_so_far() -> None:
    latency, heard = Latency(), []
    latency.listen(heard.append)
    assert latency.seconds() is None
    for seconds in (0.3, 0.5, 0.02, 0.04, 0.02, 0.001, 2.0):
        latency.observe(seconds)
    assert latency.seconds() == 0.001
    assert heard == [0.3, 0.02, 0.001]  # listeners hear each new shortest time, once


def test_latency_is_the_farthest_host_at_its_shortest() -> None:
    """Pages from a nearby cache, files from a distant CDN: the files' waits are what threads cover."""
    latency, heard = Latency(), []
    latency.listen(heard.append)
    latency.observe(0.002, "pypi.org")
    latency.observe(0.09, "files.pythonhosted.org")
    latency.observe(0.001, "pypi.org")  # nearer pages do not shrink what the files need
    latency.observe(0.06, "files.pythonhosted.org")
    latency.observe(0.2, "files.pythonhosted.org")  # a slow answer is queueing, not distance
    assert latency.seconds() == 0.06 and heard == [0.002, 0.09, 0.06]
    assert fetch_workers(2, latency.seconds()) == 14


def _fetch_many(source: SimpleIndexSource, count: int) -> None:
    """Prefetch ``count`` projects at once (none exists: each is one 404 answer), then wait."""
    names = [canonicalize_name(f"p{i:02d}") for i in range(count)]
    source.prefetch(names)
    for name in names:
        assert source.links(name) == ()


@pytest.mark.parametrize("delay", [0.05, 0.15])
def test_a_distant_index_gets_the_threads_the_rule_gives(monkeypatch: pytest.MonkeyPatch, delay: float) -> None:
    monkeypatch.delenv("HERMES_PM_FETCH_WORKERS", raising=False)
    monkeypatch.setattr("pm.index.simple.cpu_count", lambda: 2)
    with LocalIndex(delay=delay) as index, SimpleIndexSource(index.url) as source:
        assert source.workers() == 2  # nothing measured yet: one thread per core
        _fetch_many(source, 40)
        latency = source.client.latency.seconds()
        assert latency is not None and delay <= latency < delay + 0.04
        expected = fetch_workers(2, latency)
        assert expected >= fetch_workers(2, delay) >= 12
        assert source.workers() == expected
        pool = source._pool
        assert pool.workers == expected and pool.threads == expected  # type: ignore[attr-defined]


def test_the_operators_setting_fixes_the_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HERMES_PM_FETCH_WORKERS", "3")
    with LocalIndex(delay=0.05) as index, SimpleIndexSource(index.url) as source:
        _fetch_many(source, 20)
        pool = source._pool
        assert source.workers() == 3 and pool.workers == 3  # type: ignore[attr-defined]
        assert pool.threads <= 3  # type: ignore[attr-defined]
