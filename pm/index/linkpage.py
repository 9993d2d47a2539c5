"""A ``--find-links`` URL: one HTML page whose anchors point at wheels and sdists of any project
(pip's and uv's flat find-links page), read like a project page of an index.

The page is read through a :class:`~pm.index.simple.SimpleIndexSource` (so through pm's HTTP
client: bounded reads, retries, proxies, netrc, credentials kept out of URLs; and through the
on-disk cache: validators, freshness, ``--offline``), its anchors parsed by the same parser as
PEP 503 pages (:func:`~pm.index._pages.html_entries`: ``#sha256=`` fragments, ``data-*``
attributes, relative links, ``<base href>``), and its files grouped by the project name in their
file names. Metadata comes as from an index: a PEP 658 file when the anchor announces one, else
range requests on the wheel, else the whole file.

A file the page gives no ``#sha256=`` for has none while the resolver considers it; once pinned,
:meth:`FindLinksPage.hashed` downloads it and hashes its bytes, and that sha256 is what the
resolution records and what uv then installs with ``--require-hashes`` (trust on first download,
as pip and uv do for such pages).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import replace
from urllib.parse import urldefrag, urljoin

from packaging.utils import NormalizedName, canonicalize_name

from pm.index._pages import html_entries
from pm.index.base import FileLink, IndexFailure, Metadata
from pm.index.cache import Cache
from pm.index.http import DEFAULT_TIMEOUT, HashingSink, HttpClient
from pm.index.project import Digest, Entry, Project
from pm.index.simple import OFFLINE_MISS, SimpleIndexSource


class FindLinksPage:
    """The files one find-links page at ``url`` links to.

    Contract: thread-safe; the page is read once, on first use, and that reading stands for the
    life of the source; it is recorded in :attr:`pages_read` so a stored resolution is reused only
    while the page is unchanged. A page that cannot be read (a dead host, a timeout, a 4xx or 5xx
    after retries, a 404, an offline cache miss) raises :class:`IndexFailure` naming the URL, on
    first use. Find-links pages are not indexes: every page's files count, whatever an index has
    (no ``index_url``). Credentials in ``url`` go to the client for the page's host only; the
    label, links and messages never carry them.
    """

    def __init__(self, url: str, cache: Cache | None = None, *, offline: bool = False, refresh: bool = False,
                 client: HttpClient | None = None, timeout: float = DEFAULT_TIMEOUT,
                 workers: int | None = None, tags: Iterable[str] | None = None) -> None:
        # The reader reads this page and its files' metadata; it is never asked for a project page.
        self._reader = SimpleIndexSource(urljoin(url, "."), cache, offline=offline, refresh=refresh, client=client,
                                         timeout=timeout, workers=workers, tags=tags)
        self.page_url = self._reader.client.authorize(urldefrag(url)[0])
        self.label = self.page_url
        self.offline = offline
        self._lock = threading.Lock()
        self._grouped: dict[NormalizedName, list[Entry]] | None = None
        self._base = self.page_url
        self._projects: dict[NormalizedName, Project] = {}

    def __enter__(self) -> FindLinksPage:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._reader.close()

    @property
    def pages_read(self) -> dict[str, tuple[int, str]]:
        """The page as read, URL -> (status, body sha256): what a reused resolution depends on."""
        return self._reader.pages_read

    def _entries(self) -> dict[NormalizedName, list[Entry]]:
        """The page's files by project (read on first use; the caller holds the lock)."""
        if self._grouped is None:
            header, body = self._reader.page(self.page_url)
            if header.status == 404:
                raise IndexFailure(self.page_url, "HTTP 404 Not Found: no find-links page at this URL")
            self._base = header.final_url or self.page_url
            grouped: dict[NormalizedName, list[Entry]] = {}
            for entry in html_entries(body, self._base):
                if (link := FileLink.parse(entry[0], self._base)) is not None:
                    grouped.setdefault(link.name, []).append(entry)
            self._grouped = grouped
        return self._grouped

    # -- the Source interface ---------------------------------------------------------------------

    def project(self, name: NormalizedName) -> Project:
        """The page's files of ``name`` by version (none: an empty project)."""
        key = canonicalize_name(name)
        with self._lock:
            if key not in self._projects:
                digest = Digest.build(self._entries().get(key, ()), self._base, self._reader.tags)
                self._projects[key] = Project.from_digest(key, digest, self.label)
            return self._projects[key]

    def links(self, name: NormalizedName) -> tuple[FileLink, ...]:
        return self.project(name).all_files()

    def metadata(self, link: FileLink) -> Metadata:
        """As from an index: the PEP 658 file, else by range requests, else the whole file."""
        return self._reader.metadata(link)

    def prefetch(self, names: Iterable[NormalizedName]) -> None:
        """No-op: the page is one request, read on first use."""

    def prefetch_metadata(self, links: Iterable[FileLink]) -> None:
        self._reader.prefetch_metadata(links)

    # -- optional capabilities --------------------------------------------------------------------

    def project_names(self) -> list[NormalizedName]:
        """Every project the page links a file of (for a "did you mean"); ``[]`` when unreadable."""
        try:
            with self._lock:
                return sorted(self._entries())
        except IndexFailure:
            return []

    def hashed(self, link: FileLink) -> FileLink:
        """``link`` with the sha256 (and size) of its bytes: downloaded once, streamed, for a file
        the page gives no hash for; ``link`` itself when it has one."""
        if link.sha256:
            return link
        url = urldefrag(link.url)[0]
        if self.offline:
            raise IndexFailure(url, f"the find-links page gives no sha256 for this file, and hashing it needs a "
                                    f"download; {OFFLINE_MISS}")
        sink = HashingSink()
        self._reader.client.get(url, sink=sink)
        return replace(link, sha256=sink.hash.hexdigest(), size=sink.size)

    def page_current(self, url: str, status: int, body_sha256: str) -> bool | None:
        return self._reader.page_current(url, status, body_sha256)

    def unchanged(self, url: str, status: int, body_sha256: str) -> bool:
        return self._reader.unchanged(url, status, body_sha256)
