"""Reusing a resolution: the same inputs over the same index pages give the same pins.

A successful resolution is stored in the cache (``results-v1``) under a key made of everything
that decides it — the inputs' fingerprint (declarations, selection, core and its lock, target,
index URLs, find-links folders, policies), the preferences (the selected generation's pins) and
what an upgrade frees of them, the candidate, the exact exclude-newer cutoff, the
contents of every find-links folder, and the digest of pm's own code — together with every index page and
find-links page the resolution read, each as (status, sha256 of its body). It is reused only
while each of those pages is unchanged: a page still fresh by its Cache-Control max-age counts
without a request, a stale one is revalidated (one conditional request, in parallel); any
difference, a damaged entry or a missing page means resolving again. Offline, the cached pages
are what there is.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.utils import canonicalize_name
from packaging.version import Version

from pm.base import codekey as _code
from pm.index.base import FileLink, Source
from pm.index.cache import Cache
from pm.inputs.collect import Inputs
from pm.resolver.model import Move, Parent, Pin, Policy, Resolution, Unverified

if TYPE_CHECKING:
    from pm.resolver.provider import Builder
from pm.inputs.union import Origin

#: 2: pins keep the metadata that came by range (unverified), for the build's re-check; 3: as text;
#: 4: the moves of preferred versions (pm.resolver.moves).
_FORMAT = 4


def resolve_reusing(inputs: Inputs, source: Source, policy: Policy, *, key: str, candidate: str | None,
                    builder: Builder | None, cache: Cache) -> tuple[Resolution, bool]:
    """``(resolution, reused)``: the resolution stored under ``key`` (:func:`reuse_key`) when its
    pages are unchanged, else a new one (stored for next time when the source can say which pages
    it read)."""
    found = lookup(cache, key, source)
    if found is not None:
        return found, True
    from pm.resolver.resolve import resolve_union  # loads resolvelib: only when resolving

    resolution = resolve_union(inputs.union, inputs.target, source, policy, candidate=candidate, builder=builder)
    pages = getattr(source, "pages_read", None)
    if callable(pages):
        remember(cache, key, resolution, pages())
    return resolution, False


def fresh_resolution(cache: Cache, key: str, *, offline: bool) -> Resolution | None:
    """The resolution stored under ``key`` when every page it read is still fresh in the cache
    (or, ``offline``, in it at all): no source, no request, no index client loaded. None when any
    page must be asked."""
    stored = _stored(cache, key)
    if stored is None:
        return None
    pages, resolution = stored
    return resolution if cache.pages_current(pages, offline=offline) else None


def reuse_key(inputs: Inputs, candidate: str | None, policy: Policy, cache_root: Path) -> str:
    """Everything a stored resolution answers for, pm's own code included (:mod:`pm.base.codekey`)."""
    blob = [_FORMAT, _code.digest(cache_root), inputs.fingerprint, candidate,
            policy.exclude_newer.isoformat() if policy.exclude_newer else None,
            [_folder_state(folder) for folder in inputs.settings.find_link_folders],
            policy.preferences.key(policy.upgrade)]  # the selected generation's pins, and what an upgrade frees
    return hashlib.sha256(json.dumps(blob, sort_keys=True).encode()).hexdigest()


def _folder_state(folder: Path) -> list[Any]:
    """Each entry of a find-links folder by name, size, inode, modification and change time (one
    scandir and a stat each, no reading). A wheel replaced by another of the same size and
    modification time (``cp -p``, ``rsync -t``) still moves the change time, which no user call
    sets back, or the inode: a stored resolution is never reused over other bytes."""
    try:
        with os.scandir(folder) as entries:
            return sorted([e.name, st.st_size, st.st_ino, st.st_mtime_ns, st.st_ctime_ns]
                          for e in entries for st in (e.stat(),))
    except OSError:
        return [str(folder), "unreadable"]


def lookup(cache: Cache, key: str, source: Source) -> Resolution | None:
    stored = _stored(cache, key)
    if stored is None:
        return None
    pages, resolution = stored
    return resolution if _pages_unchanged(source, pages) else None


