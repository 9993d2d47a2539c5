"""How much a body pm keeps in memory may hold and how long it may take: per request, and for
all of one operation's requests together; each bound can be raised from the environment."""

from __future__ import annotations

import math
import os
import time
from typing import TYPE_CHECKING, Any

from pm.base.lock import env_seconds
from pm.base.urls import redact_url
from pm.index.base import IndexFailure

if TYPE_CHECKING:
    import http.client

#: Largest page or metadata body pm keeps in memory, after gzip decoding
#: (``HERMES_PM_MAX_RESPONSE_BYTES``); PyPI's largest project pages are a few MB.
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
#: Seconds one page or metadata request may take from the request to its last byte
#: (``HERMES_PM_REQUEST_DEADLINE``): a server dripping one byte at a time cannot hold pm.
REQUEST_DEADLINE = 300.0
#: Seconds one operation may spend reading pages and metadata, all requests together
#: (``HERMES_PM_OPERATION_DEADLINE``).
OPERATION_DEADLINE = 1800.0


def body_bounds() -> tuple[int, float]:
    """(largest body, deadline in seconds) for bodies kept in memory, from the environment when
    set there to a positive number, else :data:`MAX_RESPONSE_BYTES` and :data:`REQUEST_DEADLINE`."""
    return (int(_positive("HERMES_PM_MAX_RESPONSE_BYTES", MAX_RESPONSE_BYTES)),
            request_deadline())


def request_deadline() -> float:
    """Seconds one request may take from its start to its last byte, retries included
    (``HERMES_PM_REQUEST_DEADLINE``, default :data:`REQUEST_DEADLINE`)."""
    return env_seconds("HERMES_PM_REQUEST_DEADLINE", REQUEST_DEADLINE)


def _positive(variable: str, default: float) -> float:
    try:
        value = float(os.environ.get(variable, ""))
    except ValueError:
        return default
    return value if math.isfinite(value) and value > 0 else default


def operation_deadline() -> float:
    """Seconds one operation may spend reading pages and metadata, all requests together
    (``HERMES_PM_OPERATION_DEADLINE``, default :data:`OPERATION_DEADLINE`)."""
    return env_seconds("HERMES_PM_OPERATION_DEADLINE", OPERATION_DEADLINE)


class _Bound:
    """The size and time a body read into memory may take; raises :class:`IndexFailure`."""

    def __init__(self, url: str, limit: int, deadline: float, operation_ends: float,
                 request_ends: float | None = None) -> None:
        """``request_ends``: when the request must be done (time.monotonic()); default ``deadline``
        seconds from now."""
        self.url, self.limit, self.deadline = url, limit, deadline
        request_ends = time.monotonic() + deadline if request_ends is None else request_ends
        self.ends = min(request_ends, operation_ends)
        self.operation = operation_ends < request_ends
        self.seen = 0

    def inflate(self, decoder: Any, chunk: bytes) -> bytes:
        """Decode ``chunk`` without ever inflating past the size bound (a gzip bomb)."""
        data = decoder.decompress(chunk, self.limit - self.seen + 1)
        if decoder.unconsumed_tail:
            self._refuse(f"larger than {self.limit} bytes once decompressed; not read "
                         "(raise HERMES_PM_MAX_RESPONSE_BYTES)")
        return bytes(data)

    def count(self, data: bytes, response: http.client.HTTPResponse) -> None:
        self.seen += len(data)
        if self.seen > self.limit:
            response.close()
            self._refuse(f"larger than {self.limit} bytes; not read (raise HERMES_PM_MAX_RESPONSE_BYTES)")
        if time.monotonic() > self.ends:
            response.close()
            self._refuse(f"this operation has read the index for longer than {operation_deadline():g}s; given up "
                         "(raise HERMES_PM_OPERATION_DEADLINE)" if self.operation else
                         f"still sending after {self.deadline:g}s; given up (raise HERMES_PM_REQUEST_DEADLINE)")

    def _refuse(self, detail: str) -> None:
        raise IndexFailure(redact_url(self.url), detail)
