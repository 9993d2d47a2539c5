"""A real simple repository (PEP 503 HTML, PEP 691 JSON, PEP 658/714 metadata) on 127.0.0.1.

``LocalIndex`` serves wheels and sdists from directories and :class:`IndexFile` records over a
``ThreadingHTTPServer`` bound to an ephemeral port, so resolvers and uv talk to it exactly as to
PyPI; ``/links/`` is a flat find-links page of every file. Knobs (attributes, changeable while
running) make it misbehave on purpose for tests, or answer with the headers of a real index
(:data:`PRESETS`: ``"pypi"``, ``"mirror"``) for benchmarks, which read what was sent from
:attr:`LocalIndex.transfers` and :meth:`LocalIndex.bytes_sent`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import html
import json
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from email.parser import BytesParser
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    NormalizedName,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import Version

from pm.testing.ranges import answer_range
from pm.testing.wheels import IndexFile, build_packages, metadata_bytes

JSON_TYPE = "application/vnd.pypi.simple.v1+json"
HTML_TYPE = "application/vnd.pypi.simple.v1+html"
_TEXT_HTML = "text/html; charset=utf-8"
_SERVED_TYPES = {  # Accept media type -> (format, Content-Type answered)
    JSON_TYPE: ("json", JSON_TYPE),
    "application/vnd.pypi.simple.latest+json": ("json", JSON_TYPE),
    HTML_TYPE: ("html", HTML_TYPE),
    "application/vnd.pypi.simple.latest+html": ("html", HTML_TYPE),
    "text/html": ("html", _TEXT_HTML),
    "*/*": ("html", _TEXT_HTML),
}
_SUFFIXES = (".whl", ".tar.gz", ".zip")

#: Header modes of real indexes, as ``LocalIndex`` knobs (``LocalIndex(files, **PRESETS[name])``).
#: ``pypi``: pages fresh for 10 minutes with an ETag, PEP 658 metadata files, immutable files.
#: ``mirror``: a bare static mirror (no Cache-Control, no validators, no metadata files; clients
#: must read metadata from the wheel itself, by range requests, which it honours).
PRESETS: dict[str, dict[str, Any]] = {
    "pypi": {
        "cache_control": "max-age=600, public",
        "validators": True,
        "metadata_files": True,
        "file_cache_control": "max-age=365000000, immutable, public",
        "ranges": True,
    },
    "mirror": {
        "cache_control": None,
        "validators": False,
        "metadata_files": False,
        "file_cache_control": None,
        "ranges": True,
    },
}


@dataclasses.dataclass(frozen=True)
class ServedFile:
    """One file as the index publishes it: its record plus facts read once from its bytes."""

    record: IndexFile
    project: NormalizedName
    version: str
    sha256: str
    size: int
    requires_python: str | None  # from the file's own core metadata
    metadata: bytes | None  # the PEP 658 ``.metadata`` file; wheels only

    @classmethod
    def read(cls, record: IndexFile) -> ServedFile | None:
        """Describe ``record``; ``None`` when its name is no wheel or sdist name."""
        try:
            if record.filename.endswith(".whl"):
                project, version, _, _ = parse_wheel_filename(record.filename)
            else:
                project, version = parse_sdist_filename(record.filename)
        except (InvalidWheelFilename, InvalidSdistFilename):
            return None
        data, metadata = record.path.read_bytes(), metadata_bytes(record.path)
        requires_python = BytesParser().parsebytes(metadata, headersonly=True)["Requires-Python"]
        wheel_metadata = metadata if record.filename.endswith(".whl") else None
        return cls(record, project, str(version), hashlib.sha256(data).hexdigest(), len(data),
                   requires_python, wheel_metadata)


@dataclasses.dataclass(frozen=True)
class Transfer:
    """One answered request: what was asked (``range`` is the Range header or None), the status
    and the body bytes the socket took (headers not counted). Tests read it by field name."""

    method: str
    path: str
    status: int
    body_bytes: int
    range: str | None = None

    @property
    def kind(self) -> str:
        """``pages`` (``/simple/…``), ``metadata`` (``….metadata``), ``files`` (any other
        ``/files/…``) or ``other``: see :func:`path_kind`."""
        return path_kind(self.path)


def path_kind(path: str) -> str:
    """``pages``, ``metadata``, ``files`` or ``other``: how :class:`Transfer` sorts a path."""
    path = path.split("?", 1)[0]
    if path.startswith("/simple"):
        return "pages"
    if path.startswith("/files/"):
        return "metadata" if path.endswith(".metadata") else "files"
    return "other"


def negotiate(accept: str | None, *, allow_json: bool = True) -> tuple[str, str]:
    """Pick ``(format, content_type)`` for an Accept header by q-value (PEP 691).

    Equal q-values keep the client's order; no acceptable type (or no header) means HTML.
    """
    choices: list[tuple[float, int, str]] = []
    for position, part in enumerate((accept or "").split(",")):
        media, *params = (piece.strip().lower() for piece in part.split(";"))
        quality = 1.0
        for key, _, value in (param.partition("=") for param in params):
            if key.strip() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        served = _SERVED_TYPES.get(media)
        if served and quality > 0 and (allow_json or served[0] != "json"):
            choices.append((-quality, position, media))
    return _SERVED_TYPES[min(choices)[2] if choices else "text/html"]


def _upload_time(text: str | None) -> str | None:
    if not text:
        return None
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _html_page(title: str, links: Iterable[str]) -> bytes:
    body = "\n".join(f"    {link}<br/>" for link in links)
    return (f'<!DOCTYPE html>\n<html>\n  <head>\n    <meta name="pypi:repository-version" '
            f'content="1.1">\n    <title>{title}</title>\n  </head>\n  <body>\n'
            f"    <h1>{title}</h1>\n{body}\n  </body>\n</html>\n").encode()


class LocalIndex:
    """A simple repository over HTTP on ``127.0.0.1`` serving real files.

    ``sources`` are directories (every ``.whl``/``.tar.gz``/``.zip`` inside, rescanned on every
    request), single files, or :class:`IndexFile` records (which carry yanked/upload-time; a
    record wins over a directory file of the same name). Knobs, readable and writable while
    running: ``json`` (serve PEP 691 when asked), ``metadata_files`` (PEP 658/714),
    ``fail_projects`` ({name: HTTP status}), ``corrupt_hashes`` (filenames whose advertised sha256
    is wrong), ``delay`` (seconds slept before every answer), ``ranges`` (answer ``Range``
    requests on files with 206; False: ignore the header and send the whole file, like a server
    without range support), ``stale_ranges`` ({filename: path}: range answers for that file come
    out of another file's bytes, like a mirror whose range cache is stale), ``cache_control``
    (the Cache-Control of pages; ``None`` sends none), ``validators`` (send an ETag on pages and
    answer a matching If-None-Match with 304; off, neither), ``file_cache_control`` (the
    Cache-Control of files and metadata files; ``None`` sends none). :data:`PRESETS` holds real
    indexes' values. ``rescan=False`` (for big benchmark trees) reads the files once, at the
    first request after each :meth:`add_files`, and renders each page once per format and
    ``metadata_files``: files must not change while served, and ``corrupt_hashes`` must be set
    before the first request. ``requests`` logs (method, path); ``transfers`` logs every answer
    (pages too) with its Range header, status and body bytes; :meth:`bytes_sent` sums them.
    """

    def __init__(
        self,
        sources: Iterable[Path | IndexFile] = (),
        *,
        json: bool = True,
        metadata_files: bool = True,
        fail_projects: Mapping[str, int] | None = None,
        corrupt_hashes: Iterable[str] = (),
        delay: float = 0.0,
        ranges: bool = True,
        cache_control: str | None = "max-age=0, must-revalidate",
        validators: bool = True,
        file_cache_control: str | None = None,
        rescan: bool = True,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.json = json
        #: a server-side TLS context: the index then answers ``https://`` only (tests of CA settings)
        self.tls = tls
        self.metadata_files = metadata_files
        self.fail_projects = {canonicalize_name(k): v for k, v in (fail_projects or {}).items()}
        self.corrupt_hashes = set(corrupt_hashes)
        self.delay = delay
        self.ranges = ranges
        self.stale_ranges: dict[str, Path] = {}
        #: {wheel filename: bytes}: served (and advertised with their own sha256) as that wheel's
        #: PEP 658 metadata file instead of its real METADATA, like an index whose metadata files
        #: disagree with its wheels
        self.lying_metadata: dict[str, bytes] = {}
        self.cache_control = cache_control
        self.validators = validators
        self.file_cache_control = file_cache_control
        self.rescan = rescan
        #: ``"user:password"``: every request without that Basic Authorization is answered 401
        self.basic_auth: str | None = None
        #: whether the find-links page (``/links/``) gives ``#sha256=`` fragments
        self.find_links_hashes = True
        self._lock = threading.Lock()
        self._directories: list[Path] = []
        self._records: dict[str, IndexFile] = {}
        self._cache: dict[tuple[Path, int, int], ServedFile | None] = {}
        self._log: list[tuple[str, str]] = []
        self._transfers: list[Transfer] = []
        self._answering = 0  # answers begun and not yet counted in _transfers
        self._answered = threading.Condition(self._lock)
        self._snapshot: dict[str, ServedFile] | None = None  # rescan=False: files read once
        self._pages: dict[tuple[str, str, bool], bytes] = {}  # rescan=False: rendered pages
        self._facts: dict[tuple[int, int, int, int], ServedFile] = {}  # by inode: hard links
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.add_files(sources)

    def start(self) -> LocalIndex:
        """Bind an ephemeral port and serve on a daemon thread; idempotent; returns ``self``."""
        if self._server is None:
            handler = type("_BoundHandler", (_Handler,), {"index": self})
            self._server = _Server(("127.0.0.1", 0), handler)
            if self.tls is not None:
                self._server.socket = self.tls.wrap_socket(self._server.socket, server_side=True)
            self._server.daemon_threads = True
            self._thread = threading.Thread(
                target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket; safe to call twice."""
        if self._server is not None and self._thread is not None:
            self._server.shutdown()
            self._server.server_close()
            self._thread.join()
            self._server = self._thread = None

    def __enter__(self) -> LocalIndex:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def root(self) -> str:
        """``http://127.0.0.1:PORT`` (no trailing slash); raises ``RuntimeError`` unless started."""
        if self._server is None:
            raise RuntimeError("LocalIndex is not started")
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self._server.server_address[1]}"

    @property
    def url(self) -> str:
        """The index URL to hand to clients: ``http://127.0.0.1:PORT/simple/``."""
        return f"{self.root}/simple/"

    def project_url(self, name: str) -> str:
        return f"{self.url}{canonicalize_name(name)}/"

    @property
    def find_links_url(self) -> str:
        """A flat find-links page of every served file (pip's and uv's ``--find-links URL``):
        ``http://127.0.0.1:PORT/links/``, relative hrefs, ``#sha256=`` unless
        ``find_links_hashes`` is False."""
        return f"{self.root}/links/"

    def render_find_links(self) -> bytes:
        """The find-links page: one anchor per file, of every project, hrefs relative to the page."""
        anchors = []
        for filename, served in self.served_files().items():
            fragment = f"#sha256={self._sha256(served)}" if self.find_links_hashes else ""
            anchors.append(f'<a href="../files/{html.escape(filename)}{fragment}">{html.escape(filename)}</a>')
        return _html_page("Links", anchors)

    def add_files(self, sources: Iterable[Path | IndexFile]) -> None:
        """Serve more directories, files or records; works while running."""
        with self._lock:
            self._snapshot = None
            self._pages.clear()
            for source in sources:
                if isinstance(source, IndexFile):
                    self._records[source.filename] = source
                elif source.is_dir():
                    self._directories.append(source)
                else:
                    self._records[source.name] = IndexFile(source.name, source)

    @property
    def requests(self) -> list[tuple[str, str]]:
        """A copy of the request log: ``(method, path)`` in arrival order."""
        with self._lock:
            return list(self._log)

    def reset_log(self) -> None:
        """Forget the request log and the transfers."""
        with self._lock:
            self._log.clear()
            self._transfers.clear()

    @property
    def transfers(self) -> list[Transfer]:
        """A copy of what was answered since the last :meth:`reset_log`, in completion order.

        Waits (up to 2 s) for answers being written to be counted: a client can have read a
        whole answer a moment before the server thread records it.
        """
        with self._answered:
            self._answered.wait_for(lambda: self._answering == 0, timeout=2.0)
            return list(self._transfers)

    def bytes_sent(self) -> dict[str, int]:
        """Body bytes sent since the last :meth:`reset_log`, by kind (pages, metadata, files,
        other); HEAD answers and 304s count zero."""
        totals = dict.fromkeys(("pages", "metadata", "files", "other"), 0)
        for transfer in self.transfers:
            totals[transfer.kind] += transfer.body_bytes
        return totals

    def _answering_one(self) -> None:
        with self._lock:
            self._answering += 1

    def _sent(self, transfer: Transfer) -> None:
        with self._answered:
            self._transfers.append(transfer)
            self._answering -= 1
            self._answered.notify_all()

    def _note(self, method: str, path: str) -> None:
        with self._lock:
            self._log.append((method, path))

    def served_files(self) -> dict[str, ServedFile]:
        """Every servable, existing file by name, sorted; facts cached per (path, mtime, size),
        and read once per inode (hard links share them). With ``rescan=False``, read once."""
        if not self.rescan and (snapshot := self._snapshot) is not None:
            return snapshot
        with self._lock:
            records = {p.name: IndexFile(p.name, p) for d in self._directories
                       for p in d.iterdir() if p.is_file() and p.name.endswith(_SUFFIXES)}
            records.update(self._records)
        served: dict[str, ServedFile] = {}
        for filename, record in sorted(records.items()):
            try:
                stat = record.path.stat()
            except FileNotFoundError:  # removed while served: gone from the index
                continue
            key = (record.path, stat.st_mtime_ns, stat.st_size)
            if key not in self._cache:
                self._cache[key] = self._read(record, stat)
            if (facts := self._cache[key]) is not None:
                served[filename] = dataclasses.replace(facts, record=record)
        if not self.rescan:
            self._snapshot = served
        return served

    def _read(self, record: IndexFile, stat: Any) -> ServedFile | None:
        """:meth:`ServedFile.read`, reusing the bytes' facts of another name of the same inode
        when the name gives the same project and version."""
        inode = (stat.st_dev, stat.st_ino, stat.st_mtime_ns, stat.st_size)
        known = self._facts.get(inode)
        if known is not None and stat.st_nlink > 1:
            try:
                if record.filename.endswith(".whl"):
                    project, version, _, _ = parse_wheel_filename(record.filename)
                else:
                    project, version = parse_sdist_filename(record.filename)
            except (InvalidWheelFilename, InvalidSdistFilename):
                return None
            if (project, str(version)) == (known.project, known.version):
                return dataclasses.replace(known, record=record)
        facts = ServedFile.read(record)
        if facts is not None:
            self._facts[inode] = facts
        return facts

    def projects(self) -> dict[NormalizedName, list[ServedFile]]:
        """Served files grouped by normalized project name."""
        grouped: dict[NormalizedName, list[ServedFile]] = {}
        for served in self.served_files().values():
            grouped.setdefault(served.project, []).append(served)
        return grouped

    def _sha256(self, served: ServedFile) -> str:
        if served.record.filename in self.corrupt_hashes:
            return hashlib.sha256(b"corrupt:" + served.sha256.encode()).hexdigest()
        return served.sha256

    def _core_metadata(self, served: ServedFile) -> dict[str, str] | bool:
        metadata = self.metadata_of(served)
        if not self.metadata_files or metadata is None:
            return False
        return {"sha256": hashlib.sha256(metadata).hexdigest()}

    def metadata_of(self, served: ServedFile) -> bytes | None:
        """The PEP 658 metadata file served for ``served`` (its own METADATA unless it lies)."""
        return self.lying_metadata.get(served.record.filename, served.metadata)

    def _json_entry(self, served: ServedFile) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "filename": served.record.filename,
            "url": f"{self.root}/files/{served.record.filename}",
            "hashes": {"sha256": self._sha256(served)},
            "yanked": served.record.yanked,
            "core-metadata": self._core_metadata(served),
            "dist-info-metadata": self._core_metadata(served),
            "size": served.size,
        }
        if served.requires_python is not None:
            entry["requires-python"] = served.requires_python
        if upload_time := _upload_time(served.record.upload_time):
            entry["upload-time"] = upload_time
        return entry

    def _html_link(self, served: ServedFile) -> str:
        filename = served.record.filename
        attrs = f' href="{self.root}/files/{html.escape(filename)}#sha256={self._sha256(served)}"'
        if served.requires_python:
            attrs += f' data-requires-python="{html.escape(served.requires_python)}"'
        if served.record.yanked is not False:
            reason = "" if served.record.yanked is True else str(served.record.yanked)
            attrs += f' data-yanked="{html.escape(reason)}"'
        if isinstance(core := self._core_metadata(served), dict):
            attrs += f' data-core-metadata="sha256={core["sha256"]}"'
            attrs += f' data-dist-info-metadata="sha256={core["sha256"]}"'
        return f"<a{attrs}>{html.escape(filename)}</a>"

    def render_project(self, name: NormalizedName, files: list[ServedFile], fmt: str) -> bytes:
        """The project page for ``files`` in ``fmt`` ("json" or "html")."""
        if not self.rescan:
            key = (name, fmt, self.metadata_files)
            if (page := self._pages.get(key)) is None:
                page = self._pages[key] = self._render_project(name, files, fmt)
            return page
        return self._render_project(name, files, fmt)

    def _render_project(self, name: NormalizedName, files: list[ServedFile], fmt: str) -> bytes:
        if fmt == "html":
            return _html_page(f"Links for {name}", map(self._html_link, files))
        versions = sorted({served.version for served in files}, key=Version)
        page = {"meta": {"api-version": "1.1"}, "name": name, "versions": versions,
                "files": [self._json_entry(served) for served in files]}
        return json.dumps(page, indent=1).encode()

    def render_index(self, fmt: str) -> bytes:
        """The ``/simple/`` project list in ``fmt``."""
        names = sorted(self.projects())
        if fmt == "html":
            return _html_page("Simple index", (f'<a href="/simple/{n}/">{n}</a>' for n in names))
        page = {"meta": {"api-version": "1.1"}, "projects": [{"name": n} for n in names]}
        return json.dumps(page, indent=1).encode()


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
        elif path == "/links/":
            self._send(HTTPStatus.OK, self.index.render_find_links(), send_body, content_type=_TEXT_HTML)
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

    def _page(self, render: Callable[[str], bytes], send_body: bool) -> None:
        """Negotiate, render, and answer 200 or 304 (ETag / If-None-Match)."""
        fmt, content_type = negotiate(self.headers.get("Accept"), allow_json=self.index.json)
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


def index_from_spec(tmpdir: Path, spec: Mapping[str, Mapping[str, Any]],
                    **knobs: Any) -> LocalIndex:
    """Build ``spec`` (see :func:`build_packages`) into ``tmpdir``; return an unstarted index.

    Use it as ``with index_from_spec(tmp_path, spec) as index: ...`` (entering starts it).
    """
    return LocalIndex(build_packages(tmpdir, spec), **knobs)
