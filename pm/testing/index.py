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
from collections.abc import Iterable, Mapping
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

from packaging.utils import (
    NormalizedName,
    canonicalize_name,
)
from packaging.version import Version

from pm.testing._handler import _Handler, _Server
from pm.testing._pages import PRESETS as PRESETS
from pm.testing._pages import SUFFIXES, ServedFile, html_page, project_version, upload_time
from pm.testing._pages import Transfer as Transfer
from pm.testing._pages import negotiate as negotiate
from pm.testing.wheels import IndexFile, build_packages


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
        #: {(name, version): [advisory dicts]}: the ``vulnerabilities`` of PyPI's JSON API
        #: (``/pypi/<name>/<version>/json``); a served release not named has none
        self.vulnerabilities: dict[tuple[str, str], list[dict[str, Any]]] = {}
        #: whether ``/pypi/…`` answers at all (off: an index without a JSON API, every release 404)
        self.json_api = True
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
        return html_page("Links", anchors)

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
                       for p in d.iterdir() if p.is_file() and p.name.endswith(SUFFIXES)}
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
            named = project_version(record.filename)
            if named is None:
                return None
            if (named[0], str(named[1])) == (known.project, known.version):
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
        if uploaded := upload_time(served.record.upload_time):
            entry["upload-time"] = uploaded
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
            return html_page(f"Links for {name}", map(self._html_link, files))
        versions = sorted({served.version for served in files}, key=Version)
        page = {"meta": {"api-version": "1.1"}, "name": name, "versions": versions,
                "files": [self._json_entry(served) for served in files]}
        return json.dumps(page, indent=1).encode()

    def render_release(self, name: str, version: str) -> bytes | None:
        """The JSON API answer for release ``version`` of ``name`` (None: not served)."""
        key = canonicalize_name(name)
        files = [f for f in self.projects().get(key, []) if Version(f.version) == Version(version)]
        if not files:
            return None
        found = next((v for (n, ver), v in self.vulnerabilities.items()
                      if canonicalize_name(n) == key and Version(ver) == Version(version)), [])
        return json.dumps({"info": {"name": name, "version": version},
                            "urls": [{"filename": f.record.filename} for f in files],
                            "vulnerabilities": found}).encode()

    def render_index(self, fmt: str) -> bytes:
        """The ``/simple/`` project list in ``fmt``."""
        names = sorted(self.projects())
        if fmt == "html":
            return html_page("Simple index", (f'<a href="/simple/{n}/">{n}</a>' for n in names))
        page = {"meta": {"api-version": "1.1"}, "projects": [{"name": n} for n in names]}
        return json.dumps(page, indent=1).encode()


def index_from_spec(tmpdir: Path, spec: Mapping[str, Mapping[str, Any]],
                    **knobs: Any) -> LocalIndex:
    """Build ``spec`` (see :func:`build_packages`) into ``tmpdir``; return an unstarted index.

    Use it as ``with index_from_spec(tmp_path, spec) as index: ...`` (entering starts it).
    """
    return LocalIndex(build_packages(tmpdir, spec), **knobs)
