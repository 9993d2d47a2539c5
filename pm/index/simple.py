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

import functools
import hashlib
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from urllib.parse import urldefrag

from packaging.utils import NormalizedName, canonicalize_name

from ._metadata import parse_metadata, require_static
from ._pages import ACCEPT, parse_page
from ._ranges import file_metadata
from .base import FileLink, IndexFailure, LookAheadSkipped, Metadata, is_looking_ahead
from .cache import Cache, CachedPage, max_age
from .http import DEFAULT_TIMEOUT, DEFAULT_WORKERS, HttpClient, InFlight, make_pool

OFFLINE_MISS = "not in the cache and --offline was given"


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
    """

    def __init__(
        self,
        index_url: str,
        cache: Cache | None = None,
        *,
        offline: bool = False,
        client: HttpClient | None = None,
        executor: ThreadPoolExecutor | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        workers: int = DEFAULT_WORKERS,
    ) -> None:
        self._own_client, self._own_pool = client is None, executor is None
        self.client = client if client is not None else HttpClient(timeout=timeout)
        # Credentials in the URL go to the client; links, cache, messages never see them.
        self.index_url = self.client.authorize(index_url.rstrip("/") + "/")
        self.label = self.index_url
        self.cache = cache
        self.offline = offline
        self._pool = executor if executor is not None else make_pool(workers)
        self._links: InFlight[NormalizedName, tuple[FileLink, ...]] = InFlight(self._pool)
        self._metadata: InFlight[FileLink, Metadata] = InFlight(self._pool)

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

    def project_url(self, name: str) -> str:
        return f"{self.index_url}{canonicalize_name(name)}/"

    # -- the Source interface ---------------------------------------------------------------------

    def links(self, name: NormalizedName) -> tuple[FileLink, ...]:
        """Files of ``name`` (``()`` on 404). Costs one request when not cached/fresh."""
        key = canonicalize_name(name)
        return self._links.get(key, lambda: self._fetch_links(key))

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
            self._links.submit(key, functools.partial(self._fetch_links, key))

    def prefetch_metadata(self, links: Iterable[FileLink]) -> None:
        for link in links:
            self._metadata.submit(link, functools.partial(self._fetch_metadata, link, ahead=True))

    # -- project pages ----------------------------------------------------------------------------

    def _fetch_links(self, name: NormalizedName) -> tuple[FileLink, ...]:
        page = self._page(self.project_url(name))
        if page.status == 404:
            return ()
        return parse_page(page.body, page.content_type, page.final_url, self.label)

    def _page(self, url: str) -> CachedPage:
        cached = self.cache.get_page(url) if self.cache is not None else None
        if self.offline:
            if cached is None:
                raise IndexFailure(url, OFFLINE_MISS)
            return cached
        if cached is not None and cached.is_fresh():
            return cached
        headers = {"Accept": ACCEPT}
        if cached is not None and cached.status == 200:
            if cached.etag:
                headers["If-None-Match"] = cached.etag
            if cached.last_modified:
                headers["If-Modified-Since"] = cached.last_modified
        response = self.client.get(url, headers=headers, ok=(200, 304, 404))
        if response.status == 304:
            if cached is None or cached.status != 200:
                raise IndexFailure(url, "HTTP 304 Not Modified for a page not in the cache")
            page = cached.revalidated(response.headers)
            if page.max_age == 0 and (page.etag, page.last_modified) == (
                    cached.etag, cached.last_modified):
                return page  # nothing worth rewriting
        else:
            found = response.headers
            page = CachedPage(
                url, response.url, response.status, found.get("content-type", ""),
                response.body if response.status == 200 else b"",
                found.get("etag"), found.get("last-modified"),
                max_age(found.get("cache-control")), time.time())
        if self.cache is not None:
            self.cache.put_page(page)
        return page

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
        if not link.is_wheel:
            require_static(data, url)
        metadata = parse_metadata(data, url)
        return replace(metadata, unverified=True) if unverified else metadata

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
