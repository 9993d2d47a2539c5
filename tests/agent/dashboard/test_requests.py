"""The dashboard's requests are bounded before anything else, over plain sockets to a real
``hermes dashboard`` process on 127.0.0.1: the Host and the token are checked before a body is
read, a bad ``Content-Length`` is answered (never a traceback or a silent close), a body is
capped, a slow or half-sent request is cut, and connections are capped; a provider's page never
imports the provider into the dashboard's process."""

from __future__ import annotations

import random
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from html import unescape
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from agent.dashboard.connections import MAX_BODY, MAX_CONNECTIONS, READ_TIMEOUT, REQUEST_DEADLINE
from pm.testing.homes import add_plugin

from .conftest import HERMES, Served

#: A provider without config_schema.py whose import leaves the importing process's pid in a file.
SPY = '''
import os
from pathlib import Path
from agent.memory_provider import MemoryProvider

with open(Path(__file__).with_name("imported-by"), "a") as marks:
    marks.write(f"{os.getpid()}\\n")


class Spy(MemoryProvider):
    name = "spy"
    def is_available(self): return True
    def initialize(self, session_id, **kwargs): pass
    def get_tool_schemas(self): return []
    def handle_tool_call(self, name, args, **kwargs): return "{}"
    def get_config_schema(self):
        return [{"key": "colour", "description": "Favourite colour", "default": "blue"},
                {"key": "api_key", "description": "Spy key", "secret": True, "env_var": "SPY_KEY"}]
    def save_config(self, values, hermes_home):
        (Path(hermes_home) / "spy.json").write_text(repr((values, os.getpid())))


def register(ctx):
    ctx.register_memory_provider(Spy())
'''


@dataclass(frozen=True)
class Dashboard(Served):
    log: Path = Path()  # its stderr

    def said(self) -> str:
        return self.log.read_text()


@pytest.fixture(scope="module")
def dashboard(example: tuple[Path, dict[str, str]], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    """A read-only ``hermes dashboard`` whose stderr goes to a file."""
    home, env = example
    add_plugin(home / "plugins", "spy", style="sidecar", manifest={"kind": "memory"}, init_code=SPY)
    log = tmp_path_factory.mktemp("dashboard-log") / "stderr"
    with log.open("w") as err:
        process = subprocess.Popen([HERMES, "dashboard", "--home", str(home)], env=env, text=True,
                                   stdout=subprocess.PIPE, stderr=err)
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    assert url.startswith("http://127.0.0.1:"), (url, log.read_text())
    yield Dashboard(home, env, url, process, log)
    process.terminate()
    process.wait(timeout=10)


def port(served: Served) -> int:
    return int(urlsplit(served.base).port or 0)


def connect(served: Served, timeout: float = 10.0) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port(served)), timeout=timeout)


