"""The live catalog (``pm.catalog_url``): the catalog's maintainers publish removals and new pins
without a host release.

The URL (https; file:// or a loopback http:// for a mirror on this machine) is read through pm's HTTP client — proxies,
credentials through netrc, retries of transient failures — at most every :data:`TTL` seconds, within
:data:`TIMEOUT` seconds from the start of the request (a server dripping bytes included) and :data:`CAP` bytes; the copy is kept in pm's cache (``catalog-live/``) with
when it was fetched. When the fetch fails, the last copy is used (however old), else none, and the
notes say so, naming the URL and why. :func:`combined` then takes the live entries over the
configured (or shipped) ones and unions every kill list: a removal reaches every home as soon as
the live copy is read, and nothing removed anywhere is ever installed.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import replace
from pathlib import Path

from pm.base.errors import InputError, PmError, UsageError
from pm.base.lock import seconds
from pm.base.urls import redact_url
from pm.base.watch import UNWATCHED, Watch
from pm.inputs.catalog import Catalog, catalog_from_text, kill_by_repo

TTL = 6 * 3600.0
TIMEOUT = 5.0
CAP = 2 * 1024 * 1024
_TTL_ENV = "HERMES_PM_CATALOG_TTL"  # seconds; for operators who want the live copy more often
#: A mirror on this machine may speak plain HTTP: nothing crosses a network.
_LOOPBACK = ("http://127.0.0.1:", "http://127.0.0.1/", "http://localhost:", "http://localhost/")


def live_catalog(url: str, cache_root: Path, *, now: float | None = None, fetch: bool = True,
                 watch: Watch = UNWATCHED) -> tuple[Catalog | None, list[str]]:
    """The live catalog at ``url`` (fresh, fetched, or the stale copy) and notes on what was used;
    ``fetch=False`` takes the kept copy whatever its age (an offline check: the copy is noted in
    ``watch``; with ``fetch`` the answer depends on the clock and the network, never on memory)."""
    if not url.startswith(("https://", "file://", *_LOOPBACK)):
        raise UsageError(f"pm.catalog_url {redact_url(url)!r}: must be an https:// URL (file:// or a loopback "
                         "http:// for a mirror on this machine)")
    now = time.time() if now is None else now
    copy = cache_root / "catalog-live" / f"{hashlib.sha256(url.encode()).hexdigest()[:32]}.json"
    if fetch:
        watch.unwatchable(f"live catalog {redact_url(url)}")
    else:
        watch.file(copy)
    stored = _stored(copy)
    if stored is not None and (not fetch or now - stored[0] < _ttl()):
        return _parse(stored[1], copy), []
    if not fetch:
        return None, []
    try:
        body = _fetch(url)
        catalog = _parse(body, copy)
    except PmError as exc:
        if stored is not None:
            age = round((now - stored[0]) / 3600, 1)
            return _parse(stored[1], copy), [f"the live catalog {redact_url(url)} could not be read ({exc}); using "
                                             f"the copy fetched {age} h ago"]
        return None, [f"the live catalog {redact_url(url)} could not be read ({exc}) and no copy is kept; using the "
                      "configured catalog alone"]
    _store(copy, now, body)
    return catalog, []


def combined(base: Catalog, live: Catalog | None, notes: list[str]) -> Catalog:
    """``live``'s entries (or ``base``'s when there is no live copy), every kill list unioned."""
    if live is None:
        return replace(base, notes=tuple(notes))
    removed = tuple(dict.fromkeys((*base.removed, *live.removed)))
    return kill_by_repo(Catalog(live.file, live.entries, removed, tuple(notes), reasons=(*base.reasons, *live.reasons),
                                killed_repos=(*base.killed_repos, *live.killed_repos)))


def _ttl() -> float:
    raw = os.environ.get(_TTL_ENV, "")
    try:
        checked = seconds(float(raw)) if raw else TTL
    except ValueError:
        checked = None
    if checked is None:
        raise UsageError(f"{_TTL_ENV}={raw!r}: expected seconds (a finite number, 0 or more)")
    return checked


def _fetch(url: str) -> bytes:
    from pm.index.http import HttpClient

    client = HttpClient(timeout=TIMEOUT / 2, deadline=TIMEOUT)  # a silent first try leaves time for a second
    try:
        return client.get(url, limit=CAP).body
    finally:
        client.close()


def _parse(body: bytes, where: Path) -> Catalog:
    """The catalog in ``body`` (YAML or JSON), validated as a catalog file is."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError.one(where, None, f"is not a catalog: {exc}") from None
    return catalog_from_text(where, text)


def _stored(copy: Path) -> tuple[float, bytes] | None:
    try:
        data = json.loads(copy.read_bytes())
        return float(data["fetched_at"]), str(data["body"]).encode()
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _store(copy: Path, now: float, body: bytes) -> None:
    from pm.base.store import Store

    try:
        Store(copy.parent).write_bytes(copy, json.dumps({"fetched_at": now, "body": body.decode()}).encode())
    except (OSError, PmError):
        pass  # a cache that cannot be written only costs a fetch next time
