"""Several sources seen as one: indexes, find-links folders and find-links pages together.

Files are merged in source order (the first source's files first); a file whose *filename* was
already offered by an earlier source is dropped, so the earlier source wins for that exact file.
Of several indexes only the first that has a project supplies it (:func:`first_index`).
``metadata`` goes to the source that offered the link (by its label); prefetches fan out to
every source.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence

from packaging.utils import NormalizedName, canonicalize_name

from pm.index.base import FileLink, IndexFailure, Metadata, Source
from pm.index.project import Project


def project_of(source: Source, name: NormalizedName) -> Project:
    """``source.project(name)`` when the source groups its own files, else built from its links."""
    project = getattr(source, "project", None)
    if callable(project):
        found: Project = project(name)
        return found
    return Project.from_links(name, source.links(name))


def first_index(sources: Sequence[Source], projects: Sequence[Project]) -> list[Project]:
    """uv's first-index rule: of the indexes (sources with an ``index_url``), only the first whose
    page lists the project counts, so a later (public) index never supplies a name an earlier
    (private) one has — the dependency-confusion attack. Find-links folders always count."""
    kept: list[Project] = []
    taken = False
    for source, project in zip(sources, projects, strict=True):
        if hasattr(source, "index_url"):
            if taken or not project.versions:
                continue
            taken = True
        kept.append(project)
    return kept or list(projects[:1])


class MultiSource:
    """Merges ``sources`` (a sequence of :class:`Source`; may be empty: nothing exists).

    Contract: thread-safe; ``project`` asks every source (after starting all of their fetches, so
    indexes answer in parallel), merges once per name and remembers it, and fails with the first
    source's :class:`IndexFailure`, so a dead index is never mistaken for a missing project.
    """

    def __init__(self, sources: Sequence[Source]) -> None:
        self.sources = tuple(sources)
        self._lock = threading.Lock()
        self._projects: dict[NormalizedName, Project] = {}
        self._by_label = {getattr(s, "label", None): s for s in reversed(self.sources)}

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

    def project(self, name: NormalizedName) -> Project:
        key = canonicalize_name(name)
        with self._lock:
            found = self._projects.get(key)
        if found is not None:
            return found
        if len(self.sources) > 1:
            for source in self.sources:
                source.prefetch([key])
        merged = Project.merged(key, first_index(self.sources, [project_of(source, key) for source in self.sources])) \
            if self.sources else Project(key, (), lambda version: ())
        with self._lock:
            return self._projects.setdefault(key, merged)

    def links(self, name: NormalizedName) -> tuple[FileLink, ...]:
        return self.project(name).all_files()

    def workers(self) -> int:
        """How many threads may usefully fetch at once: the most any index allows now (see
        :meth:`SimpleIndexSource.workers`); else ``$HERMES_PM_FETCH_WORKERS``, else one per core."""
        found = [workers() for s in self.sources if callable(workers := getattr(s, "workers", None))]
        if found:
            return max(found)
        from pm.index.concurrency import cpu_count, workers_setting

        return workers_setting() or cpu_count()

    def metadata(self, link: FileLink) -> Metadata:
        owner = self._by_label.get(link.source)
        if owner is None:
            raise IndexFailure(link.url, "no configured source offered this file")
        return owner.metadata(link)

    def prefetch(self, names: Iterable[NormalizedName]) -> None:
        names = list(names)
        for source in self.sources:
            source.prefetch(names)

    def prefetch_metadata(self, links: Iterable[FileLink]) -> None:
        by_owner: dict[int, tuple[Source, list[FileLink]]] = {}
        for link in links:
            owner = self._by_label.get(link.source)
            if owner is not None:
                by_owner.setdefault(id(owner), (owner, []))[1].append(link)
        for owner, owned in by_owner.values():
            owner.prefetch_metadata(owned)

    def hashed(self, link: FileLink) -> FileLink:
        """``link`` with a sha256: its own, else from the source that offered it when that source
        can hash files (a find-links page without hashes: see :mod:`pm.index.linkpage`)."""
        owner = self._by_label.get(link.source)
        hashed = getattr(owner, "hashed", None)
        return link if link.sha256 or not callable(hashed) else hashed(link)

    def _page_owner(self, url: str) -> Source | None:
        for source in self.sources:
            if getattr(source, "page_url", None) == url:  # a find-links page owns its one page
                return source
        owners = [s for s in self.sources if url.startswith(getattr(s, "index_url", "\0"))]
        return max(owners, key=lambda s: len(getattr(s, "index_url")), default=None)

    def page_current(self, url: str, status: int, body_sha256: str) -> bool | None:
        """See :meth:`SimpleIndexSource.page_current`; False for a page no configured index serves."""
        owner = self._page_owner(url)
        return False if owner is None else owner.page_current(url, status, body_sha256)  # type: ignore[attr-defined]

    def unchanged(self, url: str, status: int, body_sha256: str) -> bool:
        owner = self._page_owner(url)
        return owner is not None and owner.unchanged(url, status, body_sha256)  # type: ignore[attr-defined]

    def pages_read(self) -> dict[str, tuple[int, str]]:
        """Every index page read so far, URL -> (status, body sha256), across sources."""
        found: dict[str, tuple[int, str]] = {}
        for source in self.sources:
            found.update(getattr(source, "pages_read", {}))
        return found
