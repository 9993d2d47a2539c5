"""The index client on networks like users have (issue 14, finding 2): proxies from the
environment (a real forwarding and CONNECT proxy on 127.0.0.1, written here), ``NO_PROXY``,
netrc credentials, and retries with backoff on refused connections, 429 and 5xx."""

from __future__ import annotations

import base64
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from packaging.utils import canonicalize_name

from pm.index.base import IndexFailure
from pm.index.http import HttpClient
from pm.index.network import proxy_for
from pm.index.simple import SimpleIndexSource
from pm.testing import index_from_spec

PROXY_VARIABLES = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
                   "no_proxy", "NO_PROXY")


class _Proxy(BaseHTTPRequestHandler):
    """GET of an absolute URL is forwarded; CONNECT opens a byte tunnel. Every request line and
    its Proxy-Authorization are recorded on the server."""

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.server.seen.append((self.requestline, self.headers.get("Proxy-Authorization")))  # type: ignore[attr-defined]
        import http.client
        from urllib.parse import urlsplit

        parts = urlsplit(self.path)
        upstream = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("proxy-authorization", "connection")}
        upstream.request("GET", parts.path + (f"?{parts.query}" if parts.query else ""), headers=headers)
        answer = upstream.getresponse()
        body = answer.read()
        self.send_response(answer.status)
        for key, value in answer.getheaders():
            if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_CONNECT(self) -> None:  # noqa: N802
        self.server.seen.append((self.requestline, self.headers.get("Proxy-Authorization")))  # type: ignore[attr-defined]
        host, _, port = self.path.rpartition(":")
        try:
            upstream = socket.create_connection((host, int(port)), timeout=5)
        except OSError:
            self.send_error(502)
            return
        self.send_response(200, "Connection established")
        self.end_headers()
        self.close_connection = True
        pipes = [threading.Thread(target=_pipe, args=(a, b), daemon=True)
                 for a, b in ((self.connection, upstream), (upstream, self.connection))]
        for pipe in pipes:
            pipe.start()
        for pipe in pipes:
            pipe.join(5)


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for sock in (source, sink):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


@pytest.fixture
def proxy() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Proxy)
    server.seen = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def index(tmp_path):
    with index_from_spec(tmp_path / "dists", {"alpha": {"1.0": [], "2.0": []}}) as served:
        yield served


@pytest.fixture(autouse=True)
def no_proxies(monkeypatch):
    for variable in PROXY_VARIABLES:
        monkeypatch.delenv(variable, raising=False)


def _versions(index_url: str) -> list[str]:
    with SimpleIndexSource(index_url, client=HttpClient(retries=0)) as source:
        return sorted(link.filename for link in source.links(canonicalize_name("alpha")))


def test_http_proxy_from_the_environment_forwards_every_request_with_its_credentials(index, proxy, monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", f"http://user:secret@127.0.0.1:{proxy.server_address[1]}")
    assert _versions(index.url) == ["alpha-1.0-py3-none-any.whl", "alpha-2.0-py3-none-any.whl"]
    expected = "Basic " + base64.b64encode(b"user:secret").decode()
    assert proxy.seen and all(line.startswith(f"GET {index.url}") for line, _ in proxy.seen)
    assert {auth for _, auth in proxy.seen} == {expected}
    assert index.requests  # the index itself answered, through the proxy


def test_no_proxy_goes_direct(index, proxy, monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.server_address[1]}")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    assert _versions(index.url) == ["alpha-1.0-py3-none-any.whl", "alpha-2.0-py3-none-any.whl"]
    assert proxy.seen == []
    assert proxy_for("http", "127.0.0.1") is None
    assert proxy_for("http", "pypi.example") == f"http://127.0.0.1:{proxy.server_address[1]}"


def test_https_goes_through_a_connect_tunnel_and_still_verifies_the_host(index, proxy, monkeypatch):
    monkeypatch.setenv("https_proxy", f"http://u:p@127.0.0.1:{proxy.server_address[1]}")
    port = int(index.url.split(":")[2].split("/")[0])
    client = HttpClient(retries=0, timeout=5)
    with pytest.raises(IndexFailure) as failed:  # the tunnel reaches a plain-HTTP server: TLS fails
        client.get(f"https://127.0.0.1:{port}/simple/alpha/")
    assert proxy.seen == [(f"CONNECT 127.0.0.1:{port} HTTP/1.0", "Basic " + base64.b64encode(b"u:p").decode())]
    assert "TLS" in failed.value.detail or "closed" in failed.value.detail


class _Flaky(BaseHTTPRequestHandler):
    """Answers the first ``server.failures`` GETs with ``server.status``, then 200 "ok"."""

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802
        server: Any = self.server
        server.authorizations.append(self.headers.get("Authorization"))
        if len(server.authorizations) <= server.failures:
            self.send_response(server.status)
            self.send_header("Retry-After", "0")
            body = b"try later"
        else:
            self.send_response(200)
            body = b"ok"
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def flaky() -> Iterator[Any]:
    server: Any = ThreadingHTTPServer(("127.0.0.1", 0), _Flaky)
    server.failures, server.status, server.authorizations = 0, 503, []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("status", [429, 500, 502, 503, 504])
def test_a_429_or_5xx_is_retried_with_backoff_until_it_answers(flaky, status):
    flaky.failures, flaky.status = 2, status
    url = f"http://127.0.0.1:{flaky.server_address[1]}/x"
    assert HttpClient(retries=3, backoff=0.01).get(url).body == b"ok"
    assert len(flaky.authorizations) == 3
    flaky.authorizations.clear()
    with pytest.raises(IndexFailure) as failed:
        HttpClient(retries=1, backoff=0.01).get(url)
    assert failed.value.detail.startswith(f"HTTP {status}")


def test_a_refused_connection_is_retried_then_fails_naming_it(monkeypatch):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    pauses: list[float] = []
    monkeypatch.setattr("pm.index.http.time.sleep", pauses.append)
    with pytest.raises(IndexFailure) as failed:
        HttpClient(retries=3, backoff=0.5).get(f"http://127.0.0.1:{port}/simple/")
    assert failed.value.detail == "connection refused"
    assert pauses == [0.5, 1.0, 2.0]


def test_retries_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("HERMES_PM_HTTP_RETRIES", "5")
    assert HttpClient().retries == 5
    monkeypatch.delenv("HERMES_PM_HTTP_RETRIES")
    monkeypatch.setenv("UV_HTTP_RETRIES", "2")
    assert HttpClient().retries == 2


def test_netrc_credentials_are_sent_to_their_host_only(flaky, tmp_path, monkeypatch):
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login alice password s3cret\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    client = HttpClient(retries=0)
    assert client.get(f"http://127.0.0.1:{flaky.server_address[1]}/x").body == b"ok"
    assert client.get(f"http://localhost:{flaky.server_address[1]}/x").body == b"ok"
    assert flaky.authorizations == ["Basic " + base64.b64encode(b"alice:s3cret").decode(), None]
