"""A project's files as one source offers them, grouped by version and turned into
:class:`~pm.index.base.FileLink` objects only for the versions the resolver looks at.

A page of a big project lists thousands of files (every platform tag of every release) of which a
resolution uses one. So a page is first reduced to a :class:`Digest`: what the page means for one
target — for every version, the files that could be installed there (sdists, and wheels with a tag
the target supports) — as plain data that caches as JSON and loads in milliseconds. A version
whose files all miss the target keeps a few of them as a sample, so an explanation can still say
which tags it has. Building a FileLink (URL joining, wheel-name parsing, Requires-Python and date
parsing) happens in :meth:`Project.files`, once per version asked for.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypeVar
from urllib.parse import urldefrag, urljoin

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import NormalizedName
from packaging.version import InvalidVersion, Version

from pm.index.base import FileLink, split_sdist

#: Bump when the digest's shape or meaning changes: old cache entries are then simply not found.
DIGEST_FORMAT = 2  # 2: legacy sdist names read (pm.index.base.split_sdist)
#: Files kept per version whose files all miss the target (for explanations only).
_SAMPLE = 3

#: One file of a page as plain data:
#: (filename, url, sha256, size, requires_python, yanked, upload_time, metadata_sha256).
#: ``url`` may be relative to the page until the digest resolves it.
Entry = tuple[str, str, str | None, int | None, str | None, str | None, str | None, str | None]
R = TypeVar("R")


def version_text(filename: str) -> str | None:
    """The version part of a wheel or sdist file name (None: neither); a wheel's is not validated
    here, an sdist's is (see :func:`~pm.index.base.split_sdist`)."""
    if filename.endswith(".whl"):
        parts = filename[:-4].split("-")
        return parts[1] if len(parts) in (5, 6) else None
    sdist = split_sdist(filename)
    return None if sdist is None else sdist[1]


def wheel_fits(filename: str, tags: frozenset[str], known: dict[str, bool] | None = None) -> bool:
    """Whether a wheel's (possibly compressed) tag triple names a tag in ``tags``; ``known``
    remembers verdicts per triple (a big page repeats a few dozen triples thousands of times)."""
    parts = filename[:-4].split("-")
    if len(parts) < 5:
        return False
    triple = "-".join(parts[-3:])
    if known is not None and (verdict := known.get(triple)) is not None:
        return verdict
    interpreters, abis, platforms = parts[-3].split("."), parts[-2].split("."), parts[-1].split(".")
    verdict = any(f"{i}-{a}-{p}" in tags for i in interpreters for a in abis for p in platforms)
    if known is not None:
        known[triple] = verdict
    return verdict


def _placed(filename: str, tags: frozenset[str] | None,
            known: dict[tuple[str, ...], bool]) -> tuple[str, bool] | None:
    """(version text, whether it fits ``tags``) of a wheel or sdist name (None: neither): what
    :func:`version_text` and :func:`wheel_fits` say, from one split of the name, with verdicts
    remembered per tag triple in ``known`` (a big page repeats a few dozen triples)."""
    if not filename.endswith(".whl"):
        text = version_text(filename)
        return None if text is None else (text, True)
    parts = filename.split("-")  # the last part keeps ".whl": only the verdict below drops it
    if len(parts) not in (5, 6):
        return None
    if tags is None:
        return parts[1], True
    triple = (parts[-3], parts[-2], parts[-1])
    verdict = known.get(triple)
    if verdict is None:
        verdict = known[triple] = any(f"{i}-{a}-{p}" in tags for i in triple[0].split(".")
                                      for a in triple[1].split(".") for p in triple[2][:-4].split("."))
    return parts[1], verdict


def tags_key(tags: Iterable[str] | None) -> str:
    """A short key for a set of supported tags (``"any"`` when nothing is filtered)."""
    if tags is None:
        return "any"
    return hashlib.sha256("\n".join(sorted(set(tags))).encode()).hexdigest()[:24]


@dataclass(frozen=True)
class Digest:
    """A page for one target: ``(version text, usable entries, sample of unusable)``, newest first."""

    versions: tuple[tuple[str, tuple[Entry, ...], tuple[Entry, ...]], ...]

    def to_bytes(self) -> bytes:
        return json.dumps({"format": DIGEST_FORMAT, "versions": self.versions},
                          separators=(",", ":")).encode()

    @classmethod
    def from_bytes(cls, data: bytes) -> Digest:
        """Raises ValueError for anything that is not a digest of this format."""
        try:
            loaded = json.loads(data)
            if loaded.get("format") != DIGEST_FORMAT:
                raise ValueError("other digest format")
            versions = tuple((str(v), tuple(map(_entry, kept)), tuple(map(_entry, sample)))
                             for v, kept, sample in loaded["versions"])
        except (TypeError, KeyError, AttributeError) as exc:
            raise ValueError(f"not a page digest: {exc}") from None
        return cls(versions)

    @classmethod
    def build(cls, entries: Iterable[Entry], page_url: str, tags: frozenset[str] | None) -> Digest:
        """Group ``entries`` by version (from their names), keep what fits ``tags`` (all when None),
        resolve URLs against ``page_url`` for what is kept. Unnamed files are dropped."""
        return cls.build_from(((entry[0], entry) for entry in entries), _same, page_url, tags)

    @classmethod
    def build_from(cls, named: Iterable[tuple[str, R]], entry_of: Callable[[R], Entry], page_url: str,
                   tags: frozenset[str] | None) -> Digest:
        """:meth:`build` over ``(file name, raw record)`` pairs: ``entry_of`` runs only for the files
        kept (on a big page, a few of thousands)."""
        groups: dict[str, tuple[list[Entry], list[Entry]]] = {}
        known: dict[tuple[str, ...], bool] = {}
        for filename, raw in named:
            placed = _placed(filename, tags, known)
            if placed is None:
                continue
            group = groups.get(placed[0])
            if group is None:
                group = groups[placed[0]] = ([], [])
            if placed[1]:
                group[0].append(absolute(entry_of(raw), page_url))
            elif not group[0] and len(group[1]) < _SAMPLE:  # a sample only while nothing fits
                group[1].append(absolute(entry_of(raw), page_url))
        ordered = sorted(((v, text) for text in groups if (v := _version(text)) is not None), reverse=True)
        return cls(tuple((text, tuple(groups[text][0]), () if groups[text][0] else tuple(groups[text][1]))
                         for _, text in ordered))


