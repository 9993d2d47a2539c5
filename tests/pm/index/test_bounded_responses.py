"""Issue 15 findings 12–14: index responses are bounded in size (also once decompressed) and in
time, and a 200 answer that is no project page is an index failure (exit 1), never a conflict."""

from __future__ import annotations

import gzip
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pm.index.base import IndexFailure
from pm.index.http import HttpClient
from pm.testing.cli import latest, pm


def drip(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n")
    for _ in range(200):
        conn.sendall(b"x")
        time.sleep(0.1)


def test_a_server_dripping_bytes_is_given_up_at_the_deadline(serve: Any, monkeypatch: Any) -> None:
    """Finding 12: one byte every few seconds held resolve and sync forever."""
    monkeypatch.setenv("HERMES_PM_REQUEST_DEADLINE", "1")
    server = serve(drip)
    started = time.monotonic()
    with pytest.raises(IndexFailure, match=r"still sending after 1s; given up \(raise HERMES_PM_REQUEST_DEADLINE\)"):
        HttpClient().get(server.url + "/simple/a/")
    assert time.monotonic() - started < 5


def test_a_page_over_the_size_bound_is_not_read_whole(serve: Any, monkeypatch: Any) -> None:
    """Finding 13: a 1 GB page cost 2.7–3.7 GB of memory and went into the cache."""
    monkeypatch.setenv("HERMES_PM_MAX_RESPONSE_BYTES", str(1 << 20))

    def huge(conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n")
        for _ in range(64):
            conn.sendall(b"<a>" * 20_000)

    with pytest.raises(IndexFailure, match=r"larger than 1048576 bytes; not read"):
        HttpClient().get(serve(huge).url + "/simple/a/")


def test_a_gzip_bomb_is_refused_before_it_inflates(serve: Any, monkeypatch: Any) -> None:
    """Finding 13: 4 MB sent, 4 GB inflated, 8–12 GB of memory."""
    monkeypatch.setenv("HERMES_PM_MAX_RESPONSE_BYTES", str(1 << 20))
    bomb = gzip.compress(b"\0" * (64 << 20), compresslevel=9)

    def send(conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n"
                     + f"Content-Length: {len(bomb)}\r\n\r\n".encode() + bomb)

    with pytest.raises(IndexFailure, match=r"larger than 1048576 bytes once decompressed"):
        HttpClient().get(serve(send).url + "/simple/a/")


def test_bounded_reads_keep_the_connection_reusable(serve: Any) -> None:
    def two(conn: socket.socket) -> None:
        for _ in range(2):
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            conn.recv(4096)

    client = HttpClient()
    server = serve(two)
    assert [client.get(server.url + "/x").body for _ in range(2)] == [b"ok", b"ok"]


def page(body: bytes, content_type: str = "text/html") -> Callable[[socket.socket], None]:
    def send(conn: socket.socket) -> None:
        conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
                     "Connection: close\r\n\r\n".encode() + body)
    return send


PORTAL = b"<html><body><h1>Welcome to Airport Wi-Fi</h1><p>Please sign in.</p></body></html>"
JSON_AS_HTML = b'{"meta": {"api-version": "1.0"}, "name": "alpha", "files": []}'


@pytest.mark.parametrize(("body", "detail"), [
    (PORTAL, "answered a page that links to no distribution file"),
    (b'<a href="/login">sign in</a>', "answered a page that links to no distribution file"),
    (JSON_AS_HTML, "answered JSON labelled text/html"),
])
def test_a_page_that_is_no_project_page_is_an_index_failure_not_a_conflict(
        serve: Any, capsys: Any, tmp_path: Path, monkeypatch: Any, body: bytes, detail: str) -> None:
    """Finding 14: exit 3 'conflict' with a suggestion to disable the plugin."""
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "no-bundled"))
    home = tmp_path / "home"
    (home / "plugins/p").mkdir(parents=True)
    (home / "plugins/p/pyproject.toml").write_text("[project]\nname = 'p'\ndependencies = ['alpha']\n")
    (home / "config.yaml").write_text("plugins:\n  enabled: [p]\n")
    (tmp_path / "core.toml").write_text("[project]\nname = 'host'\ndependencies = []\n")
    (tmp_path / "lock.txt").write_text("")
    server = serve(page(body))
    result = pm(capsys, home, "resolve", "--index-url", server.url + "/simple/", "--core", str(tmp_path / "core.toml"),
                "--core-lock", str(tmp_path / "lock.txt"))
    assert result.code == 1, result.err
    receipt = latest(home)
    assert (receipt["outcome"], receipt["conflict"]) == ("failed", None)
    assert detail in result.err


