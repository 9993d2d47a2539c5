"""The live catalog (issue 23): ``pm.catalog_url`` read at most every TTL through pm's HTTP
client, its copy kept in the cache, the stale copy used when the fetch fails (and said so), and
every kill list unioned — over a real HTTP server on 127.0.0.1 and over file://."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from pm.base.errors import UsageError
from pm.inputs.catalog import load_catalog
from pm.inputs.catalog_live import combined, live_catalog

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def _catalog(entries: list[str], removed: list[str]) -> bytes:
    return json.dumps({"entries": [{"name": n, "source": {"git": f"https://example.org/{n}.git", "commit": COMMIT}}
                                   for n in entries], "removed": removed}).encode()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    folder = tmp_path / "www"
    folder.mkdir()
    (folder / "catalog.json").write_bytes(_catalog(["alpha", "beta"], ["gamma"]))

    class Quiet(SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            super().__init__(*args, directory=str(folder), **kwargs)

        def log_message(self, *args):  # type: ignore[no-untyped-def]
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/catalog.json", folder
    server.shutdown()
    server.server_close()


def test_https_is_required(tmp_path) -> None:
    with pytest.raises(UsageError, match="must be an https:// URL"):
        live_catalog("http://example.org/catalog.json", tmp_path)
    with pytest.raises(UsageError, match="must be an https:// URL"):
        live_catalog("http://127.0.0.1.example.org/catalog.json", tmp_path)


def test_a_file_url_is_read_kept_and_refreshed_after_the_ttl(tmp_path, monkeypatch) -> None:
    source = tmp_path / "catalog.json"
    source.write_bytes(_catalog(["alpha"], ["gamma"]))
    url = source.as_uri()
    catalog, notes = live_catalog(url, tmp_path / "cache", now=1000.0)
    assert [e.name for e in catalog.entries] == ["alpha"] and catalog.removed == ("gamma",) and notes == []
    source.write_bytes(_catalog(["alpha", "beta"], []))
    catalog, _ = live_catalog(url, tmp_path / "cache", now=1000.0 + 3600)  # within the TTL: the kept copy
    assert [e.name for e in catalog.entries] == ["alpha"]
    catalog, _ = live_catalog(url, tmp_path / "cache", now=1000.0 + 7 * 3600)  # after it: read again
    assert [e.name for e in catalog.entries] == ["alpha", "beta"]


def test_a_failed_fetch_uses_the_stale_copy_then_nothing_and_says_so(tmp_path, monkeypatch) -> None:
    source = tmp_path / "catalog.json"
    source.write_bytes(_catalog(["alpha"], []))
    url = source.as_uri()
    live_catalog(url, tmp_path / "cache", now=0.0)
    source.unlink()
    catalog, notes = live_catalog(url, tmp_path / "cache", now=10 * 3600.0)
    assert [e.name for e in catalog.entries] == ["alpha"]
    assert notes[0].startswith(f"the live catalog {url} could not be read (") and notes[0].endswith(
        "using the copy fetched 10.0 h ago")
    catalog, notes = live_catalog(url, tmp_path / "other-cache", now=0.0)
    assert catalog is None and notes[0].endswith("no copy is kept; using the configured catalog alone")


def test_over_http_with_the_kill_lists_unioned(served, tmp_path) -> None:
    url, folder = served
    catalog, notes = live_catalog(url, tmp_path / "cache", now=0.0)
    assert notes == [] and [e.name for e in catalog.entries] == ["alpha", "beta"]
    base = tmp_path / "base.json"
    base.write_bytes(_catalog(["alpha"], ["delta"]))
    merged = combined(load_catalog(base), catalog, [])
    assert [e.name for e in merged.entries] == ["alpha", "beta"] and merged.removed == ("delta", "gamma")
    (folder / "catalog.json").unlink()  # the server answers 404 now: the kept copy, said so
    catalog, notes = live_catalog(url, tmp_path / "cache", now=7 * 3600.0)
    assert [e.name for e in catalog.entries] == ["alpha", "beta"] and "HTTP 404" in notes[0]


def test_a_body_over_the_cap_is_refused_and_the_stale_copy_kept(tmp_path, monkeypatch) -> None:
    from pm.inputs import catalog_live

    source = tmp_path / "catalog.json"
    source.write_bytes(_catalog(["alpha"], []))
    live_catalog(source.as_uri(), tmp_path / "cache", now=0.0)
    monkeypatch.setattr(catalog_live, "CAP", 10)
    catalog, notes = live_catalog(source.as_uri(), tmp_path / "cache", now=7 * 3600.0)
    assert [e.name for e in catalog.entries] == ["alpha"] and "could not be read" in notes[0]


def test_a_home_with_a_live_catalog_installs_nothing_it_removed_and_check_stays_offline(served, tmp_path,
                                                                                       monkeypatch) -> None:
    from pm.inputs.catalog import CatalogRefusal
    from pm.ops.install import catalog_for

    url, folder = served
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text(json.dumps({"pm": {"catalog_url": url}}))
    catalog = catalog_for(home)
    assert [e.name for e in catalog.entries] == ["alpha", "beta"] and "gamma" in catalog.removed
    with pytest.raises(CatalogRefusal, match="'gamma' was removed from the catalog"):
        catalog.find("gamma")
    (folder / "catalog.json").unlink()
    offline = catalog_for(home, fetch=False)  # the kept copy, no request (the server would say 404 now)
    assert [e.name for e in offline.entries] == ["alpha", "beta"] and offline.notes == ()


class _Server:
    """A bare HTTP server on 127.0.0.1 whose ``answer(conn, n)`` writes the n-th answer itself."""

    def __init__(self, answer) -> None:  # type: ignore[no-untyped-def]
        import socket

        self.answer, self.count = answer, 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/catalog.json"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.count += 1
            threading.Thread(target=self._one, args=(conn, self.count), daemon=True).start()

    def _one(self, conn, n: int) -> None:  # type: ignore[no-untyped-def]
        with conn:
            buffer = b""
            while b"\r\n\r\n" not in buffer and (chunk := conn.recv(4096)):
                buffer += chunk
            try:
                self.answer(conn, n)
            except OSError:
                pass


def _drip(conn, n: int) -> None:  # type: ignore[no-untyped-def]
    import time

    body = _catalog(["alpha"], [])
    for byte in b"HTTP/1.1 200 OK\r\n" + f"Content-Length: {len(body)}\r\n\r\n".encode() + body:
        conn.sendall(bytes([byte]))
        time.sleep(1.0)


def test_a_server_dripping_a_byte_a_second_is_given_up_within_the_five_seconds(tmp_path) -> None:
    """Issue 34 finding 6: one byte a second kept `plugins install` waiting 162 s, home lock held."""
    import time

    server = _Server(_drip)
    started = time.monotonic()
    catalog, notes = live_catalog(server.url, tmp_path / "cache", now=0.0)
    assert time.monotonic() - started < 5.5
    assert catalog is None
    assert notes == [f"the live catalog {server.url} could not be read ({server.url}: no complete answer within 5s; "
                     "given up) and no copy is kept; using the configured catalog alone"]


def test_a_transient_failure_of_the_live_catalog_is_asked_again_within_the_deadline(tmp_path, monkeypatch) -> None:
    """A 503, then a first connection that says nothing: each is asked again after a pause, and
    the catalog is read within the five seconds."""
    import time

    monkeypatch.setenv("HERMES_PM_HTTP_RETRIES", "3")
    body = _catalog(["alpha"], ["gamma"])

    def flaky(conn, n: int) -> None:  # type: ignore[no-untyped-def]
        if n == 1:
            conn.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n")
        elif n == 2:
            time.sleep(4)
        else:
            conn.sendall(b"HTTP/1.1 200 OK\r\n" + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)

    server = _Server(flaky)
    started = time.monotonic()
    catalog, notes = live_catalog(server.url, tmp_path / "cache", now=0.0)
    assert notes == [] and [e.name for e in catalog.entries] == ["alpha"] and catalog.removed == ("gamma",)
    assert server.count == 3 and time.monotonic() - started < 5
