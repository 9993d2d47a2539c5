"""Where a request goes and with what credentials: one cached address lookup per host, the proxy
the environment names, netrc and URL credentials as a Basic Authorization header."""

from __future__ import annotations

import base64
import os
import threading
import zlib
from http import HTTPStatus
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from pm.base.urls import redact_url
from pm.index.base import IndexFailure

if TYPE_CHECKING:
    import socket  # (socket, ssl and http.client load with the first request: most commands send none)

#: No timeout given: the socket keeps the default (as socket's own _GLOBAL_DEFAULT_TIMEOUT means).
_DEFAULT_TIMEOUT: Any = object()
_ADDRESSES: dict[tuple[str, int], list[Any]] = {}
_ADDRESSES_LOCK = threading.Lock()


def _addresses(host: str, port: int, timeout: float | None = None) -> list[Any]:
    """``getaddrinfo`` once per (host, port) per process, one lookup at a time; with ``timeout``,
    a lookup still unanswered after that many seconds is a :class:`TimeoutError` (the resolver's
    own wait, 5 s a try, knows nothing of the request's deadline; the lookup goes on in its thread
    and is kept when it answers).

    Many fetch threads opening their first connection at once each asked the resolver, and with
    some resolvers a burst of parallel lookups loses answers: every such connect then waited the
    resolver's 5 s timeout. Seen against the public file host; one cached lookup removes it."""
    found = _ADDRESSES.get((host, port))
    if found is not None:
        return found
    if timeout is None:
        return _lookup(host, port)
    answer: list[Any] = []

    def lookup() -> None:
        try:
            answer.append(_lookup(host, port))
        except OSError as exc:
            answer.append(exc)

    worker = threading.Thread(target=lookup, name="hermes-pm-lookup", daemon=True)
    worker.start()
    worker.join(timeout)
    if not answer:
        raise TimeoutError(f"name lookup of {host!r} unanswered after {timeout:g}s")
    if isinstance(answer[0], OSError):
        raise answer[0]
    return list(answer[0])


def _lookup(host: str, port: int) -> list[Any]:
    import socket

    with _ADDRESSES_LOCK:
        found = _ADDRESSES.get((host, port))
        if found is None:
            found = _ADDRESSES[(host, port)] = socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM)
        return found


def _connect(address: tuple[str, int], timeout: Any = _DEFAULT_TIMEOUT,
             source_address: Any = None) -> socket.socket:
    """``socket.create_connection`` over the cached addresses (TLS still verifies the host name)."""
    import socket

    if timeout is getattr(socket, "_GLOBAL_DEFAULT_TIMEOUT", _DEFAULT_TIMEOUT):  # http.client's "none given"
        timeout = _DEFAULT_TIMEOUT
    host, port = address
    error: OSError | None = None
    for family, kind, proto, _, target in _addresses(host, port, None if timeout is _DEFAULT_TIMEOUT else timeout):
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


def phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def is_transient(exc: BaseException) -> bool:
    """Whether a request that failed with ``exc`` is worth asking again after a pause (as uv and
    pip do): the connection was refused, reset or aborted (a server or proxy restarting, shedding
    load), it timed out, or the name lookup failed for now (``EAI_AGAIN``, "Temporary failure in
    name resolution": the resolver did not answer). A name that does not exist, a TLS failure or
    a malformed answer is not."""
    import socket

    if isinstance(exc, socket.gaierror):
        return exc.errno == socket.EAI_AGAIN
    return isinstance(exc, ConnectionRefusedError | ConnectionResetError | ConnectionAbortedError | TimeoutError)


def describe(exc: BaseException, timeout: float, host: str) -> str:
    """A short, stable sentence for a network exception."""
    import http.client
    import socket
    import ssl

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
