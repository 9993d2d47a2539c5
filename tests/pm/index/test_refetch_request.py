"""pm.cli._refetch asks for a page exactly as the index source does: the same request head (the
headers pm.cli._recorded_pages keeps, and the page's validators), byte for byte, to a real
socket server; a 304 or the same bytes is the same page, anything else is not."""

from __future__ import annotations

import hashlib
import socket
from collections.abc import Callable
from pathlib import Path

from pm.cli import _refetch
from pm.cli._recorded_pages import recorded, request_headers
from pm.index.cache import Cache
from pm.index.simple import SimpleIndexSource

from .conftest import RawServer

BODY = b"<html><body><a href='../../files/alpha-1.0-py3-none-any.whl'>alpha</a></body></html>"


def _answer(status: str, body: bytes) -> Callable[[socket.socket], None]:
    def answer(conn: socket.socket) -> None:
        conn.sendall(f"HTTP/1.1 {status}\r\nContent-Type: text/html\r\nETag: \"v1\"\r\n"
                     f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
    return answer


def _lines(head: str) -> list[str]:
    return sorted(head.split("\r\n"))


def test_the_shortcut_asks_for_a_page_as_the_index_source_does(serve: Callable[..., RawServer], tmp_path: Path) -> None:
    server = serve(_answer("200 OK", BODY), per_connection=1, path="/simple/")
    cache = Cache(tmp_path / "cache")
    source = SimpleIndexSource(server.url, cache)
    url, sha = source.project_url("alpha"), hashlib.sha256(BODY).hexdigest()
    assert source.unchanged(url, 200, sha)  # downloaded, stored with its ETag
    assert source.unchanged(url, 200, sha)  # asked again, conditionally
    found = recorded([(url, 200, sha)], cache.root, offline=False)
    assert found is not None

    assert _refetch.same(found.asked, request_headers())

    full, ours = server.heads[1], server.heads[2]
    assert 'If-None-Match: "v1"' in _lines(full)
    assert _lines(ours) == _lines(full)


def test_a_304_or_the_same_bytes_is_the_same_page_and_anything_else_is_not(
        serve: Callable[..., RawServer]) -> None:
    sha = hashlib.sha256(BODY).hexdigest()

    def same(answer: Callable[[socket.socket], None], etag: str = "") -> bool:
        url = serve(answer, per_connection=1, path="/simple/alpha/").url
        return _refetch.same([[url, sha, etag, ""]], request_headers())

    assert same(_answer("200 OK", BODY))
    assert same(_answer("304 Not Modified", b""), etag='"v1"')
    assert not same(_answer("304 Not Modified", b""))  # not asked conditionally: a 304 says nothing
    assert not same(_answer("200 OK", BODY + b" "))
    assert not same(_answer("404 Not Found", BODY))
    assert not same(_answer("301 Moved Permanently", BODY))
    assert not same(lambda conn: None)  # the connection dropped without an answer


def test_a_body_over_the_bound_is_not_the_same_page(serve: Callable[..., RawServer], monkeypatch) -> None:
    """The full command refuses a response over HERMES_PM_MAX_RESPONSE_BYTES naming the URL; the
    shortcut never reads past it, sent as it is or unzipped."""
    import gzip

    big = BODY + b" " * 200
    sha = hashlib.sha256(big).hexdigest()
    monkeypatch.setenv("HERMES_PM_MAX_RESPONSE_BYTES", str(len(big) - 1))

    def gzipped(conn: socket.socket) -> None:
        body = gzip.compress(big)
        conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: {len(body)}\r\n\r\n".encode()
                     + body)

    for answer in (_answer("200 OK", big), gzipped):
        url = serve(answer, per_connection=1, path="/simple/alpha/").url
        assert not _refetch.same([[url, sha, "", ""]], request_headers())
    monkeypatch.setenv("HERMES_PM_MAX_RESPONSE_BYTES", str(len(big)))
    for answer in (_answer("200 OK", big), gzipped):
        url = serve(answer, per_connection=1, path="/simple/alpha/").url
        assert _refetch.same([[url, sha, "", ""]], request_headers())


def test_a_page_dripped_a_byte_at_a_time_is_a_miss_not_a_wait(serve: Callable[..., RawServer], monkeypatch) -> None:
    import time

    monkeypatch.setattr(_refetch, "TIMEOUT", 1.0)

    def drip(conn: socket.socket) -> None:
        conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Length: {len(BODY)}\r\n\r\n".encode())
        for byte in BODY:
            try:
                conn.sendall(bytes([byte]))
            except OSError:
                return
            time.sleep(0.2)

    url = serve(drip, per_connection=1, path="/simple/alpha/").url
    started = time.monotonic()
    assert not _refetch.same([[url, hashlib.sha256(BODY).hexdigest(), "", ""]], request_headers())
    assert time.monotonic() - started < 3
