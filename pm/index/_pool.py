"""A pool of daemon threads for background fetches.

:class:`concurrent.futures.ThreadPoolExecutor` joins its worker threads when the interpreter
exits, so a command that already has its answer still waited for every prefetch and look-ahead
fetch in flight (measured: ~1 s at the end of a cold resolve against the public index). These
threads are daemons: once the command is done, the process ends and unfinished fetches with it.
Nothing they do needs finishing: every cache write is a temp file + rename.
"""

from __future__ import annotations

import itertools
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any, TypeVar

T = TypeVar("T")


class DaemonPool(Executor):
    """Up to ``workers`` daemon threads, started as work arrives; same contract as an Executor.

    The bound can change while the pool runs (:meth:`resize`): fetches are sized by the index's
    latency, which is known only once its first answers are in (:mod:`.concurrency`).
    """

    def __init__(self, workers: int, name: str) -> None:
        self._workers = max(1, workers)
        self._name = name
        self._numbers = itertools.count()
        self._queue: queue.SimpleQueue[tuple[Future[Any], Callable[..., Any], tuple[Any, ...]] | None] = (
            queue.SimpleQueue())
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._closed = False

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot schedule new futures after shutdown")
            self._queue.put((future, lambda: fn(*args, **kwargs), ()))
            if len(self._threads) < self._workers:
                self._start()
        return future

    @property
    def workers(self) -> int:
        """The current bound on threads."""
        return self._workers

    @property
    def threads(self) -> int:
        """Threads started and not yet ended (at most :attr:`workers` once surplus ones finish)."""
        with self._lock:
            return len(self._threads)

    def resize(self, workers: int) -> None:
        """Allow up to ``workers`` threads from now on: work already queued starts at once on new
        threads; threads over the bound end after their current task."""
        with self._lock:
            self._workers = max(1, workers)
            if not self._closed:
                for _ in range(min(self._workers - len(self._threads), self._queue.qsize())):
                    self._start()

    def _start(self) -> None:
        """Start one more thread (the lock held)."""
        thread = threading.Thread(target=self._work, name=f"{self._name}-{next(self._numbers)}", daemon=True)
        self._threads.append(thread)
        thread.start()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._closed = True
            threads = list(self._threads)
        if cancel_futures:
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is not None:
                    item[0].cancel()
        for _ in threads:
            self._queue.put(None)
        if wait:
            for thread in threads:
                thread.join()

    def _work(self) -> None:
        while (item := self._queue.get()) is not None:
            future, call, _ = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = call()
            except BaseException as exc:  # noqa: BLE001 - delivered to whoever waits on the future
                future.set_exception(exc)
            else:
                future.set_result(result)
            if self._surplus():
                return

    def _surplus(self) -> bool:
        """Whether this thread is over the bound (then it leaves the pool and ends)."""
        with self._lock:
            if len(self._threads) <= self._workers:
                return False
            self._threads.remove(threading.current_thread())
            return True
