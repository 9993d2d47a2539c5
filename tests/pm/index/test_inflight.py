"""InFlight: each key computed once however many threads ask; a failure is told to the waiters
and then forgotten, so a later ask computes again."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from pm.index.inflight import InFlight


def test_many_threads_asking_for_one_key_compute_it_once() -> None:
    flight: InFlight[str, int] = InFlight(None)
    calls: list[int] = []
    started, release = threading.Event(), threading.Event()

    def compute() -> int:
        calls.append(1)
        started.set()
        release.wait(5)
        return 7

    results: list[int] = []
    threads = [threading.Thread(target=lambda: results.append(flight.get("k", compute))) for _ in range(8)]
    threads[0].start()
    started.wait(5)
    for thread in threads[1:]:
        thread.start()
    release.set()
    for thread in threads:
        thread.join(5)
    assert results == [7] * 8 and calls == [1]
    assert flight.get("k", lambda: 8) == 7  # kept for the life of the object


def test_a_failure_reaches_the_caller_and_a_later_get_tries_again() -> None:
    flight: InFlight[str, int] = InFlight(None)

    def fail() -> int:
        raise ValueError("down")

    with pytest.raises(ValueError, match="down"):
        flight.get("k", fail)
    assert flight.get("k", lambda: 3) == 3


def test_submitted_work_runs_on_the_pool_once() -> None:
    calls: list[str] = []
    with ThreadPoolExecutor(2) as pool:
        flight: InFlight[str, str] = InFlight(pool)
        flight.submit("a", lambda: calls.append("a") or "A")
        flight.submit("a", lambda: calls.append("again") or "B")
        assert flight.get("a", lambda: "C") in ("A", "C")
    assert len(calls) <= 1 and "again" not in calls
