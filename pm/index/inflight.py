"""Each keyed computation once, however many threads ask for it (:class:`InFlight`)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from concurrent.futures import Executor, Future
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class _Slot(Generic[V]):
    __slots__ = ("claimed", "future")

    def __init__(self) -> None:
        self.claimed = False
        self.future: Future[V] = Future()


class InFlight(Generic[K, V]):
    """Compute each key once, whoever asks first; everyone else joins that computation.

    Contract: for one key, ``compute`` runs at most once at a time and its result is kept for the
    life of this object; a failure is delivered to everyone waiting at that moment and then
    forgotten, so a later :meth:`get` tries again. :meth:`submit` queues work on the executor and
    returns at once; a :meth:`get` of a key that is queued but not started runs it on the calling
    thread instead of waiting behind the queue.
    """

    def __init__(self, executor: Executor | None) -> None:
        self._executor = executor
        self._lock = threading.Lock()
        self._slots: dict[K, _Slot[V]] = {}

    def get(self, key: K, compute: Callable[[], V]) -> V:
        with self._lock:
            slot = self._slots.get(key)
            if slot is None:
                slot = self._slots[key] = _Slot()
            run, slot.claimed = not slot.claimed, True
        if run:
            self._run(key, slot, compute)
        return slot.future.result()

    def submit(self, key: K, compute: Callable[[], V]) -> None:
        if self._executor is None:
            return
        with self._lock:
            if key in self._slots:
                return
            slot = self._slots[key] = _Slot()
        try:
            self._executor.submit(self._claim, key, slot, compute)
        except RuntimeError:  # the executor was shut down: let a later get() compute it inline
            with self._lock:
                if self._slots.get(key) is slot and not slot.claimed:
                    del self._slots[key]

    def _claim(self, key: K, slot: _Slot[V], compute: Callable[[], V]) -> None:
        with self._lock:
            if slot.claimed:
                return
            slot.claimed = True
        self._run(key, slot, compute)

    def _run(self, key: K, slot: _Slot[V], compute: Callable[[], V]) -> None:
        try:
            value = compute()
        except BaseException as exc:
            with self._lock:
                if self._slots.get(key) is slot:
                    del self._slots[key]
            slot.future.set_exception(exc)
            if not isinstance(exc, Exception):
                raise
        else:
            slot.future.set_result(value)
