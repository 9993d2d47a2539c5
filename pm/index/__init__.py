"""Package sources: where the resolver finds files and their core metadata.

- :mod:`pm.index.base` — the contract: :class:`FileLink`, :class:`Metadata`, :class:`Source`,
  :class:`IndexFailure`.
- :mod:`pm.index.simple` — :class:`SimpleIndexSource`, a PEP 503/691 index over HTTP(S) with
  PEP 658/714 metadata files.
- :mod:`pm.index.findlinks` — :class:`FindLinksSource`, a folder of wheels and sdists.
- :mod:`pm.index.installed` — :class:`InstalledSource`, the distributions of an environment.
- :mod:`pm.index.multi` — :class:`MultiSource`, several sources as one.
- :mod:`pm.index.cache` — :class:`Cache`, the on-disk page and metadata cache shared by homes.
- :mod:`pm.index.http` — :class:`HttpClient` (keep-alive, redirects, timeouts) and
  :class:`InFlight` (each fetch once, however many threads ask).

:func:`open_sources` builds the combination that index settings describe.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from urllib.parse import unquote, urlsplit

from ._metadata import MetadataUnavailable
from .base import FileLink, IndexFailure, Metadata, Source
from .cache import Cache, default_cache_dir
from .findlinks import FindLinksSource
from .http import DEFAULT_TIMEOUT, DEFAULT_WORKERS, HttpClient
from .installed import InstalledSource
from .multi import MultiSource
from .simple import OFFLINE_MISS, SimpleIndexSource

__all__ = [
    "OFFLINE_MISS",
    "Cache",
    "FileLink",
    "FindLinksSource",
    "HttpClient",
    "IndexFailure",
    "InstalledSource",
    "Metadata",
    "MetadataUnavailable",
    "MultiSource",
    "SimpleIndexSource",
    "Source",
    "default_cache_dir",
    "open_sources",
]


def _folder(value: Path | str) -> Path:
    """A find-links entry as a folder path (``file://`` URLs accepted)."""
    text = str(value)
    if text.startswith("file://"):
        return Path(unquote(urlsplit(text).path))
    return Path(text)


def open_sources(
    index_urls: Iterable[str],
    find_links: Iterable[Path | str],
    *,
    offline: bool,
    cache_dir: Path | str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    workers: int = DEFAULT_WORKERS,
) -> MultiSource:
    """The sources for these settings: each index URL in order, then each find-links folder.

    No index URLs means find-links only (``--no-index``); neither gives a source in which no
    project exists. Every index shares one on-disk :class:`Cache` at ``cache_dir`` (default:
    :func:`default_cache_dir`). Nothing is fetched here. The caller MUST ``close()`` the result
    (or use it in ``with``) to stop background fetching.
    """
    cache = Cache(cache_dir)
    sources: list[Source] = [
        SimpleIndexSource(url, cache, offline=offline, timeout=timeout, workers=workers)
        for url in dict.fromkeys(index_urls)
    ]
    sources += [FindLinksSource(_folder(folder)) for folder in dict.fromkeys(find_links)]
    return MultiSource(sources)
