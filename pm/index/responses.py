"""What a request answers: a :class:`Response`, a :class:`Sink` a streamed body goes to (hashed on
the way by :class:`HashingSink`), the refusal of a body larger than asked (:class:`BodyTooLarge`),
and ``file://`` URLs answered as a static web server would (:func:`get_file`)."""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import NamedTuple, Protocol
from urllib.parse import unquote, urlsplit

from pm.index.base import IndexFailure

CHUNK = 1 << 16


class Sink(Protocol):
    """Where a streamed body goes (a binary file, or a hashing wrapper around one)."""

    def write(self, data: bytes, /) -> object: ...


class HashingSink:
    """Writes through to ``file`` (or nowhere) while keeping the sha256 and the size of what went
    by: a download hashed as it streams, or only hashed."""

    def __init__(self, file: Sink | None = None) -> None:
        self.file = file
        self.hash = hashlib.sha256()
        self.size = 0

    def write(self, data: bytes) -> int:
        self.hash.update(data)
        self.size += len(data)
        if self.file is not None:
            self.file.write(data)
        return len(data)


class BodyTooLarge(IndexFailure):
    """A 200 answer larger than the caller's ``limit`` (``size`` None: length not given); unread."""

    def __init__(self, url: str, size: int | None, limit: int) -> None:
        self.size = size
        self.limit = limit
        shown = f"{size} bytes" if size is not None else "of unknown length"
        super().__init__(url, f"the whole file ({shown}) came instead of a byte range; "
                              f"not read (limit {limit} bytes)")


class Response(NamedTuple):
    """One final answer: ``headers`` keys are lower case; ``url`` is after redirects."""

    status: int
    headers: Mapping[str, str]
    body: bytes
    url: str


def get_file(url: str, *, ok: Collection[int] = (200,), sink: Sink | None = None,
             limit: int | None = None) -> Response:
    """A ``file://`` URL answered as a static web server would (pip and uv read such indexes):
    a folder means its ``index.html``; a missing file is a 404; a ``Range`` is ignored (200 with
    the whole file, so a caller that wanted a range with ``limit`` gets :class:`BodyTooLarge` and
    reads the whole file, which is local anyway)."""
    path = Path(unquote(urlsplit(url).path))
    if path.is_dir():
        path = path / "index.html"
    if not path.is_file():
        if 404 in ok:
            return Response(404, {}, b"", url)
        raise IndexFailure(url, "HTTP 404 Not Found (no such file)")
    size = path.stat().st_size
    if limit is not None and size > limit:
        raise BodyTooLarge(url, size, limit)
    if 200 not in ok:
        raise IndexFailure(url, "HTTP 200 OK (a file:// URL has no partial answers)")
    kind = "text/html" if path.suffix in (".html", ".htm") else "application/octet-stream"
    headers = {"content-length": str(size), "content-type": kind}
    try:
        with path.open("rb") as stream:
            if sink is None:
                return Response(200, headers, stream.read(), url)
            while chunk := stream.read(CHUNK):
                sink.write(chunk)
    except OSError as exc:
        raise IndexFailure(url, f"cannot read {path}: {exc.strerror or exc}") from None
    return Response(200, headers, b"", url)
