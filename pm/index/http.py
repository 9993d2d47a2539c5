"""A small thread-safe HTTP(S) client on :mod:`http.client`, and in-flight de-duplication.

:class:`HttpClient` keeps one keep-alive connection per thread per host, reconnects once when a
reused connection turns out dropped, follows redirects, and turns every failure into an
:class:`IndexFailure` naming the URL with a short detail ("connection refused", "timed out after
30s", "HTTP 503 Service Unavailable"). :class:`InFlight` runs each keyed fetch once, however many
threads ask for it, on the caller's thread or on a pool.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import logging
import math
import os
import socket
import ssl
import threading
import time
import zlib
from collections.abc import Callable, Collection, Hashable, Mapping
from concurrent.futures import Executor, Future
from http import HTTPStatus
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, Protocol, TypeVar
from urllib.parse import unquote, urljoin, urlsplit

from pm.lock import env_seconds

from .._urls import redact_url
from .base import IndexFailure
from .concurrency import Latency

if TYPE_CHECKING:
    from ._pool import DaemonPool

_log = logging.getLogger("pm.http")

USER_AGENT = "hermes-pm (+https://github.com/hermes-agent/hermes-pm)"
DEFAULT_TIMEOUT = 30.0
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
#: Errors that mean "the server closed a kept-alive connection": retry once on a fresh one.
_DROPPED = (http.client.RemoteDisconnected, http.client.BadStatusLine, ConnectionResetError,
            BrokenPipeError, ConnectionAbortedError)
_CHUNK = 1 << 16
#: Answers worth asking again after a pause (as pip and uv do): rate limited, or a server error.
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
#: Connect errors worth asking again: the server or a proxy is restarting, or shed the connection.
_TRANSIENT = (ConnectionRefusedError, ConnectionResetError, ConnectionAbortedError)
DEFAULT_RETRIES = 3
DEFAULT_BACKOFF = 0.25  # seconds before the first retry; doubled for each next one
_MAX_PAUSE = 10.0  # a Retry-After longer than this is cut to it

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Sink(Protocol):
    """Where a streamed body goes (a binary file, or a hashing wrapper around one)."""

    def write(self, data: bytes, /) -> object: ...


class HashingSink:
    """Writes through to ``file`` (or nowhere) while keeping the sha256 and the size of what went
    by: a download hashed as it streams, or only hashed."""

    def __init__(self, file: Sink | None = None) -> None:
        self.file = file
        self.hash = hashlib.sha256()
        self.size = 0

    def write(self, data: bytes) -> int:
        self.hash.update(data)
        self.size += len(data)
        if self.file is not None:
            self.file.write(data)
        return len(data)


class BodyTooLarge(IndexFailure):
    """A 200 answer larger than the caller's ``limit`` (``size`` None: length not given); unread."""

    def __init__(self, url: str, size: int | None, limit: int) -> None:
        self.size = size
        self.limit = limit
        shown = f"{size} bytes" if size is not None else "of unknown length"
        super().__init__(url, f"the whole file ({shown}) came instead of a byte range; "
                              f"not read (limit {limit} bytes)")


class Response(NamedTuple):
    """One final answer: ``headers`` keys are lower case; ``url`` is after redirects."""

    status: int
    headers: Mapping[str, str]
    body: bytes
    url: str


def make_pool(workers: int) -> DaemonPool:
    """The pool a source fetches on in the background (daemon threads: see :mod:`._pool`)."""
    from ._pool import DaemonPool

    return DaemonPool(workers, "hermes-pm-fetch")


