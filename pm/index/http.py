"""A small thread-safe HTTP(S) client on :mod:`http.client`.

:class:`HttpClient` keeps one keep-alive connection per thread per host, reconnects once when a
reused connection turns out dropped, follows redirects, and turns every failure into an
:class:`IndexFailure` naming the URL with a short detail ("connection refused", "timed out after
30s", "HTTP 503 Service Unavailable"). Where it connects and with which credentials is
:mod:`pm.index.network`'s; the bounds on a body kept in memory are :mod:`pm.index.bounds`'; the
response types and ``file://`` answers are :mod:`pm.index.responses`'. :class:`InFlight`
(:mod:`pm.index.inflight`) is named here too, for the sources that import it with the client.
"""

from __future__ import annotations

import logging
import threading
import time
import zlib
from collections.abc import Callable, Collection, Hashable, Mapping
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urljoin, urlsplit

from pm.base.urls import redact_url
from pm.index._attempts import _RETRY_STATUSES, _dropped, _failure, _retries_setting, _Transient, pause
from pm.index._attempts import DEFAULT_BACKOFF as DEFAULT_BACKOFF
from pm.index._attempts import DEFAULT_RETRIES as DEFAULT_RETRIES
from pm.index.base import IndexFailure
from pm.index.bounds import REQUEST_DEADLINE as REQUEST_DEADLINE
from pm.index.bounds import _Bound, operation_deadline, request_deadline
from pm.index.bounds import body_bounds as body_bounds
from pm.index.concurrency import Latency
from pm.index.inflight import InFlight as InFlight
from pm.index.network import _connect, describe, netrc_header, phrase
from pm.index.network import proxy_for as proxy_for
from pm.index.network import split_credentials as split_credentials
from pm.index.responses import CHUNK, BodyTooLarge, Response, Sink, get_file
from pm.index.responses import HashingSink as HashingSink
from pm.index.watchdog import watched

if TYPE_CHECKING:
    import http.client  # (http.client and ssl load with the first request: most commands send none)
    import ssl

    from pm.index._pool import DaemonPool

_log = logging.getLogger("pm.http")

USER_AGENT = "hermes-pm (+https://github.com/hermes-agent/hermes-pm)"
DEFAULT_TIMEOUT = 30.0
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def make_pool(workers: int) -> DaemonPool:
    """The pool a source fetches on in the background (daemon threads: see :mod:`._pool`)."""
    from pm.index._pool import DaemonPool

    return DaemonPool(workers, "hermes-pm-fetch")


