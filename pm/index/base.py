"""The source interface: how the resolver sees packages, whatever holds them.

A *source* answers two questions: which distribution files exist for a project (``links``), and
what a file's core metadata says (``metadata``). The same resolver runs over a simple index over
HTTP, a ``--find-links`` folder, the installed distributions of an environment, or an in-memory
fake. Sources do I/O; the resolver core never does.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.tags import Tag
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    NormalizedName,
    canonicalize_name,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from pm.base.errors import PmError


class IndexFailure(PmError):
    """Fetching from a source failed (network, HTTP status, timeout, hash mismatch, bad data).

    Never a verdict about the requirements: a resolution that meets one fails with exit 1.
    """

    kind = "index"

    def __init__(self, url: str, detail: str) -> None:
        self.url = url
        self.detail = detail
        super().__init__(f"{url}: {detail}")


class MetadataUnavailable(IndexFailure):
    """An sdist whose dependencies are only known by building it.

    Raised by ``metadata()`` for an sdist unless its PKG-INFO is Metadata-Version >= 2.2 and
    marks none of Requires-Dist / Requires-Python / Provides-Extra as ``Dynamic`` (PEP 643).
    Still an :class:`IndexFailure` (exit 1), so a caller that does not build sdists fails
    cleanly; a caller that does (``pm.allow_builds``) catches it and builds.
    """


class LookAheadSkipped(IndexFailure):
    """A look-ahead fetch declined to download a whole file over a size bound (its server would
    not answer byte ranges). Never a verdict: the resolver's own ``metadata()`` call fetches it."""


_AHEAD = threading.local()


@contextmanager
def looking_ahead() -> Iterator[None]:
    """Marks the fetches made on this thread inside the block as look-ahead (background guesses):
    a source may then refuse costly ones with :class:`LookAheadSkipped`."""
    before = getattr(_AHEAD, "on", False)
    _AHEAD.on = True
    try:
        yield
    finally:
        _AHEAD.on = before


def is_looking_ahead() -> bool:
    """Whether this thread is inside :func:`looking_ahead`."""
    return bool(getattr(_AHEAD, "on", False))


#: The source distribution endings uv reads (its ``SourceDistExtension``): PEP 625's ``.tar.gz``
#: and ``.zip``, and the legacy tar spellings. ``.egg``, ``.exe``, ``.msi`` and ``.rpm`` files are
#: no distribution either reads.
SDIST_ENDINGS = (".tar.gz", ".zip", ".tar.bz2", ".tar.xz", ".tar.zst", ".tar.lz", ".tar.lzma", ".tgz", ".tbz",
                 ".txz", ".tlz", ".tar")
_NAME = re.compile(r"[a-z0-9]([a-z0-9._-]*[a-z0-9])?", re.IGNORECASE)


def split_sdist(filename: str) -> tuple[str, str] | None:
    """(name, version) texts of a source distribution's file name, as uv reads them; None when
    it is none. The version is what follows the last ``-`` when that is a PEP 440 version (the
    normalized form); else, for a legacy name whose version holds a ``-`` (``pybbox-0.0.5-alpha.zip``
    is pybbox 0.0.5a0), the one split whose two sides are a project name and a version — none
    when two splits would do (``a-1-1.zip``: a 1.post1, or a-1 1, told apart only by the page's
    project name). The version text is returned as written (PEP 440 normalizes it when parsed)."""
    ending = next((e for e in SDIST_ENDINGS if filename.endswith(e)), None)
    if ending is None:
        return None
    stem = filename[: -len(ending)]
    name, dash, version = stem.rpartition("-")
    if dash and _NAME.fullmatch(name) and _is_version(version):
        return name, version
    splits = [(stem[:i], stem[i + 1:]) for i, c in enumerate(stem) if c == "-" and i < len(name)]
    found = [(n, v) for n, v in splits if _NAME.fullmatch(n) and _is_version(v)]
    return found[0] if len(found) == 1 else None


@functools.lru_cache(maxsize=65536)
def _is_version(text: str) -> bool:
    try:
        Version(text)
    except InvalidVersion:
        return False
    return True


@dataclass(frozen=True)
class FileLink:
    """One distribution file a source offers.

    ``url`` is where to get it (``https://``, ``http://`` or ``file://``); ``sha256`` the hash the
    source vouches for (None when it gives none); ``metadata_sha256`` the hash of a PEP 658/714
    metadata file next to it, when the source serves one (``""`` when served without a hash).
    """

    filename: str
    url: str
    sha256: str | None = None
    size: int | None = None
    requires_python: str | None = None
    yanked: str | None = None  # None = not yanked; else the reason ("" when none was given)
    upload_time: datetime | None = None
    metadata_sha256: str | None = None
    source: str = ""  # a label of the source that offered it (its URL or folder)

    # Derived from the filename, once.
    name: NormalizedName = field(init=False, compare=False)
    version: Version = field(init=False, compare=False)
    tags: frozenset[Tag] = field(init=False, compare=False)
    is_wheel: bool = field(init=False, compare=False)

    def __post_init__(self) -> None:
        if self.filename.endswith(".whl"):
            name, version, _, tags = parse_wheel_filename(self.filename)
            is_wheel = True
        else:
            parts = split_sdist(self.filename)
            if parts is None:
                raise InvalidSdistFilename(f"not a source distribution file name: {self.filename!r}")
            name, version = canonicalize_name(parts[0]), Version(parts[1])
            tags, is_wheel = frozenset(), False
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "version", version)
        object.__setattr__(self, "tags", frozenset(tags))
        object.__setattr__(self, "is_wheel", is_wheel)

    @property
    def is_yanked(self) -> bool:
        return self.yanked is not None

    @classmethod
    def parse(cls, filename: str, url: str, **fields: object) -> "FileLink | None":
        """A FileLink, or None for a file that is neither a wheel nor an sdist we can name."""
        try:
            return cls(filename, url, **fields)  # type: ignore[arg-type]
        except (InvalidWheelFilename, InvalidSdistFilename, ValueError):
            return None


@dataclass(frozen=True)
class Metadata:
    """The parts of a distribution's core metadata the resolver needs."""

    name: NormalizedName
    version: Version
    requires_dist: tuple[Requirement, ...] = ()
    requires_python: SpecifierSet | None = None
    provides_extra: frozenset[NormalizedName] = frozenset()
    #: True when no hash vouches for these bytes (read by HTTP range requests out of the wheel):
    #: the build then checks the installed wheel's metadata against it.
    unverified: bool = field(default=False, compare=False)


class Source(Protocol):
    """What the resolver needs from wherever packages live.

    Implementations MUST be safe to call from several threads, MUST raise :class:`IndexFailure`
    (naming the URL) for any fetch problem, and SHOULD make ``prefetch*`` cheap and non-blocking so
    that resolver callbacks rarely wait on the network one request at a time.
    """

    def links(self, name: NormalizedName) -> Sequence[FileLink]:
        """Every file of project ``name`` (an empty sequence when the project does not exist)."""
        ...

    def metadata(self, link: FileLink) -> Metadata:
        """The core metadata of one file, verified against the hash the source gave."""
        ...

    def prefetch(self, names: Iterable[NormalizedName]) -> None:
        """Start fetching these projects' file lists in the background."""
        ...

    def prefetch_metadata(self, links: Iterable[FileLink]) -> None:
        """Start fetching these files' metadata in the background."""
        ...
