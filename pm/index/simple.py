"""A simple repository over HTTP(S): PEP 691 JSON first, PEP 503 HTML as fallback.

Project pages go through the on-disk :class:`~pm.index.cache.Cache` (revalidated with ETag /
Last-Modified, skipped while Cache-Control max-age holds); core metadata comes from PEP 658/714
``.metadata`` files when the index serves them (verified against the advertised sha256), else
from the wheel itself: by HTTP range requests on its zip directory (:mod:`pm.index._ranges`; no
hash covers those bytes, so the metadata is marked ``unverified`` and the build re-checks it
against the installed wheel), else whole (verified against the file's sha256); cached by hash.

Sdists: their PKG-INFO stands for the metadata only when it is static (Metadata-Version >= 2.2,
no ``Dynamic`` dependencies, PEP 643); otherwise :meth:`SimpleIndexSource.metadata` raises
:class:`~pm.index._metadata.MetadataUnavailable`, an :class:`IndexFailure` the caller may catch
to build the sdist instead.
"""

from __future__ import annotations

import collections
import functools
import hashlib
import logging
import time
from collections.abc import Iterable
from concurrent.futures import Executor
from dataclasses import replace
from urllib.parse import urldefrag

from packaging.utils import NormalizedName, canonicalize_name

from pm.base import codekey as _code
from pm.index._metadata import parse_metadata, require_static
from pm.index._pages import ACCEPT, page_digest
from pm.index.base import FileLink, IndexFailure, LookAheadSkipped, Metadata, is_looking_ahead
from pm.index.cache import Cache, PageHeader, max_age
from pm.index.concurrency import cpu_count, fetch_workers, workers_setting
from pm.index.http import DEFAULT_TIMEOUT, HttpClient, InFlight, make_pool
from pm.index.project import Digest, Project, tags_key

OFFLINE_MISS = "not in the cache and --offline was given"
_log = logging.getLogger("pm.index")


def _verify(url: str, expected: str | None, actual: str) -> None:
    if expected and expected.lower() != actual:
        raise IndexFailure(url, f"hash mismatch: expected sha256 {expected.lower()}, got {actual}")


