"""A bare mirror's pages, asked again for the shortcut (:mod:`pm.cli.shortcut`): a page that no
cache header lets pm keep (no max-age) is fetched again by every identical resolve, as uv fetches
it; when each comes back with the very bytes the answer was read from, the full command would
reuse that answer (:mod:`pm.records.reuse`), so the shortcut gives it without loading the rest of
pm (the index client alone imports ~40 ms).

Each page is asked as :class:`pm.index.http.HttpClient` asks for it (the User-Agent, Accept and
Accept-Encoding it sent, kept in the record), with the standard library's ``http.client``, on as
many threads as pm's fetch pool would use (:func:`workers`, the twin of
:func:`pm.index.concurrency.fetch_workers`). Only pages the record says need nothing more are
asked this way: no credentials, no proxy, no redirect (:func:`pm.cli.shortcut.remember` checks).
Anything else — another status, a redirect, other bytes, an error, a timeout — is a miss: the
full command asks again and decides.
"""

from __future__ import annotations

import hashlib  # OpenSSL's sha256: ~5× the builtin's speed on big pages, and http.client loaded libcrypto already
import http.client
import os
import threading
import time
import zlib

TYPE_CHECKING = False  # typing's costs ~5 ms: only the type checker reads these
if TYPE_CHECKING:
    import ssl
    from collections.abc import Mapping

#: Seconds one page may take: a slower index is left to the full command (its own timeouts, retries).
TIMEOUT = 10.0
#: :data:`pm.index.concurrency.CPU_PER_ANSWER` and :data:`pm.index.concurrency.MAX_WORKERS`.
CPU_PER_ANSWER, MAX_WORKERS = 0.005, 32
#: :data:`pm.index.bounds.MAX_RESPONSE_BYTES`: a body bigger than this (sent, or once unzipped)
#: is a miss; the full command refuses it, naming the URL.
MAX_RESPONSE_BYTES = 64 * 1024 * 1024


def limit() -> int:
    """:func:`pm.index.bounds.body_bounds`' byte bound: ``$HERMES_PM_MAX_RESPONSE_BYTES`` when a
    positive finite number, else :data:`MAX_RESPONSE_BYTES`."""
    try:
        value = float(os.environ.get("HERMES_PM_MAX_RESPONSE_BYTES", ""))
    except ValueError:
        return MAX_RESPONSE_BYTES
    return int(value) if value > 0 and value != float("inf") else MAX_RESPONSE_BYTES


def same(pages: list[list[str]], headers: Mapping[str, str]) -> bool:
    """Whether every page ``[url, body sha256, etag, last-modified]`` is the same now: asked as
    :meth:`pm.index.simple.SimpleIndexSource` asks (conditionally, when it has validators), it
    answers 304 Not Modified, or 200 with a body of that sha256."""
    if not pages:
        return True
    asker = _Asker(headers)
    try:
        started = time.monotonic()
        if not asker.same(*pages[0]):  # alone first: its time to answer sizes the threads, as pm's pool
            return False
        return asker.all_same(pages[1:], workers(time.monotonic() - started))
    finally:
        asker.close()


def workers(latency: float) -> int:
    """:func:`pm.index.concurrency.fetch_workers` for this process's cores, or
    ``$HERMES_PM_FETCH_WORKERS`` (:func:`pm.index.concurrency.workers_setting`)."""
    value = os.environ.get("HERMES_PM_FETCH_WORKERS", "").strip()
    if value.isdigit() and int(value) > 0:
        return int(value)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, max(1, cpus) + round(max(0.0, latency) / CPU_PER_ANSWER)))


def _body(response: http.client.HTTPResponse, bound: int, deadline: float) -> bytes:
    """At most ``bound + 1`` bytes of ``response``, read by the deadline: a server that drips its
    page a byte at a time is a miss, not a wait (each read alone is bounded by :data:`TIMEOUT`)."""
    chunks, size = [], 0
    while size <= bound:
        chunk = response.read1(min(1 << 16, bound + 1 - size))
        if not chunk:
            response.read()  # the body is all here: done with, its connection free for the next page
            break
        chunks.append(chunk)
        size += len(chunk)
        if time.monotonic() > deadline:
            raise TimeoutError("the page took longer than the shortcut waits")
    return b"".join(chunks)


class _Asker:
    """Plain GETs over one kept-alive connection per thread and host."""

    def __init__(self, headers: Mapping[str, str]) -> None:
        self.headers = dict(headers)
        self.local = threading.local()
        self.lock = threading.Lock()
        self.opened: list[http.client.HTTPConnection] = []
        self.context: ssl.SSLContext | None = None

    def all_same(self, pages: list[list[str]], count: int) -> bool:
        """Every page of ``pages`` the same, asked on ``count`` threads; stops at the first that is not."""
        queue, verdicts = list(reversed(pages)), []

        def work() -> None:
            while True:
                with self.lock:
                    if not queue or False in verdicts:
                        return
                    page = queue.pop()
                verdict = self.same(*page)
                with self.lock:
                    verdicts.append(verdict)

        threads = [threading.Thread(target=work, daemon=True) for _ in range(min(count, len(pages)) - 1)]
        for thread in threads:
            thread.start()
        work()
        for thread in threads:
            thread.join()
        return len(verdicts) == len(pages) and all(verdicts)

    def same(self, url: str, sha: str, etag: str, last_modified: str) -> bool:
        conditions = {"If-None-Match": etag} if etag else {}
        if last_modified:
            conditions["If-Modified-Since"] = last_modified
        try:
            status, body = self._get(url, conditions)
        except (OSError, http.client.HTTPException, ValueError, zlib.error):
            return False
        return status == 304 and bool(conditions) or status == 200 and hashlib.sha256(body).hexdigest() == sha

    def _get(self, url: str, conditions: dict[str, str]) -> tuple[int, bytes]:
        """The status and decoded body of a GET of ``url``."""
        scheme, _, rest = url.partition("://")
        host, slash, path = rest.partition("/")
        connection = self._connection(scheme, host)
        connection.request("GET", slash + path, headers={**self.headers, **conditions})
        response = connection.getresponse()
        bound = limit()
        data = _body(response, bound, time.monotonic() + TIMEOUT)
        if (response.getheader("content-encoding") or "").lower() == "gzip" and data:
            unzip = zlib.decompressobj(wbits=31)
            data = unzip.decompress(data, bound + 1)
            if unzip.unconsumed_tail:
                data += b"\0"  # more than the bound
        if len(data) > bound:
            raise ValueError(f"{url}: more than {bound} bytes")
        return response.status, data

    def _connection(self, scheme: str, host: str) -> http.client.HTTPConnection:
        kept = getattr(self.local, "connections", None)
        if kept is None:
            kept = self.local.connections = {}
        if (scheme, host) not in kept:
            if scheme == "https":
                import ssl

                with self.lock:
                    if self.context is None:
                        self.context = ssl.create_default_context()
                connection: http.client.HTTPConnection = http.client.HTTPSConnection(
                    host, timeout=TIMEOUT, context=self.context)
            elif scheme == "http":
                connection = http.client.HTTPConnection(host, timeout=TIMEOUT)
            else:
                raise ValueError(scheme)
            with self.lock:
                self.opened.append(connection)
            kept[(scheme, host)] = connection
        return kept[(scheme, host)]

    def close(self) -> None:
        for connection in self.opened:
            connection.close()
