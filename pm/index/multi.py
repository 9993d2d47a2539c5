"""Several sources seen as one: indexes and find-links folders together.

Links are merged in source order (the first source's files first); a file whose *filename* was
already offered by an earlier source is dropped, so the earlier source wins for that exact file.
``metadata`` goes to the source that offered the link; prefetches fan out to every source.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence

from packaging.utils import NormalizedName, canonicalize_name

from .base import FileLink, IndexFailure, Metadata, Source


class MultiSource:
    """Merges ``sources`` (a sequence of :class:`Source`; may be empty: nothing exists).

    Contract: thread-safe; ``links`` asks every source (after starting all of their fetches, so
    indexes answer in parallel) and fails with the first source's :class:`IndexFailure`, so a dead
    index is never mistaken for a missing project. Cost: one ``links`` per source.
    """

    def __init__(self, sources: Sequence[Source]) -> None:
        self.sources = tuple(sources)
        self._lock = threading.Lock()
        self._owners: dict[FileLink, Source] = {}

    def __enter__(self) -> MultiSource:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close every source that can be closed."""
        for source in self.sources:
            close = getattr(source, "close", None)
            if callable(close):
                close()

    def links(self, name: NormalizedName) -> tuple[FileLink, ...]:
        key = canonicalize_name(name)
        if len(self.sources) > 1:
            for source in self.sources:
                source.prefetch([key])
        merged: list[FileLink] = []
        seen: set[str] = set()
        owners: dict[FileLink, Source] = {}
        for source in self.sources:
            for link in source.links(key):
                if link.filename not in seen:
                    seen.add(link.filename)
                    merged.append(link)
                    owners[link] = source
        with self._lock:
            self._owners.update(owners)
        return tuple(merged)

    def metadata(self, link: FileLink) -> Metadata:
        with self._lock:
            owner = self._owners.get(link)
        if owner is None:
            labelled = (s for s in self.sources if getattr(s, "label", None) == link.source)
            owner = next(labelled, None)
        if owner is None:
            raise IndexFailure(link.url, "no configured source offered this file")
        return owner.metadata(link)

    def prefetch(self, names: Iterable[NormalizedName]) -> None:
        names = list(names)
        for source in self.sources:
            source.prefetch(names)

    def prefetch_metadata(self, links: Iterable[FileLink]) -> None:
        by_owner: dict[int, tuple[Source, list[FileLink]]] = {}
        with self._lock:
            for link in links:
                owner = self._owners.get(link)
                if owner is not None:
                    by_owner.setdefault(id(owner), (owner, []))[1].append(link)
        for owner, owned in by_owner.values():
            owner.prefetch_metadata(owned)