class SimpleIndexSource:
    """One simple index (``index_url`` ends with ``/simple/`` or similar).

    Contract: thread-safe; ``links``/``metadata`` results are memoised for the life of the source
    and a request already in flight is joined, never repeated; ``prefetch*`` return at once and
    fetch on the pool. A project the index answers 404 for has no links. ``offline=True`` never
    touches the network: cached pages and metadata only, else ``IndexFailure(url, OFFLINE_MISS)``.
    Call :meth:`close` (or use ``with``) to stop the pool and close connections.

    Background fetches run on up to :meth:`workers` threads: ``workers`` when given, else
    ``$HERMES_PM_FETCH_WORKERS``, else :func:`~.concurrency.fetch_workers` of the cores and of the
    latency the client measures, re-sized as the index's first answers come in.
    """

    def __init__(
        self,
        index_url: str,
        cache: Cache | None = None,
        *,
        offline: bool = False,
        refresh: bool = False,
        client: HttpClient | None = None,
        executor: Executor | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        workers: int | None = None,
        tags: Iterable[str] | None = None,
    ) -> None:
        self._own_client, self._own_pool = client is None, executor is None
        self.client = client if client is not None else HttpClient(timeout=timeout)
        # Credentials in the URL go to the client; links, cache, messages never see them.
        self.index_url = self.client.authorize(index_url.rstrip("/") + "/")
        self.label = self.index_url
        self.cache = cache
        self.offline = offline
        #: ``--refresh``: a cached page counts as fresh only once it was asked for again in this
        #: operation (a conditional request: a 304 still costs no body).
        self.refresh = refresh
        self._asked: set[str] = set()
        self._cpus = cpu_count()
        self._fixed = workers if workers is not None else workers_setting()
        self._pool = executor if executor is not None else self._sized_pool()
        self.tags = frozenset(tags) if tags is not None else None
        self._tags_key = tags_key(self.tags)
        #: Digests are keyed on the code that parsed them too: an edited parser digests again.
        self._code = _code.digest(cache.root) if cache is not None else ""
        self._projects: InFlight[NormalizedName, Project] = InFlight(self._pool)
        self._metadata: InFlight[FileLink, Metadata] = InFlight(self._pool)
        #: Every page read, URL -> (status, body sha256): what a reused resolution depends on.
        self.pages_read: dict[str, tuple[int, str]] = {}
        #: How pages were had: fresh in the cache, revalidated (304), downloaded, offline (``-v``).
        self.page_counts: collections.Counter[str] = collections.Counter()

    def __enter__(self) -> SimpleIndexSource:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Cancel queued prefetches and close connections (only what this source created)."""
        if self._own_pool:
            self._pool.shutdown(wait=False, cancel_futures=True)
        if self._own_client:
            self.client.close()

    def workers(self) -> int:
        """How many threads may fetch from this index at once, as of now (see the class)."""
        if self._fixed is not None:
            return self._fixed
        return fetch_workers(self._cpus, self.client.latency.seconds())

    def _sized_pool(self) -> Executor:
        pool = make_pool(self.workers())
        if self._fixed is None:
            self.client.latency.listen(lambda latency: pool.resize(fetch_workers(self._cpus, latency)))
        return pool

    def project_url(self, name: str) -> str:
        return f"{self.index_url}{canonicalize_name(name)}/"

    def project_names(self) -> list[NormalizedName]:
        """The index's project list when it is small (for a "did you mean"; see :mod:`.listing`);
        ``[]`` offline, or when the list is large (PyPI's is never read)."""
        from pm.index.listing import small_project_list

        return [] if self.offline else small_project_list(self.client, self.index_url)

    # -- the Source interface ---------------------------------------------------------------------

    def project(self, name: NormalizedName) -> Project:
        """Files of ``name`` by version (empty on 404). Costs one request when not cached/fresh."""
        key = canonicalize_name(name)
        return self._projects.get(key, lambda: self._fetch_project(key))

    def links(self, name: NormalizedName) -> tuple[FileLink, ...]:
        """Every file of ``name`` (``()`` on 404)."""
        return self.project(name).all_files()

    def metadata(self, link: FileLink) -> Metadata:
        """Core metadata of ``link``: cache, else ``.metadata`` file, else the file itself (by
        range requests when the server answers them, else whole)."""
        for _ in range(3):
            try:
                return self._metadata.get(link, lambda: self._fetch_metadata(link))
            except LookAheadSkipped:
                if is_looking_ahead():
                    raise
                # A look-ahead we joined declined the whole download; ask again as ourselves.
        return self._fetch_metadata(link)

    def prefetch(self, names: Iterable[NormalizedName]) -> None:
        for name in names:
            key = canonicalize_name(name)
            self._projects.submit(key, functools.partial(self._fetch_project, key))

    def prefetch_metadata(self, links: Iterable[FileLink]) -> None:
        for link in links:
            self._metadata.submit(link, functools.partial(self._fetch_metadata, link, ahead=True))

    def page_current(self, url: str, status: int, body_sha256: str) -> bool | None:
        """Whether the page at ``url`` still has this status and body, when the cache alone can
        tell (a fresh copy, or offline); None when only a request can."""
        header = self.cache.get_header(url) if self.cache is not None else None
        if header is None:
            return False if self.offline else None
        if (header.status, header.body_sha256) != (status, body_sha256):
            return False  # the newest copy anyone fetched differs
        return True if self.offline or self._fresh(header) else None

    def unchanged(self, url: str, status: int, body_sha256: str) -> bool:
        """Whether the page at ``url`` still has this status and body (a fresh copy counts without
        asking; else one conditional request). For reusing a resolution (:mod:`pm.index.reuse`)."""
        header, _ = self._page(url)
        return (header.status, header.body_sha256) == (status, body_sha256)

    def page(self, url: str) -> tuple[PageHeader, bytes]:
        """Any page read under this source's rules (a fresh cached copy without asking, else a
        conditional request; offline, the cache only), recorded in :attr:`pages_read`: its header
        and body (empty for a 404). For pages that are not project pages (a find-links page)."""
        header, body = self._page(url)
        self.pages_read[url] = (header.status, header.body_sha256)
        if body is None and self.cache is not None:
            body = self.cache.get_body(header.body_sha256)
        if body is None and header.status == 200:
            if self.offline:
                raise IndexFailure(url, OFFLINE_MISS)
            header, body = self._download(url, None)
            self.pages_read[url] = (header.status, header.body_sha256)
        return header, body or b""

    # -- project pages ----------------------------------------------------------------------------

    def _fetch_project(self, name: NormalizedName) -> Project:
        url = self.project_url(name)
        header, body = self._page(url)
        self.pages_read[url] = (header.status, header.body_sha256)
        if header.status == 404:
            return Project(name, (), lambda version: ())
        return Project.from_digest(name, self._digest(header, body), self.label)

    def _digest(self, header: PageHeader, body: bytes | None) -> Digest:
        """What the page means for this source's target: from the cache when this body was digested
        before (whatever its URL), else parsed once and stored."""
        key = hashlib.sha256(f"{header.body_sha256}|{header.final_url}|{header.content_type}|"
                             f"{self._tags_key}|{self._code}".encode()).hexdigest()
        if self.cache is not None and (stored := self.cache.get_digest(key)) is not None:
            try:
                return Digest.from_bytes(stored)
            except ValueError:
                pass  # a damaged entry is a miss
        if body is None:
            body = self.cache.get_body(header.body_sha256) if self.cache is not None else None
        if body is None:
            if self.offline:
                raise IndexFailure(header.url, OFFLINE_MISS)
            header, body = self._download(header.url, None)  # unconditional: a 200 or 404 with a body
        digest = page_digest(body or b"", header.content_type, header.final_url, self.tags)
        if self.cache is not None:
            self.cache.put_digest(key, digest.to_bytes())
        return digest

    def _page(self, url: str) -> tuple[PageHeader, bytes | None]:
        """The page's header, and its body when it was downloaded now (None: the cached body holds)."""
        cached = self.cache.get_header(url) if self.cache is not None else None
        if self.offline:
            if cached is None:
                raise IndexFailure(url, OFFLINE_MISS)
            self._had(url, "offline", "from the cache (--offline)")
            return cached, None
        if cached is not None and self._fresh(cached):
            self._had(url, "fresh", f"fresh in the cache (max-age {cached.max_age}s)")
            return cached, None
        return self._download(url, cached)

    def _had(self, url: str, how: str, detail: str) -> None:
        self.page_counts[how] += 1
        _log.debug("page %s: %s", url, detail)

    def _fresh(self, header: PageHeader) -> bool:
        return header.is_fresh() and (not self.refresh or header.url in self._asked)

    def _download(self, url: str, cached: PageHeader | None) -> tuple[PageHeader, bytes | None]:
        """GET the page (conditional when ``cached`` has validators); store what changed."""
        headers = {"Accept": ACCEPT}
        if cached is not None and cached.status == 200:
            if cached.etag:
                headers["If-None-Match"] = cached.etag
            if cached.last_modified:
                headers["If-Modified-Since"] = cached.last_modified
        response = self.client.get(url, headers=headers, ok=(200, 304, 404))
        self._asked.add(url)
        if response.status == 304:
            if cached is None or cached.status != 200:
                raise IndexFailure(url, "HTTP 304 Not Modified for a page not in the cache")
            header, body = cached.revalidated(response.headers), None
            self._had(url, "revalidated", "not modified (304), the cached copy holds")
        else:
            found = response.headers
            body = response.body if response.status == 200 else b""
            header = PageHeader(url, response.url, response.status, found.get("content-type", ""),
                                hashlib.sha256(body).hexdigest(), found.get("etag"),
                                found.get("last-modified"), max_age(found.get("cache-control")), time.time())
            self._had(url, "downloaded", f"downloaded (HTTP {response.status}, {len(body)} bytes)")
        if self.cache is not None and not header.same_as(cached):
            if body is not None:
                self.cache.put_body(body, header.body_sha256)  # once per body: an existing file is kept
            self.cache.put_header(header)
        return header, body

    # -- metadata ---------------------------------------------------------------------------------

    def _fetch_metadata(self, link: FileLink, *, ahead: bool = False) -> Metadata:
        url = urldefrag(link.url)[0]
        if link.metadata_sha256 is not None:
            url = f"{url}.metadata"
        data, unverified = self._cached_metadata(link)
        if data is None:
            if self.offline:
                raise IndexFailure(url, OFFLINE_MISS)
            data, unverified = self._download_metadata(link, url, ahead or is_looking_ahead())
            _log.debug("metadata of %s: %s", link.filename, "its .metadata file (PEP 658)"
                       if link.metadata_sha256 else "read by range requests" if unverified else "the whole file")
        else:
            _log.debug("metadata of %s: from the cache", link.filename)
        if not link.is_wheel:
            require_static(data, url)
        metadata = parse_metadata(data, url)
        # Only metadata taken out of the whole wheel (its sha256 checked) is the wheel's own; a
        # PEP 658 file is the index's word for it, as ranges are: the build checks both.
        return replace(metadata, unverified=True) if unverified or link.metadata_sha256 is not None else metadata

    def _cached_metadata(self, link: FileLink) -> tuple[bytes | None, bool]:
        """Cached metadata, and whether it is unverified (read by range, not hash-checked)."""
        if self.cache is None:
            return None, False
        data = self.cache.get_metadata(link.metadata_sha256) if link.metadata_sha256 else None
        if data is None and link.sha256:
            data = self.cache.get_file_metadata(link.sha256)
            if data is None and (data := self.cache.get_range_metadata(link.sha256)) is not None:
                return data, True
        return data, False

    def _download_metadata(self, link: FileLink, url: str, ahead: bool) -> tuple[bytes, bool]:
        """From the ``.metadata`` file when served, else out of the file (by ranges, else whole);
        stored. The flag is True for metadata read by range (no hash covers it)."""
        if link.metadata_sha256 is not None:
            data = self.client.get(url).body
            _verify(url, link.metadata_sha256, hashlib.sha256(data).hexdigest())
        else:
            from pm.index._ranges import file_metadata  # (range reading: loaded with the first download)

            data, by_range = file_metadata(self.client, link, url, ahead=ahead)
            if by_range:
                if self.cache is not None and link.sha256:
                    self.cache.put_range_metadata(link.sha256, data)
                return data, True
        if self.cache is not None:
            if link.sha256:
                self.cache.put_file_metadata(link.sha256, data)
            else:
                self.cache.put_metadata(data)
        return data, False
