"""How many threads fetch from an index at once: sized from the CPU count and the index's latency.

A fetch thread spends its time two ways: on the CPU (digesting a page, reading metadata out of a
zip directory; a few ms per answer, all under the GIL) and waiting for the index to answer. Near
the index (loopback, a LAN mirror) there is almost no waiting, and every thread past one per core
only fights for the GIL; far from it, threads wait most of the time, and more of them in flight
keep both the wire and the CPU busy. :func:`fetch_workers` is that rule; :class:`Latency` measures
what it needs (the distance of the farthest host the index sends pm to: each host's shortest time
to first byte) as the operation runs, so a pool sized by it grows once the first answer is in, grows
again when a farther host first answers (PyPI's pages and its files are two hosts), and shrinks if a
later answer is quicker.

``HERMES_PM_FETCH_WORKERS`` (a positive integer) fixes the number instead, for operators who know
their index better (:func:`workers_setting`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

#: CPU time pm spends per answer (measured cold against a local mirror: 2.5 ms per answer on 80
#: small pages and 93 range reads, 5 ms on 32 big pages): the latency one more thread covers.
CPU_PER_ANSWER = 0.005
#: Never more fetch threads than this, however far the index (and however many cores).
MAX_WORKERS = 32


def fetch_workers(cpus: int, latency: float | None) -> int:
    """Threads worth fetching at once from an index that answers in ``latency`` seconds (time to
    first byte; None: not measured yet), on ``cpus`` cores.

    The rule: one thread per core, plus one per :data:`CPU_PER_ANSWER` (5 ms) of latency, at most
    :data:`MAX_WORKERS` (32) — ``min(32, cpus + latency / 5 ms)``. While a thread waits one
    latency for its answer, the others can use the CPU for that long; at 5 ms of CPU per answer,
    that is ``latency / 5 ms`` more answers in flight (Little's law). On 2 cores: 2 threads for a
    loopback index (~1 ms), 4 at 10 ms, 12 at 50 ms, 32 from 150 ms. The fetch pool of each index
    runs up to this many threads, and so does the resolver's look-ahead (its crawls fetch too).

    Measured on 2 cores, cold resolves of 200 plugins against a local bare mirror with that
    latency added (medians of 5-7, both pools at one fixed size): best at 1-2 threads for 0-10 ms
    (16 took 25-50 % longer), 8-12 at 50 ms (4: +55 %), 32 at 150 ms (16: +10 %, 8: +60 %, 64: no
    better). On big pages (5,000-10,000 files each) the count made no measurable difference.
    """
    wait = 0.0 if latency is None else max(0.0, latency)
    return max(1, min(MAX_WORKERS, max(1, cpus) + round(wait / CPU_PER_ANSWER)))


def cpu_count() -> int:
    """The cores this process may run on (its affinity, where the platform tells), at least 1."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def workers_setting() -> int | None:
    """``$HERMES_PM_FETCH_WORKERS`` when it is a positive integer (then it fixes the number of fetch
    threads, whatever the latency), else None."""
    value = os.environ.get("HERMES_PM_FETCH_WORKERS", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None


class Latency:
    """An index's latency: the farthest of its hosts, each host at its shortest time to first byte.

    The shortest per host, not a mean: the more requests pm has in flight, the longer a busy server
    (or pm's own busy interpreter) takes to get to each, and counting that queueing as distance
    would add threads that only make the queue longer. The shortest answer is the distance alone,
    as TCP estimates a path's base round trip. The farthest host, not the nearest: an index whose
    pages come from a nearby cache and whose files from a distant CDN (PyPI behind a proxy: 2 ms
    and 50-100 ms) keeps threads waiting on the files, and those waits are what more threads cover.
    Known after the first answer. Thread-safe; each listener hears every new value (so a pool is
    resized as soon as an answer's status line is in).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_host: dict[str, float] = {}
        self._value: float | None = None
        self._listeners: list[Callable[[float], None]] = []

    def seconds(self) -> float | None:
        """The farthest host's shortest time to first byte so far, or None before the first answer."""
        return self._value

    def listen(self, listener: Callable[[float], None]) -> None:
        with self._lock:
            self._listeners.append(listener)

    def observe(self, seconds: float, host: str = "") -> None:
        """One answer's time to first byte (from the request sent to its status line read) from ``host``."""
        with self._lock:
            known = self._by_host.get(host)
            if known is not None and seconds >= known:
                return
            self._by_host[host] = seconds
            value = max(self._by_host.values())
            if value == self._value:
                return
            self._value = value
            listeners = list(self._listeners)
        for listener in listeners:
            listener(value)
