"""The on-disk metadata cache, shared by every home of a user (and by concurrent processes).

Layout under the cache root (``$HERMES_PM_CACHE_DIR``, else ``$XDG_CACHE_HOME/hermes-pm``, else
``~/.cache/hermes-pm``)::

    pages-v2/<ab>/<sha256 of the page URL>     a project page's header: validators, freshness and
                                               the sha256 of its body (small; rewritten on revalidation)
    bodies-v1/<ab>/<sha256 of the body>        a page body, immutable (written once, verified on read)
    digests-v1/<ab>/<key>                      what a body means for one target (pm.index.project)
    metadata-v1/<ab>/<sha256 of the content>   a core metadata file, immutable, verified on read
    files-v1/<ab>/<sha256 of a wheel/sdist>    text: the sha256 of that file's core metadata
    ranges-v1/<ab>/<sha256 of a wheel>         the same, for metadata read by range requests:
                                               no hash vouched for it (the build re-checks it)
    results-v1/<ab>/<key>                      a reusable resolution (pm.records.reuse)
    targets-v1/<ab>/<key>                      an interpreter's tags and markers (pm.inputs.target)
    code-v1/<signature of pm's files>          the digest of pm's own code (pm.base.codekey), which every
                                               digest, result, target and shortcut key includes

Every write goes to a temporary file in the destination folder, then ``os.replace``: a reader
sees the old entry or the new one, never a partial one, whatever other processes do. A cache
that cannot be written (read-only disk, permissions) is skipped silently: it only costs speed.
Entries that fail to parse or verify count as misses.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from pm.base.atomic import replace_with
from pm.base.cachedir import default_cache_dir

_PAGES, _BODIES, _DIGESTS = "pages-v2", "bodies-v1", "digests-v1"
_METADATA, _FILES, _RESULTS, _TARGETS = "metadata-v1", "files-v1", "results-v1", "targets-v1"
_RANGES = "ranges-v1"


def max_age(cache_control: str | None) -> int:
    """Seconds a page may be used without revalidation (0 for ``no-cache``/``no-store``/absent)."""
    seconds = 0
    for directive in (cache_control or "").lower().split(","):
        key, _, value = directive.strip().partition("=")
        if key in ("no-cache", "no-store"):
            return 0
        if key == "max-age":
            try:
                seconds = max(0, int(value.strip().strip('"')))
            except ValueError:
                return 0
    return seconds


@dataclass(frozen=True)
class PageHeader:
    """What is known of a project page without its body: where it ended, how to revalidate it,
    how long it stays fresh, and the sha256 of its body (``status`` 200, or 404 for a project
    that does not exist, remembered too for offline use)."""

    url: str
    final_url: str
    status: int
    content_type: str
    body_sha256: str
    etag: str | None = None
    last_modified: str | None = None
    max_age: int = 0
    fetched_at: float = 0.0

    def is_fresh(self, now: float | None = None) -> bool:
        """Whether Cache-Control max-age still covers this copy (never when max-age is 0)."""
        now = time.time() if now is None else now
        return self.max_age > 0 and 0 <= now - self.fetched_at < self.max_age

    def revalidated(self, headers: Mapping[str, str], now: float | None = None) -> PageHeader:
        """This copy after a 304: same body, refreshed validators, max-age and fetch time."""
        return replace(
            self,
            etag=headers.get("etag", self.etag),
            last_modified=headers.get("last-modified", self.last_modified),
            max_age=max_age(headers.get("cache-control")) if "cache-control" in headers
            else self.max_age,
            fetched_at=time.time() if now is None else now,
        )

    def same_as(self, other: PageHeader | None) -> bool:
        """Whether storing ``self`` over ``other`` would change nothing that matters (a copy that
        is never fresh gains nothing from a newer fetch time)."""
        return other is not None and self.max_age == 0 and replace(self, fetched_at=other.fetched_at) == other


@dataclass(frozen=True)
class CachedPage:
    """A project page as fetched: its header fields plus the body."""

    url: str
    final_url: str
    status: int
    content_type: str
    body: bytes
    etag: str | None = None
    last_modified: str | None = None
    max_age: int = 0
    fetched_at: float = 0.0

    def is_fresh(self, now: float | None = None) -> bool:
        return self.header().is_fresh(now)

    def revalidated(self, headers: Mapping[str, str], now: float | None = None) -> CachedPage:
        """This copy after a 304: same body, refreshed validators, max-age and fetch time."""
        return self.with_header(self.header().revalidated(headers, now), self.body)

    def header(self) -> PageHeader:
        fields = {k: v for k, v in asdict(self).items() if k != "body"}
        return PageHeader(body_sha256=_digest(self.body), **fields)

    @classmethod
    def with_header(cls, header: PageHeader, body: bytes) -> CachedPage:
        fields = {k: v for k, v in asdict(header).items() if k != "body_sha256"}
        return cls(body=body, **fields)


def _digest(text: str | bytes) -> str:
    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()


def _is_sha256(text: str) -> bool:
    return len(text) == 64 and all(c in "0123456789abcdef" for c in text)


class Cache:
    """The cache at ``root`` (created on first write). Thread- and process-safe; no locks.

    Costs: one small file read per lookup, one write + rename per store. Nothing is ever evicted
    here; deleting the folder is always safe.
    """

    def __init__(self, root: Path | str | None = None) -> None:
        self.root = Path(root) if root is not None else default_cache_dir()

    def _path(self, kind: str, key: str) -> Path:
        return self.root / kind / key[:2] / key

    # -- project pages ----------------------------------------------------------------------------

    def get_header(self, url: str) -> PageHeader | None:
        """The stored header of the page at ``url``, or None (absent or unreadable)."""
        data = self._read(self._path(_PAGES, _digest(url)))
        return None if data is None else self._parse_header(data, url)

    @staticmethod
    def _parse_header(data: bytes, url: str) -> PageHeader | None:
        try:
            fields = json.loads(data)
            header = PageHeader(**fields) if isinstance(fields, dict) else None
        except (ValueError, TypeError):
            return None
        return header if header is not None and header.url == url else None

    def pages_current(self, pages: list[tuple[str, int, str]], *, offline: bool = False) -> bool:
        """Whether every page ``(url, status, body sha256)`` is stored as recorded and, unless
        ``offline``, still fresh by its max-age: then none of them needs asking for."""
        for url, status, sha in pages:
            header = self.get_header(url)
            if header is None or (header.status, header.body_sha256) != (status, sha):
                return False
            if not (offline or header.is_fresh()):
                return False
        return True

    def page_proofs(self, pages: list[tuple[str, int, str]]) -> list[tuple[str, str, PageHeader]] | None:
        """What tells, later and without this module, that :meth:`pages_current` still holds: for
        each page ``(url, status, body sha256)``, its header file, the sha256 of that file's bytes,
        and the header those bytes hold. While the file keeps those bytes, the page is stored as
        recorded, and fresh while that header :meth:`~PageHeader.is_fresh`. None when a page is not
        stored as recorded."""
        proofs = []
        for url, status, sha in pages:
            path = self._path(_PAGES, _digest(url))
            data = self._read(path)
            header = None if data is None else self._parse_header(data, url)
            if header is None or data is None or (header.status, header.body_sha256) != (status, sha):
                return None
            proofs.append((str(path), _digest(data), header))
        return proofs

    def put_header(self, header: PageHeader) -> None:
        self._write(self._path(_PAGES, _digest(header.url)),
                    json.dumps(asdict(header), separators=(",", ":")).encode())

    def get_body(self, sha256: str) -> bytes | None:
        """The page body whose content hashes to ``sha256``; verified, else None."""
        if not _is_sha256(sha256):
            return None
        data = self._read(self._path(_BODIES, sha256))
        return data if data is not None and _digest(data) == sha256 else None

    def put_body(self, body: bytes, sha256: str | None = None) -> str:
        """Store a page body under its own sha256 (once); returns that hash. ``sha256``: the
        caller's hash of ``body``, not computed again (a wrong one only makes a miss: reads check)."""
        sha256 = sha256 or _digest(body)
        path = self._path(_BODIES, sha256)
        if not path.exists():
            self._write(path, body)
        return sha256

    def get_page(self, url: str) -> CachedPage | None:
        """The stored page for ``url`` with its body, or None (absent, unreadable, body lost)."""
        header = self.get_header(url)
        if header is None:
            return None
        body = self.get_body(header.body_sha256)
        return None if body is None else CachedPage.with_header(header, body)

    def put_page(self, page: CachedPage) -> None:
        """Body first, then the header naming it: a reader never finds a header without its body."""
        self.put_body(page.body)
        self.put_header(page.header())

    # -- derived data, keyed by the caller: page digests, reusable results, interpreter facts ------

    def get_digest(self, key: str) -> bytes | None:
        return self._get_derived(_DIGESTS, key)

    def put_digest(self, key: str, data: bytes) -> None:
        self._put_derived(_DIGESTS, key, data)

    def get_result(self, key: str) -> bytes | None:
        return self._get_derived(_RESULTS, key)

    def result_file(self, key: str) -> Path:
        """Where the resolution stored under ``key`` is (for :mod:`pm.base.watch`)."""
        return self._path(_RESULTS, key)

    def put_result(self, key: str, data: bytes) -> None:
        self._put_derived(_RESULTS, key, data)

    def get_target(self, key: str) -> bytes | None:
        return self._get_derived(_TARGETS, key)

    def put_target(self, key: str, data: bytes) -> None:
        self._put_derived(_TARGETS, key, data)

    def _get_derived(self, kind: str, key: str) -> bytes | None:
        return self._read(self._path(kind, key)) if _is_sha256(key) else None

    def _put_derived(self, kind: str, key: str, data: bytes) -> None:
        if _is_sha256(key):
            self._write(self._path(kind, key), data)

    # -- core metadata ----------------------------------------------------------------------------

    def get_metadata(self, sha256: str) -> bytes | None:
        """The metadata file whose content hashes to ``sha256``; verified, else None."""
        sha256 = sha256.lower()
        if not _is_sha256(sha256):
            return None
        data = self._read(self._path(_METADATA, sha256))
        return data if data is not None and _digest(data) == sha256 else None

    def put_metadata(self, data: bytes) -> str:
        """Store a metadata file under its own sha256; returns that hash."""
        sha256 = _digest(data)
        path = self._path(_METADATA, sha256)
        if not path.exists():
            self._write(path, data)
        return sha256

    def get_file_metadata(self, file_sha256: str) -> bytes | None:
        """The core metadata read earlier out of the file (wheel/sdist) with this sha256."""
        file_sha256 = file_sha256.lower()
        if not _is_sha256(file_sha256):
            return None
        pointer = self._read(self._path(_FILES, file_sha256))
        return self.get_metadata(pointer.decode("ascii", "replace")) if pointer else None

    def put_file_metadata(self, file_sha256: str, data: bytes) -> None:
        """Remember that the file with ``file_sha256`` carries metadata ``data``."""
        file_sha256 = file_sha256.lower()
        if _is_sha256(file_sha256):
            self._write(self._path(_FILES, file_sha256), self.put_metadata(data).encode())

    # -- core metadata read by range requests (unverified) -----------------------------------------

    def get_range_metadata(self, file_sha256: str) -> bytes | None:
        """The core metadata read earlier by range requests out of the wheel with this sha256.

        Unverified: no hash covered those bytes when they came (only their own content hash
        guards the stored copy); whoever uses it must re-check it against the installed wheel.
        """
        file_sha256 = file_sha256.lower()
        if not _is_sha256(file_sha256):
            return None
        pointer = self._read(self._path(_RANGES, file_sha256))
        return self.get_metadata(pointer.decode("ascii", "replace")) if pointer else None

    def put_range_metadata(self, file_sha256: str, data: bytes) -> None:
        """Remember metadata ``data`` read by range requests out of the wheel ``file_sha256``."""
        file_sha256 = file_sha256.lower()
        if _is_sha256(file_sha256):
            self._write(self._path(_RANGES, file_sha256), self.put_metadata(data).encode())

    # -- atomic file access -----------------------------------------------------------------------

    @staticmethod
    def _read(path: Path) -> bytes | None:
        try:
            return path.read_bytes()
        except OSError:
            return None

    @staticmethod
    def _write(path: Path, data: bytes) -> None:
        """Write to a temp file in the same folder, then ``os.replace``; failures are ignored."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            replace_with(path, data, durable=False, prefix=".tmp-")
        except OSError:
            return
