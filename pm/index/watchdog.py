"""The deadlines of requests in flight, kept by one thread.

A socket timeout bounds each wait for a byte, not a request: a server that drips its status line,
its headers or its body a byte a second resets it at every byte, and held ``plugins install`` (the
home lock with it) for 162 s against a 5 s promise. :func:`watched` registers a connection with
the moment its request must be done; when that moment passes first, one daemon thread shuts the
connection's socket down, the blocked read returns at once, and the client reports the deadline
(:class:`pm.index.http.HttpClient` checks the clock on every failure). Registering costs a heap push
under a lock; the thread sleeps until the earliest deadline.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

_LOCK = threading.Condition()
_HEAP: list[_Watch] = []
_ORDER = itertools.count()
_STARTED: list[threading.Thread] = []
_AGAIN = 0.05  # seconds: a connection past its deadline with no socket yet (connecting) is looked at again


@dataclass(order=True)
class _Watch:
    ends: float
    order: int
    connection: Any = field(compare=False)  # an http.client connection: its .sock is cut
    done: bool = field(default=False, compare=False)


@contextmanager
def watched(connection: Any, ends: float) -> Iterator[None]:
    """Cut ``connection``'s socket if the body is still running at ``ends`` (time.monotonic())."""
    entry = _Watch(ends, next(_ORDER), connection)
    with _LOCK:
        heapq.heappush(_HEAP, entry)
        if not _STARTED:
            _STARTED.append(threading.Thread(target=_keep, name="hermes-pm-deadlines", daemon=True))
            _STARTED[0].start()
        if _HEAP[0] is entry:
            _LOCK.notify()
    try:
        yield
    finally:
        with _LOCK:  # the thread cuts only under the lock: never a kept-alive socket after the body
            entry.done = True
            while _HEAP and _HEAP[0].done:  # requests end in about the order they began: the heap stays small
                heapq.heappop(_HEAP)


def _keep() -> None:
    with _LOCK:
        while True:
            while _HEAP and _HEAP[0].done:
                heapq.heappop(_HEAP)
            if not _HEAP:
                _LOCK.wait()
                continue
            wait = _HEAP[0].ends - time.monotonic()
            if wait > 0:
                _LOCK.wait(wait)
                continue
            entry = heapq.heappop(_HEAP)
            if not _cut(entry.connection):  # still connecting: look again shortly
                entry.ends = time.monotonic() + _AGAIN
                heapq.heappush(_HEAP, entry)


def _cut(connection: Any) -> bool:
    """Shut the socket down under its reader (the plain socket's call, under TLS too: the
    reader's SSL read then fails, no TLS state is touched from this thread). False when the
    connection has no socket yet."""
    import socket  # (loaded with the first request, as http.client is)

    sock = getattr(connection, "sock", None)
    if sock is None:
        return False
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass  # already closed
    return True