class HttpClient:
    """GET over HTTP/1.1 with keep-alive; safe to share between threads.

    Contract: :meth:`get` either returns a response whose status is in ``ok`` or raises
    :class:`IndexFailure`; it never raises anything else for network trouble. Each call costs one
    round trip per redirect hop on a connection owned by the calling thread (no locks held while
    waiting on the network). :attr:`latency` keeps the shortest time to first byte of its answers
    (what the fetch threads are sized by: :mod:`.concurrency`).
    """

    def __init__(self, *, timeout: float = DEFAULT_TIMEOUT, max_redirects: int = 5,
                 user_agent: str = USER_AGENT, ssl_context: ssl.SSLContext | None = None,
                 retries: int | None = None, backoff: float = DEFAULT_BACKOFF) -> None:
        self.timeout = timeout
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
        for _ in range(self.max_redirects + 1):
            response = self._exchange(current, {**sent, **self._authorization(current)})
            status, reason = response.status, response.reason
            found = {k.lower(): v for k, v in response.getheaders()}
            if status in _REDIRECTS and "location" in found:
                self._read(response, current, None, None)
                current = urljoin(current, found["location"])
                continue
            if status == 200 and limit is not None:
                self._refuse_large(response, current, found, limit)
            target = sink if status == 200 else None
            body = self._read(response, current, target, found.get("content-encoding"))
            _log.debug("GET %s -> %s (%s bytes, %.0f ms)", redact_url(current), status,
                       found.get("content-length", len(body)), (time.monotonic() - started) * 1000)
            if status not in ok:
                reason = reason or _phrase(status)
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

    def _exchange(self, url: str, headers: Mapping[str, str]) -> http.client.HTTPResponse:
        """Send the request and read the status line: once more at once on a dropped keep-alive,
        and up to ``retries`` more times after a pause (``backoff``, doubled each time, or the
        server's Retry-After up to 10 s) when the connection is refused or reset, or the answer is
        429 or a 5xx. The last answer or failure is the result."""
        for attempt in range(self.retries + 1):
            try:
                response = self._exchange_once(url, headers)
            except _Transient:
                if attempt == self.retries:
                    raise
                self._pause(attempt, None)
                continue
            if response.status not in _RETRY_STATUSES or attempt == self.retries:
                return response
            retry_after = response.getheader("retry-after")
            response.close()  # its body is not read: the connection cannot be reused
            self._drop_connection(url)
            self._pause(attempt, retry_after)
        raise AssertionError("unreachable")

    def _pause(self, attempt: int, retry_after: str | None) -> None:
        delay = self.backoff * (2 ** attempt)
        if retry_after is not None and retry_after.strip().isdigit():
            delay = float(retry_after.strip())
        time.sleep(min(delay, _MAX_PAUSE))

    def _drop_connection(self, url: str) -> None:
        parts = urlsplit(url)
        connection = self._local.__dict__.get("connections", {}).get((parts.scheme, parts.hostname, parts.port))
        if connection is not None:
            connection.close()

    def _exchange_once(self, url: str, headers: Mapping[str, str]) -> http.client.HTTPResponse:
        """Send the request and read the status line, retrying once on a dropped keep-alive."""
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
            try:
                asked = time.monotonic()  # a fresh connection's connect counts too: Latency keeps the shortest
                connection.request("GET", target, headers=dict(headers))
                response = connection.getresponse()
                self.latency.observe(time.monotonic() - asked)
                return response
            except _DROPPED as exc:
                connection.close()
                if reused and attempt == 1:
                    continue
                raise _failure(exc)(redact_url(url), _describe(exc, self.timeout, host)) from None
            except (OSError, http.client.HTTPException) as exc:
                connection.close()
                raise _failure(exc)(redact_url(url), _describe(exc, self.timeout, host)) from None
        raise AssertionError("unreachable")

    def _read(self, response: http.client.HTTPResponse, url: str, sink: Sink | None,
              encoding: str | None) -> bytes:
        """The whole body (decoded), or streamed into ``sink``; the connection stays reusable.

        A body kept in memory (a page, a metadata file) is bounded (:func:`body_bounds`): over
        the size, once decoded, or past the deadline it is an :class:`IndexFailure` and the
        connection is closed."""
        decoder = zlib.decompressobj(wbits=31) if (encoding or "").lower() == "gzip" else None
        chunks: list[bytes] = []
        write: Callable[[bytes], object] = sink.write if sink is not None else chunks.append
        bound = None if sink is not None else _Bound(url, *body_bounds(), self._operation_ends())
        try:
            # read1: what has arrived, so a sink that keeps its own deadline sees a slow drip too
            while chunk := response.read1(_CHUNK):
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
                               + _describe(exc, self.timeout, parts.hostname or "")) from None
        return b"".join(chunks)


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
            env_seconds("HERMES_PM_REQUEST_DEADLINE", REQUEST_DEADLINE))


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

    def __init__(self, url: str, limit: int, deadline: float, operation_ends: float) -> None:
        self.url, self.limit, self.deadline = url, limit, deadline
        self.ends = min(time.monotonic() + deadline, operation_ends)
        self.operation = operation_ends < time.monotonic() + deadline
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