def answer(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def request(served: Served, head: str, body: bytes = b"") -> tuple[int, str]:
    """One raw request (``head`` without the blank line); the status and the page."""
    with connect(served) as sock:
        sock.sendall(head.encode() + b"\r\n\r\n" + body)
        got = answer(sock)
    status_line, _, rest = got.partition(b"\r\n")
    return int(status_line.split()[1]), rest.partition(b"\r\n\r\n")[2].decode()


def post(served: Served, path: str, headers: str) -> tuple[int, str]:
    host = f"127.0.0.1:{port(served)}"
    return request(served, f"POST {path}?token={served.token} HTTP/1.1\r\nHost: {host}\r\n{headers}".rstrip())


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def real_page_seconds(served: Served) -> float:
    """Seconds a real GET of the plugins page takes, its answer checked."""
    started = time.monotonic()
    code, page = request(served, f"GET /plugins?token={served.token} HTTP/1.1\r\nHost: 127.0.0.1:{port(served)}")
    assert code == 200 and "calendar" in page
    return time.monotonic() - started


@pytest.mark.parametrize(("length", "status", "said"), [
    ("-1", 400, "Content-Length must be one decimal number"),
    ("abc", 400, "Content-Length must be one decimal number"),
    ("", 400, "Content-Length must be one decimal number"),
    ("1e3", 400, "Content-Length must be one decimal number"),
    (None, 411, "a POST needs a Content-Length"),
    (str(MAX_BODY + 1), 413, f"request body too large ({MAX_BODY + 1} bytes; at most {MAX_BODY})"),
])
def test_a_bad_content_length_is_answered(dashboard: Dashboard, length: str | None, status: int, said: str) -> None:
    headers = "" if length is None else f"Content-Length: {length}"
    code, page = post(dashboard, "/actions/rollback", headers)
    assert (code, said in unescape(page)) == (status, True), page
    assert "Traceback" not in dashboard.said()


def test_a_negative_length_with_a_flood_behind_it_is_not_read(dashboard: Dashboard) -> None:
    """Finding 1: ``Content-Length: -1`` used to be read until the client closed (300 MB sent: +305 MB)."""
    before = rss_mb(dashboard.process.pid)
    with connect(dashboard) as sock:
        sock.sendall(f"POST /actions/rollback?token={dashboard.token} HTTP/1.1\r\nHost: 127.0.0.1:{port(dashboard)}\r\n"
                     "Content-Length: -1\r\n\r\n".encode())
        sent, started = 0, time.monotonic()
        with pytest.raises(OSError):  # the server answers, reads a little more, and closes
            while sent < 300 * 1024 * 1024 and time.monotonic() - started < 30:
                sent += sock.send(b"x" * 1024 * 1024)
    assert sent < 50 * 1024 * 1024 and rss_mb(dashboard.process.pid) - before < 20


def test_the_token_is_checked_before_the_body(dashboard: Dashboard) -> None:
    """A POST without the token in its URL is refused on its headers: its body is never awaited."""
    host = f"127.0.0.1:{port(dashboard)}"
    started = time.monotonic()
    with connect(dashboard, timeout=5) as sock:
        sock.sendall(f"POST /actions/rollback HTTP/1.1\r\nHost: {host}\r\nContent-Length: 1000\r\n\r\n".encode())
        got = answer(sock)  # the 1000 bytes never come: answered, then closed after a short drain
    assert got.startswith(b"HTTP/1.0 403") and b"needs the token" in got
    assert time.monotonic() - started < READ_TIMEOUT
    code, page = request(dashboard, f"POST /actions/rollback HTTP/1.1\r\nHost: {host}\r\nContent-Length: 11",
                         f"token={dashboard.token}".encode()[:11])
    assert code == 403


def test_a_half_sent_request_is_cut_after_the_deadline(dashboard: Dashboard) -> None:
    """Finding 9: 200 half-sent requests were all still held after 60 s, a thread each."""
    socks = [connect(dashboard, timeout=REQUEST_DEADLINE + 10) for _ in range(200)]
    try:
        for sock in socks:
            sock.sendall(b"GET /plugins?tok")
        time.sleep(0.5)
        assert real_page_seconds(dashboard) < 2  # the oldest half-sent ones made room
        threads = int(next(line.split()[1] for line in Path(f"/proc/{dashboard.process.pid}/status").read_text()
                           .splitlines() if line.startswith("Threads:")))
        assert threads <= MAX_CONNECTIONS + 8
        started = time.monotonic()
        for sock in socks:
            got = answer(sock)  # ends when the server closes it
            assert got in (b"", ) or got.startswith(b"HTTP/1.0 408"), got[:80]
        assert time.monotonic() - started < REQUEST_DEADLINE + 3
    finally:
        for sock in socks:
            sock.close()


def test_a_provider_page_never_imports_the_provider_here(dashboard: Dashboard) -> None:
    """Finding 3: /providers/<name> for a provider without config_schema.py imported its
    __init__.py into the dashboard's process; its get_config_schema() is now asked in a child."""
    marks = dashboard.home / "plugins" / "spy" / "imported-by"
    marks.unlink(missing_ok=True)
    code, page = request(dashboard, f"GET /providers/spy?token={dashboard.token} HTTP/1.1\r\n"
                                    f"Host: 127.0.0.1:{port(dashboard)}")
    assert code == 200 and "Favourite colour" in unescape(page), page
    importers = marks.read_text().split()
    assert importers and str(dashboard.process.pid) not in importers
    code, page = request(dashboard, f"GET /providers/vault?token={dashboard.token} HTTP/1.1\r\n"
                                    f"Host: 127.0.0.1:{port(dashboard)}")
    assert code == 200 and "Items per recall" in unescape(page)


def _fuzz(at: int, token: str, seed: int, stop: threading.Event) -> None:
    """Hostile requests to port ``at``, one after another, until ``stop``."""
    rng = random.Random(seed)
    host = f"127.0.0.1:{at}"
    shapes = [
        lambda: f"POST /actions/enable?token={token} HTTP/1.1\r\nHost: {host}\r\n"
                f"Content-Length: {rng.choice(['-1', 'abc', '', '99999999999', ' 5', '0x10', '1,2'])}\r\n\r\n".encode()
                + b"y" * rng.randrange(0, 2_000_000),
        lambda: f"GET /plugins?token={token} HTTP/1.1\r\nHost: {rng.choice(['evil.example', '', host + 'x', '127.0.0.1'])}"
                f"\r\n\r\n".encode(),
        lambda: f"POST /actions/rollback?token={token} HTTP/1.1\r\nHost: {host}\r\nContent-Length: 65536\r\n\r\n"
                .encode() + b"z" * rng.randrange(0, 65536),  # a body that never ends
        lambda: b"GET /" + b"a" * rng.randrange(0, 100_000),  # a request line that never ends
        lambda: rng.randbytes(rng.randrange(1, 4000)),
    ]
    held: list[socket.socket] = []
    while not stop.is_set():
        try:
            sock = socket.create_connection(("127.0.0.1", at), timeout=2)
            sock.sendall(rng.choice(shapes)())
            held.append(sock)
        except OSError:
            pass
        stop.wait(0.005)  # ~170 connections a second from each client
        if len(held) > 60 or rng.random() < 0.3:
            held.pop(0).close()
    for sock in held:
        sock.close()


def _fuzzers(at: int, token: str, seconds: float) -> None:
    """Four hostile clients for ``seconds`` (run in a process of its own: the client measuring
    the real requests must not wait for the fuzzers' share of one interpreter)."""
    stop = threading.Event()
    threads = [threading.Thread(target=_fuzz, args=(at, token, seed, stop), daemon=True) for seed in range(4)]
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join(30)


def test_request_fuzz_holds_memory_and_answers_real_requests(dashboard: Dashboard) -> None:
    """Bad lengths, slow clients, large bodies and bad Host values from four clients at once, for
    ~20 s: the dashboard stays under 100 MB and answers a real request within a second throughout."""
    import multiprocessing

    seconds = 2 * REQUEST_DEADLINE
    fuzzing = multiprocessing.get_context("spawn").Process(target=_fuzzers, args=(port(dashboard), dashboard.token,
                                                                                 seconds))
    fuzzing.start()
    worst, peak = 0.0, 0.0
    times: list[float] = []
    try:
        time.sleep(1.0)  # the fuzzers' interpreter has started
        ends = time.monotonic() + seconds - 2
        while time.monotonic() < ends:
            times.append(real_page_seconds(dashboard))
            worst = max(worst, times[-1])
            peak = max(peak, rss_mb(dashboard.process.pid))
            time.sleep(0.2)
    finally:
        fuzzing.join(60)
    assert fuzzing.exitcode == 0
    assert peak < 100 and worst < 1.0, (peak, worst, sorted(times)[len(times) // 2])
    said = dashboard.said()
    assert "Traceback" not in said and len(said) < 10_000, said[-2000:]  # no line per hostile client either


def test_saving_a_providers_settings_runs_its_code_in_a_child(dashboard: Dashboard, served: Served) -> None:
    """With --allow-actions, the settings form is saved by the provider's own save_config, as
    `hermes memory setup` saves it, in a child process: the dashboard never imports it."""
    marks = served.home / "plugins" / "spy" / "imported-by"
    marks.unlink(missing_ok=True)
    host = f"127.0.0.1:{port(served)}"
    body = b"colour=green&api_key="  # an empty secret: keeps what .env holds (nothing)
    with connect(served) as sock:
        sock.sendall(f"POST /providers/spy?token={served.token} HTTP/1.1\r\nHost: {host}\r\n"
                     f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {len(body)}\r\n\r\n"
                     .encode() + body)
        got = answer(sock).decode()
    assert got.startswith("HTTP/1.0 200") and "settings saved: colour" in unescape(got), got[-2000:]
    values, pid = eval((served.home / "spy.json").read_text())  # noqa: S307 (the test's own repr)
    assert values == {"colour": "green"} and pid != served.process.pid
    assert str(served.process.pid) not in marks.read_text().split()
    assert "memory.provider: spy recorded" in unescape(got)
