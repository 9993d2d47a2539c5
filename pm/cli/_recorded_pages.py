"""What a shortcut record (:mod:`pm.cli.shortcut`) keeps of the index pages a resolve read, so that
a hit can tell, without loading the index cache or client, that the full command would read the
same pages: each page's header file in the cache (watched by the sha256 of its bytes), and then

- for a page that a max-age lets pm keep (or any page, offline): the fetch time and max-age those
  bytes hold — the hit compares them with the clock, as :meth:`pm.index.cache.PageHeader.is_fresh`;
- for a page that no max-age lets pm keep (a bare mirror's): its URL, body sha256 and validators —
  the hit asks for it again (:mod:`pm.cli._refetch`), as :class:`pm.index.simple.SimpleIndexSource`
  asks, with the headers of :func:`request_headers`.

Runs when an answer is remembered, with the full command loaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Recorded:
    """``watched``: ``{"f:<header file>": sha256 of its bytes}``, for :mod:`pm.base.watch`;
    ``fresh``: ``[fetched_at, max_age]`` per page kept by max-age; ``asked``: ``[url, body sha256,
    etag, last-modified]`` per page asked for again ("" for a validator the page has not)."""

    watched: dict[str, str]
    fresh: list[list[float]]
    asked: list[list[str]]


def recorded(pages: list[tuple[str, int, str]], cache_root: Path, *, offline: bool,
             ask_again: bool = True) -> Recorded | None:
    """What a hit checks of ``pages`` ``(url, status, body sha256)``; None (nothing to remember)
    when a page is not stored in the cache as it was read, or must be asked for in a way the hit
    does not (credentials, a proxy, a redirect; or ``ask_again`` is False): then every identical
    command runs in full, as it did before records were made."""
    if not pages:
        return Recorded({}, [], [])
    from pm.index.cache import Cache

    proofs = Cache(cache_root).page_proofs(pages)
    if proofs is None:
        return None
    kept = [header for _, _, header in proofs if offline or header.max_age > 0]
    asked = [header for _, _, header in proofs if not (offline or header.max_age > 0)]
    hosts: dict[tuple[str, str], bool] = {}
    if asked and not (ask_again and all(_plainly_asked(h.url, h.final_url, h.status, hosts) for h in asked)):
        return None
    return Recorded({f"f:{path}": sha for path, sha, _ in proofs},
                    [[float(h.fetched_at), int(h.max_age)] for h in kept],
                    [[h.url, h.body_sha256, h.etag or "", h.last_modified or ""] for h in asked])


def _plainly_asked(url: str, final_url: str, status: int, hosts: dict[tuple[str, str], bool]) -> bool:
    """Whether the page at ``url`` answered 200 where it is (no redirect), over HTTP(S), with no
    credentials in the URL or netrc and no proxy: as :mod:`pm.cli._refetch` asks it. ``hosts``
    keeps what was found of each scheme and host."""
    parts = urlsplit(url)
    if status != 200 or final_url != url or parts.scheme not in ("http", "https") or parts.username is not None:
        return False
    where = (parts.scheme, parts.hostname or "")
    if where not in hosts:
        hosts[where] = _no_proxy_nor_netrc(*where)
    return hosts[where]


def _no_proxy_nor_netrc(scheme: str, host: str) -> bool:
    from pm.index.base import IndexFailure
    from pm.index.network import netrc_header, proxy_for

    try:
        return proxy_for(scheme, host) is None and netrc_header(host) is None
    except IndexFailure:  # a SOCKS proxy: the full command says so
        return False


def request_headers() -> dict[str, str]:
    """The headers :class:`pm.index.http.HttpClient` sends for an index page (its validators apart)."""
    from pm.index._pages import ACCEPT
    from pm.index.http import USER_AGENT

    return {"User-Agent": USER_AGENT, "Accept-Encoding": "gzip", "Accept": ACCEPT}
