"""When :class:`pm.index.http.HttpClient` asks again, and after how long: a dropped kept-alive
connection at once (once), a transient failure (:func:`pm.index.network.is_transient`) or a 429/5xx
answer after a pause that doubles each time, up to ``retries`` times, while the request's deadline
leaves time for another attempt."""

from __future__ import annotations

import os
import time

from pm.index.base import IndexFailure
from pm.index.network import is_transient


def _dropped() -> tuple[type[BaseException], ...]:
    """Errors that mean "the server closed a kept-alive connection": retry once on a fresh one."""
    import http.client

    return (http.client.RemoteDisconnected, http.client.BadStatusLine, ConnectionResetError, BrokenPipeError,
            ConnectionAbortedError)


#: Answers worth asking again after a pause (as pip and uv do): rate limited, or a server error.
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
DEFAULT_RETRIES = 3
DEFAULT_BACKOFF = 0.25  # seconds before the first retry; doubled for each next one
_MAX_PAUSE = 10.0  # a Retry-After longer than this is cut to it
_LAST_TRY = 0.05  # seconds an attempt needs at least: no pause ends later than this before the deadline


def pause(attempt: int, backoff: float, retry_after: str | None, ends: float) -> float | None:
    """Seconds to wait before attempt ``attempt + 1`` (``backoff`` doubled per attempt, or the
    server's Retry-After, at most :data:`_MAX_PAUSE`), or None when that wait would not end,
    with a moment left to ask, before ``ends`` (time.monotonic())."""
    delay = backoff * (2 ** attempt)
    if retry_after is not None and retry_after.strip().isdigit():
        delay = float(retry_after.strip())
    delay = min(delay, _MAX_PAUSE)
    return None if time.monotonic() + delay + _LAST_TRY >= ends else delay


class _Transient(IndexFailure):
    """A failure worth retrying (:func:`is_transient`); an :class:`IndexFailure` like any."""


def _failure(exc: BaseException) -> type[IndexFailure]:
    return _Transient if is_transient(exc) else IndexFailure


def _retries_setting() -> int:
    """``$HERMES_PM_HTTP_RETRIES`` (else ``$UV_HTTP_RETRIES``, as uv reads it), default 3."""
    for variable in ("HERMES_PM_HTTP_RETRIES", "UV_HTTP_RETRIES"):
        value = os.environ.get(variable, "").strip()
        if value.isdigit():
            return int(value)
    return DEFAULT_RETRIES