class HttpClient:
    """GET over HTTP/1.1 with keep-alive; safe to share between threads.

    Contract: :meth:`get` either returns a response whose status is in ``ok`` or raises
    :class:`IndexFailure`; it never raises anything else for network trouble. It is done within
    ``deadline`` seconds of its start, retries and pauses included (None: the request deadline of
    :mod:`.bounds`, for every body kept in memory and every status line). Each call costs one
    round trip per redirect hop on a connection owned by the calling thread (no locks held while
    waiting on the network). :attr:`latency` keeps the shortest time to first byte of its answers
    (what the fetch threads are sized by: :mod:`.concurrency`).
    """

    def __init__(self, *, timeout: float = DEFAULT_TIMEOUT, max_redirects: int = 5,
                 user_agent: str = USER_AGENT, ssl_context: ssl.SSLContext | None = None,
                 retries: int | None = None, backoff: float = DEFAULT_BACKOFF,
                 deadline: float | None = None) -> None:
        self.timeout = timeout
        self.deadline = deadline
        self.retries = _retries_setting() if retries is None else retries
        self.backoff = backoff
        self._netrc: dict[str, str | None] = {}
        self.max_redirects = max_redirects
        self.user_agent = user_agent
        self._ssl_context = ssl_context
        self._local = threading.local()
        self._lock = threading.Lock()
        self._opened: list[http.client.HTTPConnection] = []
        self._credentials: dict[str, str] = {}
        self.latency = Latency()

    def authorize(self, url: str) -> str:
        """Remember credentials written in ``url`` (``user:token@host``) for its host.

        Returns ``url`` without them: callers keep that clean URL in links, caches, messages and
        receipts, while every request to that host (and only that host) carries Basic auth.
        """
        clean, header = split_credentials(url)
        if header is not None:
            with self._lock:
                self._credentials[urlsplit(clean).netloc.lower()] = header
        return clean

    def _authorization(self, url: str) -> dict[str, str]:
        clean, header = split_credentials(url)
        header = header or self._credentials.get(urlsplit(clean).netloc.lower()) or self._from_netrc(clean)
        return {"Authorization": header} if header else {}

    def _from_netrc(self, url: str) -> str | None:
        """Basic auth for ``url``'s host from ``$NETRC`` or ``~/.netrc`` (as pip and uv read it),
        looked up once per host."""
        host = urlsplit(url).hostname or ""
        if host not in self._netrc:
            self._netrc[host] = netrc_header(host)
        return self._netrc[host]

    def get(self, url: str, *, headers: Mapping[str, str] | None = None,
            ok: Collection[int] = (200,), sink: Sink | None = None,
            limit: int | None = None) -> Response:
        """GET ``url`` following up to ``max_redirects`` redirects.

        With ``sink``, a 200 body is streamed into it (gzip decoded) and ``body`` is empty, so a
        large file never sits in memory. A status outside ``ok`` raises ``IndexFailure(url, "HTTP
        <status> <reason>")`` naming the final URL. With ``limit``, a 200 answer whose
        Content-Length is larger (or absent) is not read at all: :class:`BodyTooLarge` (for a
        ``Range`` request that the server answered with the whole file).
        """
        if url.startswith("file:"):
            return get_file(url, ok=ok, sink=sink, limit=limit)
        sent = {"User-Agent": self.user_agent, "Accept-Encoding": "gzip", **(headers or {})}
        current = url
        started = time.monotonic()
        ends = started + (self.deadline if self.deadline is not None else request_deadline())
        for _ in range(self.max_redirects + 1):
            response = self._exchange(current, {**sent, **self._authorization(current)}, ends)
            status, reason = response.status, response.reason
            found = {k.lower(): v for k, v in response.getheaders()}
            if status in _REDIRECTS and "location" in found:
                self._read(response, current, None, None, ends)
                current = urljoin(current, found["location"])
                continue
            if status == 200 and limit is not None:
                self._refuse_large(response, current, found, limit)
            target = sink if status == 200 else None
            body = self._read(response, current, target, found.get("content-encoding"),
                              ends if target is None or self.deadline is not None else None)
            _log.debug("GET %s -> %s (%s bytes, %.0f ms)", redact_url(current), status,
                       found.get("content-length", len(body)), (time.monotonic() - started) * 1000)
            if status not in ok:
                reason = reason or phrase(status)
                raise IndexFailure(redact_url(current), f"HTTP {status} {reason}".rstrip())
            return Response(status, found, body, current)
        raise IndexFailure(redact_url(url), f"too many redirects (more than {self.max_redirects})")

    def close(self) -> None:
        """Close every connection this client opened (in any thread)."""
        with self._lock:
            opened, self._opened = self._opened, []
        for connection in opened:
            connection.close()

    # -- internals --------------------------------------------------------------------------------

    def _operation_ends(self) -> float:
        """When this client's operation must be done reading pages: the first body read plus
        :func:`operation_deadline` (a client serves one operation's sources)."""
        with self._lock:
            ends: float = self.__dict__.setdefault("_ends", time.monotonic() + operation_deadline())
        return ends

    def _refuse_large(self, response: http.client.HTTPResponse, url: str, headers: Mapping[str, str],
                      limit: int) -> None:
        """Raise :class:`BodyTooLarge` unless the 200 body is known to fit in ``limit`` bytes;
        the unread body makes the connection unusable, so it is closed (the next request opens
        a fresh one)."""
        length = headers.get("content-length", "")
        size = int(length) if length.isdigit() else None
        if size is not None and size <= limit:
            return
        response.close()
        parts = urlsplit(url)
        connections = self._local.__dict__.get("connections", {})
        connection = connections.get((parts.scheme, parts.hostname, parts.port))
        if connection is not None:
            connection.close()
        raise BodyTooLarge(redact_url(url), size, limit)

    def _connection(self, scheme: str, host: str, port: int | None,
                    url: str) -> http.client.HTTPConnection:
        import http.client
        import ssl

        connections: dict[tuple[str, str, int | None], http.client.HTTPConnection]
        connections = self._local.__dict__.setdefault("connections", {})
        key = (scheme, host, port)
        if (connection := connections.get(key)) is None:
            proxy = proxy_for(scheme, host)
            if proxy is not None and scheme in ("http", "https"):
                connection = self._through_proxy(proxy, scheme, host, port, key)
            elif scheme == "https":
                if self._ssl_context is None:
                    self._ssl_context = ssl.create_default_context()
                connection = http.client.HTTPSConnection(
                    host, port, timeout=self.timeout, context=self._ssl_context)
            elif scheme == "http":
                connection = http.client.HTTPConnection(host, port, timeout=self.timeout)
            else:
                raise IndexFailure(redact_url(url),
                                   f"unsupported URL scheme {scheme!r} (http or https only)")
            connection._create_connection = _connect  # type: ignore[attr-defined]
            connections[key] = connection
            with self._lock:
                self._opened.append(connection)
        return connection

    def _through_proxy(self, proxy: str, scheme: str, host: str, port: int | None,
                       key: tuple[str, str, int | None]) -> http.client.HTTPConnection:
        """A connection to ``proxy`` for ``host``: an HTTPS target through a CONNECT tunnel (TLS
        still verifies ``host``), an HTTP one by sending the absolute URL to the proxy."""
        import http.client
        import ssl

        clean, auth = split_credentials(proxy if "://" in proxy else f"http://{proxy}")
        parts = urlsplit(clean)
        proxy_host = parts.hostname or ""
        proxy_port = parts.port or (443 if parts.scheme == "https" else 80)
        extra = {"Proxy-Authorization": auth} if auth else {}
        if scheme == "https":
            if self._ssl_context is None:
                self._ssl_context = ssl.create_default_context()
            tunnel = http.client.HTTPSConnection(proxy_host, proxy_port, timeout=self.timeout,
                                                 context=self._ssl_context)
            tunnel.set_tunnel(host, port or 443, headers=extra)
            return tunnel
        self._local.__dict__.setdefault("forwarded", {})[key] = extra
        return http.client.HTTPConnection(proxy_host, proxy_port, timeout=self.timeout)

    def _exchange(self, url: str, headers: Mapping[str, str], ends: float) -> http.client.HTTPResponse:
        """Send the request and read the status line: once more at once on a dropped keep-alive,
        and up to ``retries`` more times after a pause (``backoff``, doubled each time, or the
        server's Retry-After up to 10 s) when the failure is transient (:func:`is_transient`: a
        refused or reset connection, a timeout, a name lookup that may work next time) or the
        answer is 429 or a 5xx — while a pause still ends before ``ends``. The last answer or
        failure is the result."""
        for attempt in range(self.retries + 1):
            try:
                response = self._exchange_once(url, headers, ends)
            except _Transient:
                if attempt == self.retries or not self._pause(attempt, None, ends):
                    raise
                continue
            if response.status not in _RETRY_STATUSES or attempt == self.retries:
                return response
            retry_after = response.getheader("retry-after")
            if not self._pause(attempt, retry_after, ends, dry=True):
                return response
            response.close()  # its body is not read: the connection cannot be reused
            self._drop_connection(url)
            self._pause(attempt, retry_after, ends)
        raise AssertionError("unreachable")

    def _pause(self, attempt: int, retry_after: str | None, ends: float, *, dry: bool = False) -> bool:
        """Wait before the next attempt (:func:`pause`); False, and no wait, when there is no time
        for one before ``ends``."""
        delay = pause(attempt, self.backoff, retry_after, ends)
        if delay is not None and not dry:
            time.sleep(delay)
        return delay is not None

    def _late(self, url: str) -> IndexFailure:
        """The failure of a request still unanswered at its deadline."""
        if self.deadline is not None:
            return IndexFailure(redact_url(url), f"no complete answer within {self.deadline:g}s; given up")
        return IndexFailure(redact_url(url), f"still sending after {request_deadline():g}s; given up "
                                             "(raise HERMES_PM_REQUEST_DEADLINE)")

    def _open_connection(self, url: str) -> http.client.HTTPConnection | None:
        """This thread's connection to ``url``'s host, if it has one."""
        parts = urlsplit(url)
        found: http.client.HTTPConnection | None = self._local.__dict__.get("connections", {}).get(
            (parts.scheme, parts.hostname, parts.port))
        return found

    def _drop_connection(self, url: str) -> None:
        connection = self._open_connection(url)
        if connection is not None:
            connection.close()

    def _exchange_once(self, url: str, headers: Mapping[str, str], ends: float) -> http.client.HTTPResponse:
        """Send the request and read the status line, retrying once on a dropped keep-alive."""
        import http.client

        parts = urlsplit(url)
        if not parts.hostname:
            raise IndexFailure(redact_url(url), "URL has no host")
        host = parts.hostname
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        connection = self._connection(parts.scheme, host, parts.port, url)
        forwarded = self._local.__dict__.get("forwarded", {}).get((parts.scheme, host, parts.port))
        if forwarded is not None:  # through an HTTP proxy: the absolute URL, and its credentials
            target, headers = split_credentials(url)[0], {**headers, **forwarded}
        for attempt in (1, 2):
            reused = connection.sock is not None
            wait = self._bounded_wait(connection, ends, url)
            try:
                asked = time.monotonic()  # a fresh connection's connect counts too: Latency keeps each host's shortest
                with watched(connection, ends):
                    connection.request("GET", target, headers=dict(headers))
                    response = connection.getresponse()
                self.latency.observe(time.monotonic() - asked, host)
                return response
            except _dropped() as exc:
                connection.close()
                if time.monotonic() >= ends:
                    raise self._late(url) from None
                if reused and attempt == 1:
                    continue
                raise _failure(exc)(redact_url(url), describe(exc, wait, host)) from None
            except (OSError, http.client.HTTPException) as exc:
                connection.close()
                if time.monotonic() >= ends:
                    raise self._late(url) from None
                raise _failure(exc)(redact_url(url), describe(exc, wait, host)) from None
        raise AssertionError("unreachable")

    def _bounded_wait(self, connection: http.client.HTTPConnection, ends: float, url: str) -> float:
        """The socket timeout for this request: ``timeout``, or less when the deadline is nearer
        (a connect and every read then end by it); past the deadline, its failure."""
        left = ends - time.monotonic()
        if left <= 0:
            raise self._late(url)
        wait = min(self.timeout, left)
        connection.timeout = wait
        if connection.sock is not None:
            connection.sock.settimeout(wait)
        return wait

    def _read(self, response: http.client.HTTPResponse, url: str, sink: Sink | None,
              encoding: str | None, ends: float | None) -> bytes:
        """The whole body (decoded), or streamed into ``sink``; the connection stays reusable.

        A body kept in memory (a page, a metadata file) is bounded (:func:`body_bounds`): over
        the size, once decoded, or past the deadline it is an :class:`IndexFailure` and the
        connection is closed. With ``ends`` (time.monotonic()), the body is done by then too."""
        import contextlib

        with watched(self._open_connection(url), ends) if ends is not None else contextlib.nullcontext():
            try:
                return self._read_body(response, url, sink, encoding, ends)
            except IndexFailure:
                if ends is not None and time.monotonic() >= ends:
                    raise self._late(url) from None
                raise

    def _read_body(self, response: http.client.HTTPResponse, url: str, sink: Sink | None,
                   encoding: str | None, ends: float | None) -> bytes:
        import http.client

        decoder = zlib.decompressobj(wbits=31) if (encoding or "").lower() == "gzip" else None
        chunks: list[bytes] = []
        write: Callable[[bytes], object] = sink.write if sink is not None else chunks.append
        bound = None if sink is not None else _Bound(url, *body_bounds(), self._operation_ends(), ends)
        try:
            # read1: what has arrived, so a sink that keeps its own deadline sees a slow drip too
            while chunk := response.read1(CHUNK):
                data = bound.inflate(decoder, chunk) if bound and decoder else (
                    decoder.decompress(chunk) if decoder else chunk)
                if bound:
                    bound.count(data, response)
                write(data)
            response.read()  # read1 leaves a fully read response open; this releases the connection
            if decoder:
                write(decoder.flush())
        except (OSError, http.client.HTTPException, zlib.error) as exc:
            response.close()
            parts = urlsplit(url)
            raise IndexFailure(redact_url(url), "while reading the body: "
                               + describe(exc, self.timeout, parts.hostname or "")) from None
        _whole(response, decoder, url)
        return b"".join(chunks)


def _whole(response: http.client.HTTPResponse, decoder: zlib._Decompress | None, url: str) -> None:
    """Raise :class:`IndexFailure` when a body stopped before its end without an error: bytes
    its Content-Length announced never came, or its gzip stream did not end. The connection
    closed under the reader does that (:meth:`HttpClient.close` while a look-ahead still reads a
    page): read1 then answers ``b""`` as at the end, and the cut body went into the cache."""
    if (response.length or 0) > 0 or (decoder is not None and not decoder.eof):
        response.close()
        raise IndexFailure(redact_url(url), "the body ended early (the connection was closed before its "
                                            "last byte); not used")
