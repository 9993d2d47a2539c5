"""Package sources: where the resolver finds files and their core metadata.

- :mod:`pm.index.base` — the contract: :class:`FileLink`, :class:`Metadata`, :class:`Source`,
  :class:`IndexFailure`.
- :mod:`pm.index.simple` — :class:`SimpleIndexSource`, a PEP 503/691 index over HTTP(S) with
  PEP 658/714 metadata files.
- :mod:`pm.index.findlinks` — :class:`FindLinksSource`, a folder of wheels and sdists.
- :mod:`pm.index.linkpage` — :class:`FindLinksPage`, a find-links page over HTTP(S) (pip's and
  uv's ``--find-links URL``).
- :mod:`pm.index.installed` — :class:`InstalledSource`, the distributions of an environment.
- :mod:`pm.index.multi` — :class:`MultiSource`, several sources as one.
- :mod:`pm.index.cache` — :class:`Cache`, the on-disk page and metadata cache shared by homes.
- :mod:`pm.index.http` — :class:`HttpClient` (keep-alive, redirects, retries, timeouts), over
  :mod:`pm.index.network` (addresses, proxies, credentials, what a network error is called),
  :mod:`pm.index.responses` (responses, sinks, ``file://``) and :mod:`pm.index.bounds` (how
  large and how long a body kept in memory may be).
- :mod:`pm.index.inflight` — :class:`InFlight`: each fetch once, however many threads ask.
- :mod:`pm.index.concurrency` — how many threads fetch at once: from the cores and the latency.

:func:`open_sources` builds the combination that index settings describe.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

if TYPE_CHECKING:
    from pm.base.cachedir import default_cache_dir
    from pm.index._metadata import MetadataUnavailable
    from pm.index.base import FileLink, IndexFailure, Metadata, Source
    from pm.index.cache import Cache
    from pm.index.findlinks import FindLinksSource
    from pm.index.http import HttpClient
    from pm.index.installed import InstalledSource
    from pm.index.linkpage import FindLinksPage
    from pm.index.multi import MultiSource
    from pm.index.simple import OFFLINE_MISS, SimpleIndexSource

#: Where each public name lives. Loaded on first use (PEP 562), so commands that never fetch
#: (check, a no-op sync, status) do not pay for http.client, ssl, html.parser and zipfile.
_LAZY = {
    "MetadataUnavailable": "._metadata", "FileLink": ".base", "IndexFailure": ".base",
    "Metadata": ".base", "Source": ".base", "Cache": ".cache", "default_cache_dir": ".cache",
    "FindLinksSource": ".findlinks", "FindLinksPage": ".linkpage", "HttpClient": ".http", "InstalledSource": ".installed",
    "MultiSource": ".multi", "OFFLINE_MISS": ".simple", "SimpleIndexSource": ".simple",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_LAZY[name], __name__), name)


__all__ = [
    "OFFLINE_MISS",
    "Cache",
    "FileLink",
    "FindLinksPage",
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


def is_page(value: Path | str) -> bool:
    """Whether a find-links entry is a page over HTTP(S) rather than a folder."""
    return isinstance(value, str) and value.lower().startswith(("http://", "https://"))


def open_sources(
    index_urls: Iterable[str],
    find_links: Iterable[Path | str],
    *,
    offline: bool,
    refresh: bool = False,
    cache_dir: Path | str | None = None,
    timeout: float = 30.0,
    workers: int | None = None,
    tags: Iterable[str] | None = None,
) -> MultiSource:
    """The sources for these settings: each index URL in order, then each find-links entry (a
    folder, or an ``http(s)://`` page of links).

    No index URLs means find-links only (``--no-index``); neither gives a source in which no
    project exists. Every index and page shares one on-disk :class:`Cache` at ``cache_dir``
    (default: :func:`default_cache_dir`). ``tags``: the target's supported wheel tags; index pages
    are then digested for that target (see :mod:`pm.index.project`), None keeps every file.
    ``workers`` fixes each index's fetch threads; None sizes them from the cores and the index's
    latency (:mod:`pm.index.concurrency`). Nothing is fetched here. The caller MUST ``close()``
    the result (or use it in ``with``) to stop background fetching.
    """
    from pm.index.cache import Cache
    from pm.index.findlinks import FindLinksSource
    from pm.index.linkpage import FindLinksPage
    from pm.index.multi import MultiSource
    from pm.index.simple import SimpleIndexSource

    cache = Cache(cache_dir)
    tags = tuple(tags) if tags is not None else None
    sources: list[Source] = [
        SimpleIndexSource(url, cache, offline=offline, refresh=refresh, timeout=timeout, workers=workers, tags=tags)
        for url in dict.fromkeys(index_urls)
    ]
    sources += [FindLinksPage(str(entry), cache, offline=offline, refresh=refresh, timeout=timeout, workers=workers,
                              tags=tags)
                if is_page(entry) else FindLinksSource(_folder(entry)) for entry in dict.fromkeys(find_links)]
    return MultiSource(sources)
