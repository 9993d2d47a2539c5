"""Fixtures for the source tests: a small project set on a real local index, a private cache."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pm.index.cache import Cache
from pm.testing import LocalIndex

#: alpha: a wheel with dependencies, extras and an upload time; a yanked wheel + sdist release.
SPEC = {
    "alpha": {
        "1.0": {"requires": ["beta>=1", 'gamma; extra == "fast"'], "requires_python": ">=3.8",
                "extras": {"test": ["beta>=2"]}, "upload_time": "2024-01-02T03:04:05Z"},
        "2.0": {"yanked": "broken <build> & more", "sdist": True},
    },
    "beta": {"1.0": None, "2.0": ["gamma<2"]},
    "gamma": {"1.5": {"tags": ["py3-none-any", "cp311-cp311-manylinux_2_17_x86_64"]}},
}


@pytest.fixture
def index(make_index: Callable[..., LocalIndex]) -> LocalIndex:
    """A started index serving :data:`SPEC`."""
    return make_index(SPEC)


@pytest.fixture
def cache(tmp_path: Path) -> Cache:
    return Cache(tmp_path / "cache")


@pytest.fixture
def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def answer_ok(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")


class RawServer:
    """A bare HTTP/1.1 server on 127.0.0.1: on each connection it reads up to ``per_connection``
    request heads, calling ``answer(conn)`` after each, then closes without saying so.

    With ``per_connection=1`` a keep-alive client finds every reused connection dropped (unless
    ``answer`` reads on by itself). ``connections`` counts the connections accepted; ``heads``
    keeps every request's head, in order; ``url`` is the server's root plus ``path``.
    """

    def __init__(self, answer: Callable[[socket.socket], None], per_connection: int = 1, path: str = "") -> None:
        self.answer = answer
        self.per_connection = per_connection
        self.path = path
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.connections = 0
        self.heads: list[str] = []
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}{self.path}"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        with conn:
            buffer = b""
            for _ in range(self.per_connection):
                while b"\r\n\r\n" not in buffer:
                    if not (chunk := conn.recv(4096)):
                        return
                    buffer += chunk
                head, buffer = buffer.split(b"\r\n\r\n", 1)
                self.heads.append(head.decode("latin-1"))
                try:
                    self.answer(conn)
                except OSError:
                    return

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def serve() -> Iterator[Callable[..., RawServer]]:
    """``serve(answer, per_connection=1, path="")``: a started :class:`RawServer`."""
    started: list[RawServer] = []

    def start(answer: Callable[[socket.socket], None], per_connection: int = 1, path: str = "") -> RawServer:
        started.append(RawServer(answer, per_connection, path))
        return started[-1]

    yield start
    for server in started:
        server.close()


@pytest.fixture
def counting_server(serve: Callable[..., RawServer]) -> Callable[[int], RawServer]:
    """``counting_server(per_connection)``: a started server answering ``ok`` at ``/page``."""
    return lambda per_connection: serve(answer_ok, per_connection, "/page")