_DEFAULT_TIMEOUT: Any = getattr(socket, "_GLOBAL_DEFAULT_TIMEOUT", None)
_ADDRESSES: dict[tuple[str, int], list[Any]] = {}
_ADDRESSES_LOCK = threading.Lock()


def _addresses(host: str, port: int) -> list[Any]:
    """``getaddrinfo`` once per (host, port) per process, one lookup at a time.

    Many fetch threads opening their first connection at once each asked the resolver, and with
    some resolvers a burst of parallel lookups loses answers: every such connect then waited the
    resolver's 5 s timeout. Seen against the public file host; one cached lookup removes it."""
    with _ADDRESSES_LOCK:
        found = _ADDRESSES.get((host, port))
        if found is None:
            found = _ADDRESSES[(host, port)] = socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM)
        return found


def _connect(address: tuple[str, int], timeout: Any = _DEFAULT_TIMEOUT,
             source_address: Any = None) -> socket.socket:
    """``socket.create_connection`` over the cached addresses (TLS still verifies the host name)."""
    host, port = address
    error: OSError | None = None
    for family, kind, proto, _, target in _addresses(host, port):
        sock = socket.socket(family, kind, proto)
        try:
            if timeout is not _DEFAULT_TIMEOUT:
                sock.settimeout(timeout)
            if source_address:
                sock.bind(source_address)
            sock.connect(target)
            return sock
        except OSError as exc:
            error = exc
            sock.close()
    raise error or OSError(f"cannot connect to {host}:{port}")


def get_file(url: str, *, ok: Collection[int] = (200,), sink: Sink | None = None,
             limit: int | None = None) -> Response:
    """A ``file://`` URL answered as a static web server would (pip and uv read such indexes):
    a folder means its ``index.html``; a missing file is a 404; a ``Range`` is ignored (200 with
    the whole file, so a caller that wanted a range with ``limit`` gets :class:`BodyTooLarge` and
    reads the whole file, which is local anyway)."""
    path = Path(unquote(urlsplit(url).path))
    if path.is_dir():
        path = path / "index.html"
    if not path.is_file():
        if 404 in ok:
            return Response(404, {}, b"", url)
        raise IndexFailure(url, "HTTP 404 Not Found (no such file)")
    size = path.stat().st_size
    if limit is not None and size > limit:
        raise BodyTooLarge(url, size, limit)
    if 200 not in ok:
        raise IndexFailure(url, "HTTP 200 OK (a file:// URL has no partial answers)")
    kind = "text/html" if path.suffix in (".html", ".htm") else "application/octet-stream"
    headers = {"content-length": str(size), "content-type": kind}
    try:
        with path.open("rb") as stream:
            if sink is None:
                return Response(200, headers, stream.read(), url)
            while chunk := stream.read(_CHUNK):
                sink.write(chunk)
    except OSError as exc:
        raise IndexFailure(url, f"cannot read {path}: {exc.strerror or exc}") from None
    return Response(200, headers, b"", url)


class _Transient(IndexFailure):
    """A connect failure worth retrying (:data:`_TRANSIENT`); an :class:`IndexFailure` like any."""


def _failure(exc: BaseException) -> type[IndexFailure]:
    return _Transient if isinstance(exc, _TRANSIENT) else IndexFailure


