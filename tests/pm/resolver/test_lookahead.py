"""LookAhead: crawls on as many threads as the source allows at the time, no more."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace
from typing import Any

from pm.resolver.lookahead import LookAhead


class _Crawled:
    """A provider whose every crawl blocks until released, counting crawls running at once."""

    def __init__(self, workers: int) -> None:
        self.source = SimpleNamespace(workers=lambda: self.workers)
        self.workers = workers
        self.release = threading.Semaphore(0)
        self._lock = threading.Lock()
        self.running = self.peak = 0

    def best_files(self, name: str, reqs: Any) -> list[Any]:
        with self._lock:
            self.running += 1
            self.peak = max(self.peak, self.running)
        self.release.acquire(timeout=5)
        with self._lock:
            self.running -= 1
        return []


def _settle(until: Any) -> None:
    deadline = time.monotonic() + 5
    while not until() and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.05)  # long enough for a thread over the limit to show up


def test_crawls_follow_the_sources_workers_as_they_change() -> None:
    provider = _Crawled(workers=2)
    ahead = LookAhead(provider)  # type: ignore[arg-type]
    for i in range(12):
        ahead.page(SimpleNamespace(name=f"p{i}", extras=frozenset()))  # type: ignore[arg-type]
    _settle(lambda: provider.running == 2)
    assert provider.peak == 2
    provider.workers = 5  # the index turned out far: the next crawl to end starts three more
    provider.release.release()
    _settle(lambda: provider.running == 5)
    assert provider.running == 5 and provider.peak == 5
    provider.workers = 1  # near after all: threads over the limit end after their crawl
    for _ in range(5):
        provider.release.release()
    _settle(lambda: provider.running == 1)
    assert provider.running == 1
    ahead.close()
    for _ in range(12):
        provider.release.release()
