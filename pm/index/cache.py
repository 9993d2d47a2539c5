"""The on-disk metadata cache, shared by every home of a user (and by concurrent processes).

Layout under the cache root (``$HERMES_PM_CACHE_DIR``, else ``$XDG_CACHE_HOME/hermes-pm``, else
``~/.cache/hermes-pm``)::

    pages-v1/<ab>/<sha256 of the page URL>     a project page: one JSON header line, then the body
    metadata-v1/<ab>/<sha256 of the content>   a core metadata file, immutable, verified on read
    files-v1/<ab>/<sha256 of a wheel/sdist>    text: the sha256 of that file's core metadata
    ranges-v1/<ab>/<sha256 of a wheel>         the same, for metadata read by range requests:
                                               no hash vouched for it (the build re-checks it)

Every write goes to a temporary file in the destination folder, then ``os.replace``: a reader
sees the old entry or the new one, never a partial one, whatever other processes do. A cache
that cannot be written (read-only disk, permissions) is skipped silently: it only costs speed.
Entries that fail to parse or verify count as misses.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path

_PAGES, _METADATA, _FILES = "pages-v1", "metadata-v1", "files-v1"
_RANGES = "ranges-v1"


def default_cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$HERMES_PM_CACHE_DIR``, else ``$XDG_CACHE_HOME/hermes-pm``, else ``~/.cache/hermes-pm``."""
    env = os.environ if environ is None else environ
    if explicit := env.get("HERMES_PM_CACHE_DIR"):
        return Path(explicit).expanduser()
    if xdg := env.get("XDG_CACHE_HOME"):
        return Path(xdg).expanduser() / "hermes-pm"
    return Path.home() / ".cache" / "hermes-pm"


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
class CachedPage:
    """A project page as fetched: the body plus what is needed to revalidate it.

    ``status`` is 200 or 404 (a project that does not exist is remembered too, for offline use).
    """

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
        """Whether Cache-Control max-age still covers this copy (never when max-age is 0)."""
        now = time.time() if now is None else now
        return self.max_age > 0 and 0 <= now - self.fetched_at < self.max_age

    def revalidated(self, headers: Mapping[str, str], now: float | None = None) -> CachedPage:
        """This copy after a 304: same body, refreshed validators, max-age and fetch time."""
        return replace(
            self,
            etag=headers.get("etag", self.etag),
            last_modified=headers.get("last-modified", self.last_modified),
            max_age=max_age(headers.get("cache-control")) if "cache-control" in headers
            else self.max_age,
            fetched_at=time.time() if now is None else now,
        )

    def to_bytes(self) -> bytes:
        header = {k: v for k, v in asdict(self).items() if k != "body"}
        return json.dumps(header, separators=(",", ":")).encode() + b"\n" + self.body

    @classmethod
    def from_bytes(cls, data: bytes) -> CachedPage:
        header, _, body = data.partition(b"\n")
        fields = json.loads(header)
        if not isinstance(fields, dict):
            raise ValueError("page header is not an object")
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

    def get_page(self, url: str) -> CachedPage | None:
        """The stored page for ``url``, or None (absent or unreadable)."""
        data = self._read(self._path(_PAGES, _digest(url)))
        if data is None:
            return None
        try:
            page = CachedPage.from_bytes(data)
        except (ValueError, TypeError):
            return None
        return page if page.url == url else None

    def put_page(self, page: CachedPage) -> None:
        self._write(self._path(_PAGES, _digest(page.url)), page.to_bytes())

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
            fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        except OSError:
            return
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(temp, path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temp)