def _retries_setting() -> int:
    """``$HERMES_PM_HTTP_RETRIES`` (else ``$UV_HTTP_RETRIES``, as uv reads it), default 3."""
    for variable in ("HERMES_PM_HTTP_RETRIES", "UV_HTTP_RETRIES"):
        value = os.environ.get(variable, "").strip()
        if value.isdigit():
            return int(value)
    return DEFAULT_RETRIES


def proxy_for(scheme: str, host: str) -> str | None:
    """The proxy URL the environment names for ``scheme`` (``HTTPS_PROXY``, ``HTTP_PROXY``, or
    ``ALL_PROXY``, lower case first, as curl, pip and uv read them), or None when there is none
    or ``NO_PROXY`` covers ``host``. A SOCKS proxy (``socks5://``, ``socks5h://``, ``socks4://``)
    is an :class:`IndexFailure` naming its variable: pm's client speaks HTTP to proxies only, and
    going direct instead would ignore what the environment asked."""
    import urllib.request  # here, not at the top: it loads tempfile, email and more

    proxies = urllib.request.getproxies_environment()
    proxy = proxies.get(scheme) or proxies.get("all")
    if not proxy or urllib.request.proxy_bypass_environment(host, proxies):  # type: ignore[attr-defined]
        return None
    if proxy.lower().startswith("socks"):
        raise IndexFailure(f"{scheme}://{host}", f"{_proxy_variable(scheme, proxy)}={redact_url(proxy)} is a SOCKS proxy, "
                           "which pm's HTTP client cannot use: name an HTTP proxy in "
                           f"{scheme.upper()}_PROXY, or add {host} to NO_PROXY")
    return proxy


def _proxy_variable(scheme: str, proxy: str) -> str:
    """Which variable named ``proxy`` for ``scheme``, in the order :func:`proxy_for` reads them."""
    names = (f"{scheme}_proxy", f"{scheme.upper()}_PROXY", "all_proxy", "ALL_PROXY")
    return next((name for name in names if os.environ.get(name) == proxy), f"{scheme.upper()}_PROXY")


def netrc_header(host: str) -> str | None:
    """A Basic Authorization value for ``host`` from ``$NETRC`` or ``~/.netrc``, or None (no file,
    no entry, or a file that does not parse: netrc is a convenience, never a failure)."""
    path = os.environ.get("NETRC") or os.path.join(os.path.expanduser("~"), ".netrc")
    if not host or not os.path.isfile(path):
        return None
    import netrc
    try:
        found = netrc.netrc(path).authenticators(host)
    except (netrc.NetrcParseError, OSError):
        return None
    if found is None:
        return None
    login, _, password = found
    return "Basic " + base64.b64encode(f"{login}:{password or ''}".encode()).decode("ascii")


def split_credentials(url: str) -> tuple[str, str | None]:
    """``(url without user:password@, Basic Authorization header value or None)``."""
    parts = urlsplit(url)
    if parts.username is None:
        return url, None
    pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
    clean = parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]).geturl()
    return clean, "Basic " + base64.b64encode(pair.encode()).decode("ascii")


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def _describe(exc: BaseException, timeout: float, host: str) -> str:
    """A short, stable sentence for a network exception."""
    if isinstance(exc, (TimeoutError, socket.timeout)):
        return f"timed out after {timeout:g}s"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, socket.gaierror):
        return f"cannot resolve host {host!r} ({exc.strerror or exc})"
    if isinstance(exc, ssl.SSLCertVerificationError):
        return (f"TLS certificate verification failed ({exc.verify_message or exc}); pm trusts the CAs of "
                "SSL_CERT_FILE and SSL_CERT_DIR, else the system's")
    if isinstance(exc, ssl.SSLError):
        return f"TLS error ({exc.reason or exc})"
    if isinstance(exc, (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError,
                        ConnectionAbortedError, http.client.IncompleteRead)):
        return "connection closed by the server"
    if isinstance(exc, zlib.error):
        return f"invalid gzip body ({exc})"
    if isinstance(exc, http.client.HTTPException):
        return f"invalid HTTP response ({type(exc).__name__})"
    if isinstance(exc, OSError):
        return f"network error ({exc.strerror or exc})"
    return str(exc)


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
