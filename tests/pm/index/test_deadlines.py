"""Issue 34: every request has an overall deadline measured from its start (a server dripping its
status line, headers or body a byte at a time included), and transient failures — a refused or
reset connection, a timeout, a 429/5xx, a name lookup that failed for now (``EAI_AGAIN``) — are
asked again with backoff within it. Real servers on 127.0.0.1; the name lookup failure is a real
one, from a real resolver answering SERVFAIL, where this machine lets a test give a process its
own /etc/resolv.conf."""

from __future__ import annotations

import os
import random
import shutil
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pm.index import watchdog
from pm.index._attempts import pause
from pm.index.base import IndexFailure
from pm.index.http import HttpClient
from pm.index.network import is_transient
from tests.pm.index.conftest import RawServer, answer_ok

ROOT = Path(__file__).resolve().parents[3]


def drip_status(conn: socket.socket) -> None:
    """The status line and headers, one byte every 0.2 s (a socket timeout never fires)."""
    for byte in b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n" + b"X-Pad: " + b"p" * 200 + b"\r\n\r\nok":
        conn.sendall(bytes([byte]))
        time.sleep(0.2)


def test_a_status_line_dripped_a_byte_at_a_time_is_given_up_at_the_deadline(serve: Callable[..., RawServer]) -> None:
    """The body was bounded already; the status line and headers were not (each byte reset the
    socket timeout), so a drip there held a request for as long as the server liked."""
    url = serve(drip_status).url + "/catalog.json"
    started = time.monotonic()
    with pytest.raises(IndexFailure) as caught:
        HttpClient(timeout=5, deadline=1.5).get(url)
    assert str(caught.value) == f"{url}: no complete answer within 1.5s; given up"
    assert time.monotonic() - started < 2.5


def test_the_request_deadline_counts_from_the_start_of_the_request(serve: Callable[..., RawServer],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HERMES_PM_REQUEST_DEADLINE", "1")
    url = serve(drip_status).url + "/simple/a/"
    started = time.monotonic()
    with pytest.raises(IndexFailure, match=r"still sending after 1s; given up \(raise HERMES_PM_REQUEST_DEADLINE\)"):
        HttpClient().get(url)
    assert time.monotonic() - started < 2


def test_a_timeout_is_asked_again(serve: Callable[..., RawServer]) -> None:
    """The first connection gets no answer (the client's timeout passes); the next one is answered."""
    calls: list[int] = []

    def first_silent(conn: socket.socket) -> None:
        calls.append(1)
        if len(calls) == 1:
            time.sleep(1.5)
            return
        answer_ok(conn)

    server = serve(first_silent, path="/page")
    assert HttpClient(timeout=0.3, retries=3, backoff=0.01).get(server.url).body == b"ok"
    assert server.connections == 2


def test_a_server_error_is_asked_again_only_while_the_deadline_allows(serve: Callable[..., RawServer]) -> None:
    def unavailable(conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n")

    server = serve(unavailable, path="/page")
    started = time.monotonic()
    with pytest.raises(IndexFailure) as caught:
        HttpClient(retries=50, backoff=0.2, deadline=1.0).get(server.url)
    assert caught.value.detail == "HTTP 503 Service Unavailable"
    assert time.monotonic() - started < 1.2
    assert 2 <= server.connections <= 4  # 0.2 s, then 0.4 s: the next pause would end past the deadline


def test_a_pause_that_would_end_past_the_deadline_is_not_taken() -> None:
    now = time.monotonic()
    assert pause(0, 0.25, None, now + 10) == 0.25 and pause(2, 0.25, None, now + 10) == 1.0
    assert pause(0, 0.25, "3", now + 10) == 3.0 and pause(0, 0.25, "60", now + 100) == 10.0  # Retry-After, capped
    assert pause(1, 0.25, None, now + 0.5) is None


def test_a_request_done_before_its_deadline_keeps_its_connection(counting_server: Callable[[int], RawServer]) -> None:
    """The deadline thread cuts only requests still running: a kept-alive connection whose
    request finished is reused after that request's deadline has passed, uncut."""
    server = counting_server(5)
    client = HttpClient(deadline=0.3)
    assert client.get(server.url).body == b"ok"
    time.sleep(0.6)
    assert client.get(server.url).body == b"ok"
    assert server.connections == 1
    assert all(entry.done for entry in watchdog._HEAP)


def test_which_failures_are_transient(closed_port: int) -> None:
    """Classified on the real exception values: a refused connection and a timeout, and of the
    name lookup failures only the temporary one (``EAI_AGAIN``); a name that does not exist is
    not asked again."""
    with pytest.raises(ConnectionRefusedError) as refused:
        socket.create_connection(("127.0.0.1", closed_port), timeout=1)
    with pytest.raises(socket.gaierror) as unknown:
        socket.getaddrinfo("no-such-host.invalid", 80)
    listener = socket.create_server(("127.0.0.1", 0))
    with socket.create_connection(listener.getsockname(), timeout=0.05) as quiet, pytest.raises(TimeoutError) as late:
        quiet.recv(1)
    listener.close()
    temporary = socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
    assert is_transient(refused.value) and is_transient(late.value) and is_transient(temporary)
    assert unknown.value.errno != socket.EAI_AGAIN and not is_transient(unknown.value)
    assert not is_transient(ValueError("x"))


# -- a real temporary name lookup failure ------------------------------------------------------------

class FlakyDns:
    """A DNS server on a loopback address of its own (port 53) that answers SERVFAIL to its first
    ``failures`` queries — glibc's resolver then says EAI_AGAIN, "Temporary failure in name
    resolution" — and then 127.0.0.1 for every A query (no AAAA records)."""

    def __init__(self, failures: int) -> None:
        self.address = f"127.53.{random.randint(1, 250)}.{random.randint(1, 250)}"
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((self.address, 53))
        self.failures = failures  # -1: never answer at all
        self.answers: list[str] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                data, peer = self.sock.recvfrom(512)
            except OSError:
                return
            end = 12
            while data[end]:
                end += 1 + data[end]
            if self.failures < 0:
                self.answers.append("silence")
                continue
            qtype = struct.unpack("!H", data[end + 1:end + 3])[0]
            question = data[12:end + 5]
            flags = 0x8000 | (struct.unpack("!H", data[2:4])[0] & 0x0100) | 0x0080
            failing = self.answers.count("SERVFAIL") < self.failures
            self.answers.append("SERVFAIL" if failing else "ok")
            record = b"" if failing or qtype != 1 else (
                b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 0, 4) + socket.inet_aton("127.0.0.1"))
            head = struct.pack("!HHHHH", flags | (2 if failing else 0), 1, 1 if record else 0, 0, 0)
            self.sock.sendto(data[:2] + head + question + record, peer)

    def close(self) -> None:
        self.sock.close()


def _own_resolv_conf_works(tmp_path: Path) -> bool:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    probe = tmp_path / "probe.conf"
    probe.write_text("nameserver 127.0.0.1\n")
    done = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                           'mount --bind "$0" /etc/resolv.conf && cat /etc/resolv.conf', str(probe)],
                          capture_output=True, text=True, check=False)
    return done.returncode == 0 and done.stdout == "nameserver 127.0.0.1\n"