def test_a_deeply_nested_json_page_is_an_index_failure() -> None:
    """Finding 1: a 200k-deep index page was a RecursionError traceback."""
    from pm.index._pages import page_digest

    with pytest.raises(IndexFailure, match=r"invalid PEP 691 JSON page \(it nests too deeply\)"):
        page_digest(b'{"files": ' + b"[" * 200_000, "application/vnd.pypi.simple.v1+json", "http://i/simple/a/", None)


def test_one_operation_reading_pages_is_bounded_as_a_whole(serve: Any, monkeypatch: Any) -> None:
    """Many requests each within the request deadline cannot add up to forever."""
    monkeypatch.setenv("HERMES_PM_OPERATION_DEADLINE", "1")

    def slow(conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\n")
        for byte in b"abcdef":
            conn.sendall(bytes([byte]))
            time.sleep(0.1)

    client = HttpClient()
    server = serve(slow)
    started = time.monotonic()
    with pytest.raises(IndexFailure, match=r"this operation has read the index for longer than 1s"):
        for _ in range(20):
            client.get(server.url + "/simple/a/")
    assert time.monotonic() - started < 5


def test_the_documented_default_bounds_hold_without_any_setting(monkeypatch) -> None:
    """docs/limits.md promises 64 MiB and 300 s; every other test sets its own bounds."""
    from pm.index.bounds import body_bounds, operation_deadline

    for name in ("HERMES_PM_MAX_RESPONSE_BYTES", "HERMES_PM_REQUEST_DEADLINE", "HERMES_PM_OPERATION_DEADLINE"):
        monkeypatch.delenv(name, raising=False)
    assert body_bounds() == (64 * 1024 * 1024, 300.0)
    assert operation_deadline() == 1800.0


def test_a_gzip_body_that_stops_before_its_stream_ends_is_a_failure_not_a_short_page(serve: Any) -> None:
    """A page cut short (a connection closed before the last byte) was taken for the whole
    page, cached, and read back as an invalid page for as long as it stayed fresh."""
    whole = gzip.compress(b'{"meta": {"api-version": "1.0"}, "files": []}' + b" " * 50_000)

    def cut(conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/vnd.pypi.simple.v1+json\r\n"
                     b"Content-Encoding: gzip\r\nConnection: close\r\n\r\n" + whole[: len(whole) // 2])

    with pytest.raises(IndexFailure, match=r"the body ended early \(the connection was closed before its last "
                                           r"byte\); not used"):
        HttpClient().get(serve(cut).url + "/simple/a/")


def test_a_client_closed_while_a_body_is_read_fails_that_read(serve: Any) -> None:
    """What closing a source does to a look-ahead still reading a page: a failure, never the
    bytes read so far as the page."""
    import threading

    client = HttpClient()
    outcome: list[object] = []

    def read() -> None:
        try:
            outcome.append(client.get(serve(drip).url + "/simple/a/"))
        except IndexFailure as exc:
            outcome.append(exc)

    reader = threading.Thread(target=read)
    reader.start()
    time.sleep(0.5)  # a few bytes in
    client.close()
    reader.join(10)
    assert len(outcome) == 1 and isinstance(outcome[0], IndexFailure), outcome