def _same(entry: Entry) -> Entry:
    return entry


def _entry(item: Sequence[object]) -> Entry:
    if not isinstance(item, list) or len(item) != 8 or not isinstance(item[0], str) or not isinstance(item[1], str):
        raise TypeError("bad entry")
    return tuple(item)  # type: ignore[return-value]


def absolute(entry: Entry, page_url: str) -> Entry:
    """``entry`` with its URL resolved against the page (fragment dropped)."""
    url = entry[1]
    if url.startswith(("https://", "http://")) and "#" not in url and "/." not in url:
        return entry  # already absolute and clean: urljoin would return it unchanged
    return (entry[0], urldefrag(urljoin(page_url, entry[1]))[0], *entry[2:])  # type: ignore[return-value]


@functools.lru_cache(maxsize=65536)
def _version(text: str) -> Version | None:
    """A version text parsed (None: not PEP 440), remembered: a page's versions are parsed to
    order its digest and again to build its project."""
    try:
        return Version(text)
    except InvalidVersion:
        return None


class Project:
    """The files of one project in one source (or several, merged), by version, newest first.

    Contract: ``versions`` is cheap (parsed version strings); :meth:`files` builds the FileLinks of
    one version on first use and remembers them. Safe to share between threads (a race only
    builds the same tuple twice).
    """

    def __init__(self, name: NormalizedName, versions: Sequence[Version],
                 files_of: Callable[[Version], tuple[FileLink, ...]]) -> None:
        self.name = name
        self.versions = tuple(versions)
        self._files_of = files_of
        self._files: dict[Version, tuple[FileLink, ...]] = {}

    def files(self, version: Version) -> tuple[FileLink, ...]:
        """Every file of ``version`` (usable on the target or not; see the module docstring)."""
        found = self._files.get(version)
        if found is None:
            found = self._files[version] = self._files_of(version)
        return found

    def all_files(self) -> tuple[FileLink, ...]:
        """Every file of every version (builds them all: for explanations and small sources)."""
        return tuple(link for version in self.versions for link in self.files(version))

    def __bool__(self) -> bool:
        return bool(self.versions)

    @classmethod
    def from_links(cls, name: NormalizedName, links: Iterable[FileLink]) -> Project:
        by_version: dict[Version, list[FileLink]] = {}
        for link in links:
            by_version.setdefault(link.version, []).append(link)
        ordered = sorted(by_version, reverse=True)
        return cls(name, ordered, lambda version: tuple(by_version.get(version, ())))

    @classmethod
    def from_digest(cls, name: NormalizedName, digest: Digest, source: str) -> Project:
        """FileLinks labelled with ``source``; versions that differ only in spelling merge."""
        by_version: dict[Version, list[tuple[Entry, ...]]] = {}
        for text, kept, sample in digest.versions:
            if (version := _version(text)) is not None:
                by_version.setdefault(version, []).append(kept + sample)

        def files_of(version: Version) -> tuple[FileLink, ...]:
            built = (link_of(entry, source) for group in by_version.get(version, ()) for entry in group)
            return tuple(link for link in built if link is not None)

        return cls(name, sorted(by_version, reverse=True), files_of)

    @classmethod
    def merged(cls, name: NormalizedName, projects: Sequence[Project]) -> Project:
        """Several sources' files as one: the first source wins for a file name offered twice."""
        if len(projects) == 1:
            return projects[0]
        versions = sorted({v for p in projects for v in p.versions}, reverse=True)

        def files_of(version: Version) -> tuple[FileLink, ...]:
            seen: set[str] = set()
            merged = []
            for project in projects:
                for link in project.files(version) if version in project.versions else ():
                    if link.filename not in seen:
                        seen.add(link.filename)
                        merged.append(link)
            return tuple(merged)

        return cls(name, versions, files_of)


def link_of(entry: Entry, source: str) -> FileLink | None:
    """The FileLink of an entry with an absolute URL (None: not a wheel or sdist name)."""
    filename, url, sha256, size, requires_python, yanked, upload_time, metadata_sha256 = entry
    return FileLink.parse(
        filename, url, sha256=sha256, size=size, requires_python=_specifier_or_none(requires_python),
        yanked=yanked, upload_time=_upload_time(upload_time), metadata_sha256=metadata_sha256,
        source=source)


_SPECIFIERS: dict[str, str | None] = {}


def _specifier_or_none(value: object) -> str | None:
    """An index's Requires-Python when it parses; an unparsable one is dropped (as pip does): the
    file's own metadata still carries its Requires-Python, which the resolver checks."""
    if not isinstance(value, str) or not value.strip():
        return None
    if value not in _SPECIFIERS:
        try:
            SpecifierSet(value)
            _SPECIFIERS[value] = value.strip()
        except InvalidSpecifier:
            _SPECIFIERS[value] = None
    return _SPECIFIERS[value]


def _upload_time(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
