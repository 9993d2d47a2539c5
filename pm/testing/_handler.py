"""The HTTP side of :class:`~pm.testing.index.LocalIndex`: its threading server and the request
handler that routes ``/simple/…``, ``/links/`` and ``/files/…`` (ranges, metadata files, the
misbehaviour knobs), counting what it sends."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from packaging.utils import (
    canonicalize_name,
)

from pm.testing._pages import TEXT_HTML, Transfer, negotiate
from pm.testing.ranges import answer_range

if TYPE_CHECKING:
    from pm.testing.index import LocalIndex


class _Server(ThreadingHTTPServer):
    #: Resolvers open many connections at once; the default backlog of 5 overflows and every
    #: dropped SYN costs a one-second retransmit, for pip, uv and pm alike.
    request_queue_size = 256

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client hanging up mid-answer is normal for resolvers; anything else is printed."""
        import sys

        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    disable_nagle_algorithm = True  # small responses would otherwise wait ~40 ms for an ACK
    """Routes ``/simple/…`` and ``/files/…`` for one bound ``index``; never logs to stderr."""

    index: LocalIndex
    protocol_version = "HTTP/1.1"
    _status = 0  # the status of the answer being written

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Silence the default per-request stderr line."""

    def setup(self) -> None:
        super().setup()
        self.wfile = _CountingWriter(self.wfile)  # type: ignore[assignment]

    def flush_headers(self) -> None:
        """Headers go out uncounted: ``transfers`` count bodies only."""
        if buffered := getattr(self, "_headers_buffer", None):
            self.wfile.raw.write(b"".join(buffered))  # type: ignore[attr-defined]
            self._headers_buffer: list[bytes] = []

    def send_response(self, code: int, message: str | None = None) -> None:
        self._status = int(code)
        super().send_response(code, message)

    def do_GET(self) -> None:
        self._answer(send_body=True)

    def do_HEAD(self) -> None:
        self._answer(send_body=False)

    def _answer(self, *, send_body: bool) -> None:
        written, self._status = self.wfile.written, 0  # type: ignore[attr-defined]
        self.index._answering_one()
        try:
            self._route(send_body=send_body)
        finally:
            sent = self.wfile.written - written  # type: ignore[attr-defined]
            self.index._sent(Transfer(self.command, self.path, self._status, sent,
                                      self.headers.get("Range")))

    def _route(self, *, send_body: bool) -> None:
        self.index._note(self.command, self.path)
        if self.index.basic_auth is not None and not self._authorized(self.index.basic_auth):
            self._send(HTTPStatus.UNAUTHORIZED, b"unauthorized\n", send_body)
            return
        if self.index.delay:
            time.sleep(self.index.delay)
        path = self.path.split("?", 1)[0]
        if path in ("/simple", "/simple/"):
            self._page(self.index.render_index, send_body)
        elif path.startswith("/simple/"):
            self._project(path.removeprefix("/simple/"), send_body)
        elif path.startswith("/files/"):
            self._file(path.removeprefix("/files/"), send_body)
        elif path.startswith("/pypi/") and self.index.json_api:
            self._release_json(path.removeprefix("/pypi/"), send_body)
        elif path == "/links/":
            self._send(HTTPStatus.OK, self.index.render_find_links(), send_body, content_type=TEXT_HTML)
        else:
            self._send(HTTPStatus.NOT_FOUND, b"not found\n", send_body)

    def _authorized(self, pair: str) -> bool:
        import base64

        return self.headers.get("Authorization") == "Basic " + base64.b64encode(pair.encode()).decode()

    def _project(self, rest: str, send_body: bool) -> None:
        name = canonicalize_name(rest.rstrip("/"))
        if rest != f"{name}/":
            self._send(HTTPStatus.MOVED_PERMANENTLY, b"", send_body,
                       {"Location": f"/simple/{name}/"})
        elif (status := self.index.fail_projects.get(name)) is not None:
            self._send(status, f"failing on purpose: {status}\n".encode(), send_body)
        elif files := self.index.projects().get(name):
            self._page(lambda fmt: self.index.render_project(name, files, fmt), send_body)
        else:
            self._send(HTTPStatus.NOT_FOUND, b"no such project\n", send_body)

    def _release_json(self, rest: str, send_body: bool) -> None:
        """PyPI's JSON API for one release (``/pypi/<name>/<version>/json``): its files and the
        ``vulnerabilities`` the test set (:attr:`LocalIndex.vulnerabilities`); 404 for a release
        not served."""
        parts = rest.strip("/").split("/")
        body = self.index.render_release(parts[0], parts[1]) if len(parts) == 3 and parts[2] == "json" else None
        if body is None:
            self._send(HTTPStatus.NOT_FOUND, b"no such release\n", send_body)
        else:
            self._page(lambda fmt: body, send_body, content_type="application/json")

    def _file(self, filename: str, send_body: bool) -> None:
        files = self.index.served_files()
        if filename.endswith(".metadata") and self.index.metadata_files:
            served = files.get(filename.removesuffix(".metadata"))
            data = self.index.metadata_of(served) if served else None
        else:
            data = served.record.path.read_bytes() if (served := files.get(filename)) else None
        asked = self.headers.get("Range")
        if data is None:
            self._send(HTTPStatus.NOT_FOUND, b"no such file\n", send_body)
            return
        status: int
        headers: dict[str, str]
        if not self.index.ranges or filename.endswith(".metadata"):
            status, body, headers = HTTPStatus.OK, data, {}
        else:
            if asked is not None and filename in self.index.stale_ranges:
                data = self.index.stale_ranges[filename].read_bytes()
            status, body, headers = answer_range(data, asked)
        if cache := self.index.file_cache_control:
            headers = {**headers, "Cache-Control": cache}
        self._send(status, body, False, headers, content_type="application/octet-stream")
        if send_body:  # _answer logs the transfer with the bytes the socket took
            self._write_counted(body)

    def _write_counted(self, body: bytes) -> int:
        """Write ``body`` in pieces; the bytes the socket took before the client hung up (a client
        that drops a whole-file answer unread leaves this short of the file's size)."""
        sent = 0
        try:
            for start in range(0, len(body), 1 << 16):
                self.wfile.write(body[start:start + (1 << 16)])
                sent += len(body[start:start + (1 << 16)])
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        return sent

    def _page(self, render: Callable[[str], bytes], send_body: bool, content_type: str | None = None) -> None:
        """Negotiate, render, and answer 200 or 304 (ETag / If-None-Match)."""
        fmt, negotiated = negotiate(self.headers.get("Accept"), allow_json=self.index.json)
        content_type = content_type or negotiated
        body = render(fmt)
        headers = {"Vary": "Accept"}
        if self.index.cache_control is not None:
            headers["Cache-Control"] = self.index.cache_control
        wanted: set[str] = set()
        if self.index.validators:
            digest = hashlib.sha256(content_type.encode() + b"\0" + body).hexdigest()[:32]
            headers["ETag"] = etag = f'"{digest}"'
            wanted = {tag.strip().removeprefix("W/") for tag in
                      self.headers.get("If-None-Match", "").split(",")}
            wanted = {tag for tag in wanted if tag in (etag, "*")}
        if wanted:
            self.send_response(HTTPStatus.NOT_MODIFIED)
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
        else:
            self._send(HTTPStatus.OK, body, send_body, headers, content_type=content_type)

    def _send(
        self,
        status: int,
        body: bytes,
        send_body: bool,
        headers: Mapping[str, str] | None = None,
        *,
        content_type: str = "text/plain",
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if send_body:
            self.wfile.write(body)


class _CountingWriter:
    """The handler's socket writer, counting the bytes written through it (bodies: the
    handler's :meth:`_Handler.flush_headers` writes headers to ``raw`` directly)."""

    def __init__(self, raw: Any) -> None:
        self.raw, self.written = raw, 0

    def write(self, data: bytes) -> int:
        """Write in 64 KiB pieces, counting each one sent, so an answer the client stops
        reading halfway (a streaming metadata reader) counts what went out before it hung up."""
        view = memoryview(data)
        for start in range(0, len(view), 65536):
            piece = view[start : start + 65536]
            self.raw.write(piece)  # all of it, or an exception
            self.written += len(piece)
        return len(view)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)
