"""Crawling ahead of resolvelib, so its callbacks find pages and metadata already fetched."""

from __future__ import annotations

import queue
import threading
from typing import TYPE_CHECKING

from pm.index.base import looking_ahead
from pm.resolver.model import Req

if TYPE_CHECKING:
    from pm.resolver.provider import Provider

#: Threads that crawl ahead of resolvelib when the source does not say how many threads may
#: fetch from it at once (a ``workers()`` method; an index sizes it from its latency).
_WORKERS = 4


class LookAhead:
    """Crawls ahead of resolvelib: a project page, then its best matching file's metadata (the
    preferred version's, when it is among them), then
    the pages of that file's dependencies, and so on, each project once.

    In the common case (little backtracking) resolvelib then finds every answer already fetched,
    so a resolution waits about twice per level of the dependency graph instead of twice per
    package. It runs on its own daemon threads (a slow fetch never holds up the process's exit),
    as many as the source's ``workers()`` allows at the time (a crawl fetches on its own thread
    when the page it needs is not started yet, so these threads fetch too, and more of them only
    fight for the GIL), and only calls the source (thread-safe by contract) and the provider's
    pure helpers; it never builds. Best effort: every error is dropped, because the resolver meets
    it again on its own path and reports it there.
    """

    def __init__(self, provider: Provider) -> None:
        self._provider = provider
        self._queue: queue.SimpleQueue[Req | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._seen: set[str] = set()
        self._threads = 0
        self._stopped = False

    def page(self, req: Req) -> None:
        """Crawl from ``req`` (once per project name); returns at once."""
        with self._lock:
            if self._stopped or req.name in self._seen:
                return
            self._seen.add(req.name)
            self._queue.put(req)
            if self._threads < self._limit():
                self._start()

    def _start(self) -> None:
        """One more crawling thread (the lock held)."""
        self._threads += 1
        threading.Thread(target=self._work, name="hermes-pm-lookahead", daemon=True).start()

    def _limit(self) -> int:
        workers = getattr(self._provider.source, "workers", None)
        return workers() if callable(workers) else _WORKERS

    def close(self) -> None:
        """Stop: queued crawls are dropped, running ones end after their current fetch."""
        with self._lock:
            self._stopped = True
            for _ in range(self._threads):
                self._queue.put(None)

    def _work(self) -> None:
        with looking_ahead():  # sources may decline costly guesses (a whole wheel over a bound)
            while (req := self._queue.get()) is not None:
                if not self._stopped:
                    self._crawl(req)
                if self._refit():
                    return

    def _refit(self) -> bool:
        """After each crawl, follow the source's limit, which moves as its latency becomes known:
        start threads for waiting crawls while under it; True: this thread is over it and ends."""
        with self._lock:
            if self._stopped:
                return False
            limit = self._limit()
            if self._threads > limit:
                self._threads -= 1
                return True
            for _ in range(min(limit - self._threads, self._queue.qsize())):
                self._start()
            return False

    def _crawl(self, req: Req) -> None:
        provider = self._provider
        try:
            files = provider.best_files(req.name, [req])
            preferred = provider.preferred.get(req.name)  # the version resolvelib will try first
            files = [f for f in files if f[0] == preferred] or files
            if not files or self._stopped or not files[0][1].is_wheel:
                return
            metadata = provider.source.metadata(files[0][1])
            found = [Req.from_requirement(r, frozenset()) for r in provider.applying(metadata, req.extras)]
            provider.source.prefetch(r.name for r in found)
        except Exception:  # noqa: BLE001 - best effort; the resolver reports it on its own path
            return
        for dep in found:
            self.page(dep)
