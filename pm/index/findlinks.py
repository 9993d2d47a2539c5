"""A ``--find-links`` folder: wheels and sdists lying in one directory (not recursive).

Files are offered as ``file://`` URLs with the sha256 computed from their bytes (memoised per
path, size and mtime), and metadata is read from the file itself. Sdists follow the same rule as
on an index: static PKG-INFO (Metadata-Version >= 2.2, no Dynamic dependencies) or
:class:`~pm.index._metadata.MetadataUnavailable`.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable
from pathlib import Path

from packaging.utils import NormalizedName, canonicalize_name

from pm.index._metadata import archive_metadata, parse_metadata, require_static
from pm.index.base import SDIST_ENDINGS, FileLink, IndexFailure, Metadata

_SUFFIXES = (".whl", *SDIST_ENDINGS)


def file_sha256(path: Path) -> str:
    """The sha256 of a file, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


class FindLinksSource:
    """The distribution files in ``folder``.

    Contract: thread-safe; the folder is listed once, on first use, and that listing stands for
    the life of the source; a missing or unreadable folder raises :class:`IndexFailure` naming it
    (on first use, not at construction). Cost: ``links(name)`` hashes that project's files once;
    ``metadata`` opens one archive (memoised). Prefetching is a no-op: everything is local.
    """

    def __init__(self, folder: Path | str) -> None:
        self.folder = Path(folder).expanduser().absolute()
        self.label = str(self.folder)
        self._lock = threading.Lock()
        self._listing: dict[NormalizedName, list[tuple[str, Path]]] | None = None
        self._hashes: dict[tuple[Path, int, int], str] = {}
        self._links: dict[NormalizedName, tuple[FileLink, ...]] = {}
        self._paths: dict[str, Path] = {}
        self._metadata: dict[FileLink, Metadata] = {}

    def __enter__(self) -> FindLinksSource:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Nothing to release; present so every source can be closed alike."""

    def _list(self) -> dict[NormalizedName, list[tuple[str, Path]]]:
        if self._listing is not None:
            return self._listing
        if not self.folder.is_dir():
            raise IndexFailure(str(self.folder), "find-links folder does not exist")
        listing: dict[NormalizedName, list[tuple[str, Path]]] = {}
        try:
            entries = sorted(self.folder.iterdir())
        except OSError as exc:
            raise IndexFailure(str(self.folder),
                               f"cannot list find-links folder ({exc.strerror})") from None
        for path in entries:
            if path.name.endswith(_SUFFIXES) and path.is_file():
                link = FileLink.parse(path.name, path.as_uri())
                if link is not None:
                    listing.setdefault(link.name, []).append((path.name, path))
        self._listing = listing
        return listing

    def _sha256(self, path: Path) -> str:
        try:
            stat = path.stat()
            key = (path, stat.st_size, stat.st_mtime_ns)
            if key not in self._hashes:
                self._hashes[key] = file_sha256(path)
        except OSError as exc:
            raise IndexFailure(path.as_uri(), f"cannot read file ({exc.strerror})") from None
        return self._hashes[key]

    def project_names(self) -> list[NormalizedName]:
        """Every project with a file in the folder (listing it on first use)."""
        with self._lock:
            return sorted(self._list())

    def links(self, name: NormalizedName) -> tuple[FileLink, ...]:
        key = canonicalize_name(name)
        with self._lock:
            if key not in self._links:
                found = []
                for filename, path in self._list().get(key, []):
                    link = FileLink(filename, path.as_uri(), sha256=self._sha256(path),
                                    size=path.stat().st_size, source=self.label)
                    self._paths[link.url] = path
                    found.append(link)
                self._links[key] = tuple(found)
            return self._links[key]

    def metadata(self, link: FileLink) -> Metadata:
        """Read from the file; IndexFailure if it changed since it was listed."""
        with self._lock:
            if (found := self._metadata.get(link)) is not None:
                return found
            path = self._paths.get(link.url)
            if path is None:
                raise IndexFailure(link.url,
                                   f"not a file offered by find-links folder {self.label}")
            if link.sha256 and (actual := self._sha256(path)) != link.sha256:
                raise IndexFailure(link.url, f"hash mismatch: expected sha256 {link.sha256}, "
                                             f"got {actual} (the file changed since it was listed)")
            data = archive_metadata(str(path), link.filename, link.url)
            if not link.is_wheel:
                require_static(data, link.url)
            found = self._metadata[link] = parse_metadata(data, link.url)
            return found

    def prefetch(self, names: Iterable[NormalizedName]) -> None:
        """No-op: local files need no warming."""

    def prefetch_metadata(self, links: Iterable[FileLink]) -> None:
        """No-op: local files need no warming."""
