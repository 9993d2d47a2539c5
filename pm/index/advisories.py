"""Published advisories of one release, from an index's JSON API (PyPI's ``vulnerabilities``).

PyPI answers ``<base>/<name>/<version>/json`` with the release's ``vulnerabilities`` list (OSV
data: ``id``, ``aliases``, ``summary``, ``details``, ``fixed_in``, ``link``, ``withdrawn``,
``source``). The base is derived from the index URL (``…/simple/`` → ``…/pypi/``, as PyPI and
its mirrors lay it out), or given (``pm.json_api_url``, ``$HERMES_PM_JSON_API_URL``,
``--json-api-url``) for an index laid out otherwise. An index with no JSON API, or one that does
not know the release, is :class:`AdvisoriesUnavailable` — never "no advisories". A withdrawn
advisory is not one.

Answers go through pm's HTTP client and the on-disk :class:`~pm.index.cache.Cache` (keyed by the
JSON URL), revalidated with their ETag / Last-Modified; ``offline`` answers from the cache only.
:func:`cached_advisories` reads the cache alone (what ``outdated``'s badge costs: no request).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from pm.base.errors import PmError
from pm.base.urls import redact_url
from pm.index.base import IndexFailure
from pm.index.cache import CachedPage, max_age

if TYPE_CHECKING:
    from pm.index.cache import Cache
    from pm.index.http import HttpClient

#: The variable that gives the JSON API base (beats ``pm.json_api_url``; the flag beats both).
VARIABLE = "HERMES_PM_JSON_API_URL"


class AdvisoriesUnavailable(PmError):
    """No advisory data for a pin's index: it has no JSON API, or none that knows the release,
    or (offline) none cached. Never a verdict that a pin is safe."""

    kind = "advisories-unavailable"

    def __init__(self, index: str, detail: str) -> None:
        self.index = index
        self.detail = detail
        super().__init__(f"advisories unavailable for {index}: {detail}")


@dataclass(frozen=True)
class Advisory:
    """One published vulnerability of a release (withdrawn ones are never made)."""

    id: str
    aliases: tuple[str, ...]
    summary: str
    fixed_in: tuple[Version, ...]
    link: str | None
    source: str | None = None

    def fixed_after(self, pinned: Version) -> Version | None:
        """The lowest fixed version above ``pinned`` (None: no fix published above it)."""
        return min((v for v in self.fixed_in if v > pinned), default=None)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "aliases": list(self.aliases), "summary": self.summary,
                "fixed_in": [str(v) for v in self.fixed_in], "link": self.link, "source": self.source}


def json_api_base(index_url: str, given: str | None = None) -> str | None:
    """The JSON API base for ``index_url``: ``given`` when set, else ``…/pypi/`` for an index URL
    ending in ``/simple`` (PyPI's layout), else None (unknown: no advisories from it)."""
    if given:
        return given.rstrip("/") + "/"
    clean = index_url.split("#", 1)[0].split("?", 1)[0].rstrip("/")
    if clean.lower().startswith(("http://", "https://")) and clean.endswith("/simple"):
        return clean.removesuffix("simple") + "pypi/"
    return None


def release_url(base: str, name: str, version: str) -> str:
    return f"{base}{quote(canonicalize_name(name))}/{quote(version)}/json"


def parse(body: bytes, url: str) -> tuple[Advisory, ...]:
    """The release's advisories (withdrawn ones left out); bad data is an :class:`IndexFailure`
    naming the URL and key."""
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise IndexFailure(redact_url(url), f"not JSON: {exc}") from None
    found = data.get("vulnerabilities") if isinstance(data, dict) else None
    if not isinstance(found, list):
        raise IndexFailure(redact_url(url), "no 'vulnerabilities' list: not a JSON API answer")
    return tuple(a for at, item in enumerate(found) if (a := _advisory(item, url, at)) is not None)


def _advisory(item: Any, url: str, at: int) -> Advisory | None:
    def bad(key: str, what: str) -> IndexFailure:
        return IndexFailure(redact_url(url), f"vulnerabilities[{at}].{key}: {what}")

    if not isinstance(item, dict) or not isinstance(item.get("id"), str):
        raise bad("id", "must be a string")
    if item.get("withdrawn"):
        return None
    aliases = item.get("aliases") or []
    fixed = item.get("fixed_in") or []
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        raise bad("aliases", "must be a list of strings")
    if not isinstance(fixed, list) or not all(isinstance(v, str) for v in fixed):
        raise bad("fixed_in", "must be a list of version strings")
    try:
        versions = tuple(sorted({Version(v) for v in fixed}))
    except InvalidVersion as exc:
        raise bad("fixed_in", str(exc)) from None
    summary = item.get("summary") or item.get("details") or ""
    link = item.get("link")
    return Advisory(item["id"], tuple(aliases), str(summary).strip().splitlines()[0] if str(summary).strip() else "",
                    versions, link if isinstance(link, str) else None,
                    item.get("source") if isinstance(item.get("source"), str) else None)


def cached_advisories(cache: Cache, url: str) -> tuple[Advisory, ...] | None:
    """The advisories of ``url``'s release as cached (None: not cached, or unreadable)."""
    page = cache.get_page(url)
    if page is None or page.status != 200:
        return None
    try:
        return parse(page.body, url)
    except IndexFailure:
        return None


@dataclass
class AdvisoryClient:
    """Fetches release JSON through ``client`` and ``cache`` (module docstring)."""

    client: HttpClient
    cache: Cache | None
    offline: bool = False
    counts: dict[str, int] | None = None

    def advisories(self, url: str, index: str) -> tuple[Advisory, ...]:
        cached = self.cache.get_page(url) if self.cache is not None else None
        if self.offline:
            if cached is None:
                raise AdvisoriesUnavailable(index, f"{redact_url(url)} is not in the cache and --offline was given")
            return self._parsed(cached, index)
        if cached is not None and cached.is_fresh():
            return self._parsed(cached, index)
        return self._parsed(self._download(url, cached, index), index)

    def _parsed(self, page: CachedPage, index: str) -> tuple[Advisory, ...]:
        if page.status != 200:
            raise AdvisoriesUnavailable(index, f"{redact_url(page.url)} answered HTTP {page.status}: no JSON API "
                                               "that knows this release (pm.json_api_url names one)")
        return parse(page.body, page.url)

    def _download(self, url: str, cached: CachedPage | None, index: str) -> CachedPage:
        headers = {"Accept": "application/json"}
        if cached is not None and cached.status == 200:
            if cached.etag:
                headers["If-None-Match"] = cached.etag
            if cached.last_modified:
                headers["If-Modified-Since"] = cached.last_modified
        response = self.client.get(url, headers=headers, ok=(200, 304, 404))
        if response.status == 304:
            if cached is None:
                raise IndexFailure(redact_url(url), "HTTP 304 Not Modified for an answer not in the cache")
            page = cached.revalidated(response.headers)
        else:
            page = _page(url, response.url, response.status, response.headers, response.body)
        self._count("revalidated" if response.status == 304 else "downloaded")
        if self.cache is not None:
            self.cache.put_page(page)
        return page

    def _count(self, how: str) -> None:
        if self.counts is not None:
            self.counts[how] = self.counts.get(how, 0) + 1


def _page(url: str, final: str, status: int, found: Mapping[str, str], body: bytes) -> CachedPage:
    kept = body if status == 200 else b""
    return CachedPage(url, final, status, found.get("content-type", ""), kept, found.get("etag"),
                      found.get("last-modified"), max_age(found.get("cache-control")), time.time())