def _stored(cache: Cache, key: str) -> tuple[list[tuple[str, int, str]], Resolution] | None:
    entry = _entry(cache.get_result(key))
    if entry is None:
        return None
    try:
        return entry[0], resolution_from_json(entry[1])
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def stored_as(cache: Cache, key: str, resolution: Resolution) -> tuple[list[tuple[str, int, str]], bytes] | None:
    """The pages read for the resolution stored under ``key``, and that entry's bytes, when the
    stored resolution is ``resolution`` (another process may have stored another one since):
    what :mod:`pm.cli.shortcut` remembers an answer by. Compared as the JSON :func:`remember` wrote."""
    data = cache.get_result(key)
    entry = _entry(data)
    if data is None or entry is None or entry[1] != json.loads(json.dumps(resolution_to_json(resolution))):
        return None
    return entry[0], data


def _entry(data: bytes | None) -> tuple[list[tuple[str, int, str]], Any] | None:
    """A results entry's pages, and its resolution as JSON data; None when damaged."""
    if data is None:
        return None
    try:
        stored = json.loads(data)
        return [(str(url), int(status), str(sha)) for url, status, sha in stored["pages"]], stored["resolution"]
    except (ValueError, KeyError, TypeError):
        return None


def remember(cache: Cache, key: str, resolution: Resolution, pages: dict[str, tuple[int, str]]) -> None:
    stored = {"pages": sorted([url, status, sha] for url, (status, sha) in pages.items()),
              "resolution": resolution_to_json(resolution)}
    cache.put_result(key, json.dumps(stored, separators=(",", ":")).encode())


def refusal_key(key: str, kind: str, shown_home: Path | None, *, operator_flags: bool = False) -> str:
    """Where a refusal of the inputs under ``key`` is kept: its next steps name the command and
    ``--home`` it was asked with, so those are part of the key; and whether constraints or
    overrides came from flags (the override step is offered only when they did not)."""
    parts = ["refusal", key, kind, str(shown_home)] + (["operator-flags"] if operator_flags else [])
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def remember_refusal(cache: Cache, key: str, refusal: dict[str, Any], pages: dict[str, tuple[int, str]]) -> None:
    """Store a refusal (its receipt's ``conflict`` and ``next_steps``, remedies checked) with every
    page its resolves read: the same inputs over the same pages are refused the same way."""
    stored = {"pages": sorted([url, status, sha] for url, (status, sha) in pages.items()), "refusal": refusal}
    cache.put_result(key, json.dumps(stored, separators=(",", ":")).encode())


def lookup_refusal(cache: Cache, key: str, source: Source) -> dict[str, Any] | None:
    """The refusal stored under ``key`` (:func:`refusal_key`) while its pages are unchanged."""
    stored = stored_refusal(cache, key)
    if stored is None:
        return None
    pages, refusal, _ = stored
    return refusal if _pages_unchanged(source, pages) else None


def stored_refusal(cache: Cache, key: str) -> tuple[list[tuple[str, int, str]], dict[str, Any], bytes] | None:
    """(pages, refusal, the entry's bytes) stored under ``key``; None when absent or damaged."""
    data = cache.get_result(key)
    if data is None:
        return None
    try:
        stored = json.loads(data)
        refusal = stored["refusal"]
        if not isinstance(refusal, dict) or not isinstance(refusal.get("conflict"), dict):
            return None
        return [(str(u), int(st), str(sha)) for u, st, sha in stored["pages"]], refusal, data
    except (ValueError, KeyError, TypeError):
        return None


#: Threads that revalidate pages for a source that does not say how many may fetch at once.
_REVALIDATE_WORKERS = 16


def _pages_unchanged(source: Source, pages: list[tuple[str, int, str]]) -> bool:
    """Every page as recorded: decided from the cache where it can be, else revalidated (the
    first page alone, then the others on as many threads as the source's ``workers()`` gives)."""
    current = getattr(source, "page_current", None)
    unchanged = getattr(source, "unchanged", None)
    if not callable(current) or not callable(unchanged):
        return not pages
    stale = []
    for page in pages:
        verdict = current(*page)
        if verdict is False:
            return False
        if verdict is None:
            stale.append(page)
    if not stale or not unchanged(*stale[0]):
        return not stale
    rest = stale[1:]
    if len(rest) <= 1:
        return all(unchanged(*page) for page in rest)
    # The first answer told the index's latency; the rest go on as many threads as that is worth
    # (pm.index.concurrency): 16 threads took 30-45 % longer than 2 against a loopback mirror.
    workers = getattr(source, "workers", None)
    count = workers() if callable(workers) else _REVALIDATE_WORKERS
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(count, len(rest)), thread_name_prefix="hermes-pm-reuse") as pool:
        return all(pool.map(lambda page: unchanged(*page), rest))