_FETCH = """
import sys, time
from pm.index.base import IndexFailure
from pm.index.http import HttpClient
started = time.monotonic()
try:
    print(HttpClient(retries=int(sys.argv[2]), backoff=0.3, deadline=float(sys.argv[3])).get(sys.argv[1]).body.decode())
except IndexFailure as exc:
    print(exc)
print(round(time.monotonic() - started, 1), file=sys.stderr)
"""


@pytest.fixture
def flaky_dns(tmp_path: Path) -> Iterator[Callable[..., tuple[str, float]]]:
    """``fetch(failures, url, retries, deadline=30)``: what pm's client gets for ``url`` in a
    process whose resolver is a :class:`FlakyDns` failing ``failures`` times, and how long it took."""
    if not _own_resolv_conf_works(tmp_path):
        pytest.skip("giving a process its own /etc/resolv.conf needs root and unshare(1)")
    started: list[FlakyDns] = []

    def fetch(failures: int, url: str, retries: int, deadline: float = 30) -> tuple[str, float]:
        server = FlakyDns(failures)
        started.append(server)
        conf = tmp_path / f"resolv-{len(started)}.conf"
        conf.write_text(f"nameserver {server.address}\noptions attempts:{2 if failures < 0 else 1} timeout:5\n")
        env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()} | {"PYTHONPATH": str(ROOT)}
        done = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                               'mount --bind "$0" /etc/resolv.conf && exec "$1" -c "$2" "$3" "$4" "$5"',
                               str(conf), sys.executable, _FETCH, url, str(retries), str(deadline)],
                              capture_output=True, text=True, check=False, env=env, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip(), float(done.stderr.strip().splitlines()[-1])

    yield fetch
    for server in started:
        server.close()


def test_a_temporary_name_lookup_failure_is_asked_again(flaky_dns: Callable[..., tuple[str, float]],
                                                       counting_server: Callable[[int], RawServer]) -> None:
    """A real EAI_AGAIN (the resolver answered SERVFAIL): it failed a whole resolve, where uv
    asked again; now the lookup is retried after a pause, and the second one answers."""
    port = int(counting_server(1).url.rsplit(":", 1)[1].split("/")[0])
    url = f"http://flaky-dns.test:{port}/page"
    assert flaky_dns(2, url, 0)[0] == (f"{url}: cannot resolve host 'flaky-dns.test' "
                                       "(Temporary failure in name resolution)")
    assert flaky_dns(2, url, 3)[0] == "ok"


def test_a_name_lookup_that_never_answers_ends_at_the_deadline(flaky_dns: Callable[..., tuple[str, float]]) -> None:
    """The resolver's own wait (5 s a try, two tries here) knows nothing of the request's deadline."""
    url = "http://silent-dns.test:80/page"
    said, took = flaky_dns(-1, url, 3, 2.0)
    assert said == f"{url}: no complete answer within 2s; given up"
    assert took < 3, took
