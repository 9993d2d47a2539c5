"""The dashboard's connections, bounded: how many, how long a request may take to arrive, how
large its body may be. Anyone who can reach the port can open connections, so none of this waits
for the token.

- Each connection reads with a timeout (:data:`READ_TIMEOUT` per read), and the whole request —
  line, headers, body — must arrive within :data:`REQUEST_DEADLINE` of the accept; the server's
  loop cuts a connection that is still sending after that (a ``408``, best effort, then closed).
- At most :data:`MAX_CONNECTIONS` connections hold a thread. When one more arrives, the oldest
  connection still *sending* its request is cut to make room (a half-sent request cannot keep a
  real one out); when every slot is serving a request that did arrive, the new one gets ``503``.
- A body is read only with a valid ``Content-Length`` no larger than :data:`MAX_BODY`
  (:func:`body_length`: missing ``411``, malformed or negative ``400``, too large ``413``); a
  refused request is answered, then the rest of what the client sends is drained for a moment
  (:func:`drain`) so that closing does not reset the connection before the answer is read.
"""

from __future__ import annotations

import contextlib
import socket
import sys
import threading
import time
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from typing import Any

__all__ = ["MAX_BODY", "MAX_CONNECTIONS", "READ_TIMEOUT", "REQUEST_DEADLINE", "BadLength", "BoundedServer",
           "body_length", "drain"]

#: Largest request body read (a form of a provider's settings is a few hundred bytes).
MAX_BODY = 64 * 1024
#: Connections holding a thread at once.
MAX_CONNECTIONS = 32
#: Seconds one read from a client may wait, and the whole request may take to arrive.
READ_TIMEOUT = 5.0
REQUEST_DEADLINE = 10.0
#: What :func:`drain` reads after a refusal, at most (bytes, seconds).
DRAIN_BYTES = 256 * 1024
DRAIN_SECONDS = 0.5

_TIMED_OUT = (b"HTTP/1.0 408 Request Timeout\r\nContent-Type: text/plain\r\nContent-Length: 40\r\n"
              b"Connection: close\r\n\r\nrequest timeout: the request was too slow")
_BUSY = (b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 34\r\n"
         b"Retry-After: 1\r\nConnection: close\r\n\r\nbusy: too many requests; try again")


@dataclass(frozen=True)
class BadLength(Exception):
    """A request body the dashboard will not read: the ``status`` to answer and why."""

    status: int
    problem: str


def body_length(headers: Any) -> int:
    """The body's length from ``Content-Length``; :class:`BadLength` when it is missing (or the
    body is chunked), not a decimal number, or over :data:`MAX_BODY`."""
    if headers.get("Transfer-Encoding") is not None:
        raise BadLength(411, "a chunked body is not read here; send Content-Length")
    values = headers.get_all("Content-Length") or []
    if not values:
        raise BadLength(411, "a POST needs a Content-Length")
    if len(set(values)) > 1 or not values[0].strip().isdigit() or not values[0].strip().isascii():
        raise BadLength(400, "Content-Length must be one decimal number of bytes, 0 or more")
    length = int(values[0].strip())
    if length > MAX_BODY:
        raise BadLength(413, f"request body too large ({length} bytes; at most {MAX_BODY})")
    return length


def drain(connection: socket.socket) -> None:
    """Read and drop what the client still sends, for at most :data:`DRAIN_BYTES` and
    :data:`DRAIN_SECONDS`, after the answer went out and the writing side was shut."""
    with contextlib.suppress(OSError):
        connection.shutdown(socket.SHUT_WR)
        ends = time.monotonic() + DRAIN_SECONDS
        left = DRAIN_BYTES
        while left > 0 and (wait := ends - time.monotonic()) > 0:
            connection.settimeout(wait)
            chunk = connection.recv(min(left, 65536))
            if not chunk:
                return
            left -= len(chunk)


def _cut(connection: socket.socket, answer: bytes) -> None:
    """Answer (best effort: never blocking the server's loop) and shut ``connection``; its thread,
    blocked reading, then sees the end of the request and finishes."""
    with contextlib.suppress(OSError):
        connection.send(answer, getattr(socket, "MSG_DONTWAIT", 0))
    with contextlib.suppress(OSError):
        connection.shutdown(socket.SHUT_RDWR)


class BoundedServer(ThreadingHTTPServer):
    """A threading HTTP server with the bounds of the module docstring."""

    daemon_threads = True
    block_on_close = False
    request_queue_size = 1024  # the listen backlog: a full one drops a real client's SYN (a 1 s retry)

    def __init__(self, address: tuple[str, int], handler: Any) -> None:
        super().__init__(address, handler)
        self._guard = threading.Lock()
        self._open: set[socket.socket] = set()  # connections with a thread
        self._sending: dict[socket.socket, float] = {}  # of those, still sending their request: since when

    @property
    def open_connections(self) -> int:
        return len(self._open)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._guard:
            if len(self._open) >= MAX_CONNECTIONS:
                if not self._sending:
                    _cut(request, _BUSY)
                    self.shutdown_request(request)
                    return
                oldest = min(self._sending, key=self._sending.__getitem__)
                del self._sending[oldest]
                _cut(oldest, _TIMED_OUT)
            self._open.add(request)
            self._sending[request] = time.monotonic()
        super().process_request(request, client_address)

    def arrived(self, request: Any) -> None:
        """The handler read its whole request: no longer cut for slowness or to make room."""
        with self._guard:
            self._sending.pop(request, None)

    def shutdown_request(self, request: Any) -> None:
        with self._guard:
            self._open.discard(request)
            self._sending.pop(request, None)
        super().shutdown_request(request)

    def service_actions(self) -> None:
        """Called by ``serve_forever`` between accepts: cut requests past :data:`REQUEST_DEADLINE`."""
        late = time.monotonic() - REQUEST_DEADLINE
        with self._guard:
            slow = [c for c, since in self._sending.items() if since < late]
            for connection in slow:
                del self._sending[connection]
        for connection in slow:
            _cut(connection, _TIMED_OUT)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away (reset, timed out, cut) is one line on stderr with ``-v``, else
        nothing (a flood of them must not flood the log); anything else, its traceback."""
        exc = sys.exc_info()[1]
        if not isinstance(exc, OSError):
            super().handle_error(request, client_address)
        elif getattr(self, "verbose", False):
            sys.stderr.write(f"dashboard: connection from {client_address[0]} ended: {type(exc).__name__}: {exc}\n")