# -- the stored form of a resolution (every field, so nothing differs from a fresh one) -----------

def _origin(origin: Origin | None) -> list[str | None] | None:
    return None if origin is None else [origin.plugin, origin.file]


def _link_to_json(link: FileLink) -> list[Any]:
    return [link.filename, link.url, link.sha256, link.size, link.requires_python, link.yanked,
            link.upload_time.isoformat() if link.upload_time else None, link.metadata_sha256, link.source]


def _parent_to_json(parent: Parent | None) -> list[Any] | None:
    return None if parent is None else [parent.requirement, _origin(parent.origin), parent.package, parent.locked]


def _parent_from_json(data: list[Any] | None) -> Parent | None:
    if data is None:
        return None
    requirement, origin, package, locked = data
    return Parent(requirement, Origin(*origin) if origin else None, package, bool(locked))


def resolution_to_json(resolution: Resolution) -> dict[str, Any]:
    return {"warnings": list(resolution.warnings), "replaced": [
        [r.override, r.requirement, _origin(r.origin), r.package, r.locked] for r in resolution.replaced], "moves": [
        [m.package, str(m.before), None if m.after is None else str(m.after), m.reason, _parent_to_json(m.because),
         m.detail] for m in resolution.moves], "pins": [
        {"name": pin.name, "version": str(pin.version), "link": _link_to_json(pin.link),
         "extras": sorted(pin.extras), "required_by": [_origin(o) for o in pin.required_by],
         "parents": [_parent_to_json(p) for p in pin.parents],
         "dependencies": list(pin.dependencies), "unverified": _unverified_to_json(pin.unverified)}
        for pin in resolution.pins]}


def _unverified_to_json(unverified: Unverified | None) -> list[Any] | None:
    """What the build re-checks of metadata read by range (:mod:`pm.records.recheck`), else None."""
    return None if unverified is None else [list(unverified.requires_dist), unverified.requires_python]


def _unverified_from_json(data: list[Any] | None) -> Unverified | None:
    return None if data is None else Unverified(tuple(str(r) for r in data[0]), str(data[1]))


def resolution_from_json(data: dict[str, Any]) -> Resolution:
    pins = []
    for item in data["pins"]:
        filename, url, sha256, size, requires_python, yanked, uploaded, metadata_sha256, label = item["link"]
        link = FileLink(filename, url, sha256, size, requires_python, yanked,
                        datetime.fromisoformat(uploaded) if uploaded else None, metadata_sha256, label)
        pin = Pin(
            name=canonicalize_name(item["name"]), version=Version(item["version"]), link=link,
            extras=frozenset(canonicalize_name(e) for e in item["extras"]),
            required_by=tuple(Origin(plugin, file) for plugin, file in item["required_by"]),
            parents=tuple(p for p in map(_parent_from_json, item["parents"]) if p is not None),
            dependencies=tuple(canonicalize_name(d) for d in item["dependencies"]),
        )
        pins.append(replace(pin, unverified=_unverified_from_json(item.get("unverified"))))
    moves = tuple(Move(canonicalize_name(package), Version(before), None if after is None else Version(after),
                       str(reason), _parent_from_json(because), detail)
                  for package, before, after, reason, because, detail in data["moves"])
    return Resolution(tuple(pins), tuple(str(w) for w in data["warnings"]), _replaced_from_json(data.get("replaced")),
                      moves)


def _replaced_from_json(data: list[Any] | None) -> tuple[Any, ...]:
    """What the overrides replaced (:class:`pm.resolver.imposing.Replacement`, loaded only when
    there is any: a reused resolution loads nothing of the resolver but its model)."""
    if not data:
        return ()
    from pm.resolver.imposing import Replacement

    return tuple(Replacement(str(override), str(requirement), Origin(*origin) if origin else None, package, bool(locked))
                 for override, requirement, origin, package, locked in data)
