"""A wheel's core metadata by HTTP range requests, without downloading the wheel.

Like uv and pip's "lazy wheel": one suffix request (``Range: bytes=-16384``) brings the end of
the zip (its end-of-central-directory record, often the whole central directory, and for small
wheels the ``.dist-info`` files, which are written last) and, from ``Content-Range``, the file's
size; a second request fetches the rest of the central directory when it is larger, and one more
the METADATA member when it was not in what came already. Typical cost: 1 to 3 requests and
16 KiB to a few hundred KiB (the central directory of a wheel with thousands of files), whatever
the size of the wheel.

A server that ignores ``Range`` answers 200 with the whole file: that body goes into the
caller's sink (so the first request doubles as the whole download) unless it is larger than the
caller's ``limit``. A server that refuses ranges (416, or a later range answered otherwise than
206) raises :class:`RangesRefused`: the caller downloads the whole file. Bytes that do not make a
zip, a truncated or inconsistent answer: :class:`IndexFailure` naming the URL.
"""

from __future__ import annotations

import re
import tempfile

from pm.index._metadata import archive_metadata, metadata_entry
from pm.index._zipdir import ZipFormatError, data_span, find_directory, members, read_member
from pm.index.base import FileLink, IndexFailure, LookAheadSkipped
from pm.index.http import BodyTooLarge, HashingSink, HttpClient, Response, Sink

#: Bytes asked for by the first (suffix) request: as uv does. Measured on real wheels (pip,
#: setuptools): 16 KiB reads METADATA in 3 requests and ~20-40 KB, below uv's HEAD + 3 ranges;
#: 64 KiB needs 1-2 requests but ~1.5-2.4x uv's bytes.
TAIL = 16 << 10
#: A look-ahead never downloads a whole file larger than this (10 MB); the resolver's own
#: ``metadata()`` call still does when the server refuses ranges (correctness first).
AHEAD_WHOLE_LIMIT = 10 * 1000 * 1000
#: Downloaded files up to this size stay in memory; larger ones spill to a temporary file.
_SPOOL = 16 << 20
#: Range requests never gzip: ranges would then count bytes of the encoded body.
_IDENTITY = {"Accept-Encoding": "identity"}
_CONTENT_RANGE = re.compile(r"\s*bytes\s+(\d+)-(\d+)/(\d+)\s*", re.IGNORECASE)


class RangesRefused(IndexFailure):
    """The server does not answer byte ranges for this file (``status`` is what it said)."""

    def __init__(self, url: str, status: int) -> None:
        self.status = status
        super().__init__(url, f"byte ranges refused (HTTP {status})")


def content_range(value: str | None) -> tuple[int, int, int] | None:
    """``(first, last, total)`` of a ``Content-Range: bytes first-last/total`` value, else None."""
    match = _CONTENT_RANGE.fullmatch(value or "")
    if match is None:
        return None
    first, last, total = (int(group) for group in match.groups())
    return (first, last, total) if first <= last < total else None


class RangeFile:
    """A remote file read in pieces by range requests; what came once is reused.

    ``requests`` and ``received`` count the range requests made and the body bytes they brought.
    """

    def __init__(self, client: HttpClient, url: str, size: int) -> None:
        self.client = client
        self.url = url
        self.size = size
        self.requests = 0
        self.received = 0
        self.tail = 0  # how many of the last bytes the first answer brought
        self._pieces: list[tuple[int, bytes]] = []

    def take(self, response: Response) -> tuple[int, bytes]:
        """Check a 206 answer (its Content-Range and length) and keep its bytes."""
        found = content_range(response.headers.get("content-range"))
        if found is None:
            raise IndexFailure(self.url, "HTTP 206 without a usable Content-Range "
                                         f"({response.headers.get('content-range')!r})")
        first, last, total = found
        if total != self.size:
            raise IndexFailure(self.url, f"the file changed size while being read ({self.size} then {total} bytes)")
        if len(response.body) != last - first + 1:
            raise IndexFailure(self.url, f"truncated range answer: {len(response.body)} bytes for "
                                         f"bytes {first}-{last}")
        self.requests += 1
        self.received += len(response.body)
        self._pieces.append((first, response.body))
        return first, response.body

    def read(self, offset: int, length: int) -> bytes:
        """Exactly ``length`` bytes at ``offset``, from what came already or one more request."""
        if offset < 0 or length < 0 or offset + length > self.size:
            raise ZipFormatError(f"an offset points outside the file ({offset}+{length} > {self.size})")
        end = offset + length
        for start, data in self._pieces:
            if start <= offset and end <= start + len(data):
                return data[offset - start:offset - start + length]
        if length == 0:
            return b""
        for start, data in self._pieces:  # the end is here already (a directory partly in the tail)
            if offset < start < end <= start + len(data):
                return self._fetch(offset, start - offset) + data[:end - start]
        return self._fetch(offset, length)

    def _fetch(self, offset: int, length: int) -> bytes:
        headers = {"Range": f"bytes={offset}-{offset + length - 1}", **_IDENTITY}
        try:
            response = self.client.get(self.url, headers=headers, ok=(206, 416), limit=0)
        except BodyTooLarge:
            raise RangesRefused(self.url, 200) from None
        if response.status != 206:
            raise RangesRefused(self.url, response.status)
        start, data = self.take(response)
        if not (start <= offset and offset + length <= start + len(data)):
            raise IndexFailure(self.url, f"asked for bytes {offset}-{offset + length - 1}, got "
                                         f"{start}-{start + len(data) - 1}")
        return data[offset - start:offset - start + length]


def open_range(client: HttpClient, url: str, *, sink: Sink, limit: int | None,
               tail: int = TAIL) -> RangeFile | None:
    """Ask for the last ``tail`` bytes. None when the server sent the whole file instead (it
    went into ``sink``); :class:`~pm.index.http.BodyTooLarge` when that file is over ``limit``."""
    response = client.get(url, headers={"Range": f"bytes=-{tail}", **_IDENTITY},
                          ok=(200, 206, 416), sink=sink, limit=limit)
    if response.status == 200:
        return None
    if response.status == 416:
        raise RangesRefused(url, 416)
    found = content_range(response.headers.get("content-range"))
    if found is None:
        raise IndexFailure(url, "HTTP 206 without a usable Content-Range "
                                f"({response.headers.get('content-range')!r})")
    remote = RangeFile(client, url, found[2])
    remote.take(response)
    remote.tail = found[1] - found[0] + 1 if found[1] == found[2] - 1 else 0
    return remote


def _is_metadata(raw_name: bytes) -> bool:
    """A central directory name that may be the core metadata (:func:`metadata_entry` decides)."""
    return raw_name.endswith(b".dist-info/METADATA")


def range_metadata(remote: RangeFile, filename: str) -> bytes:
    """The wheel's ``*.dist-info/METADATA`` read out of ``remote`` (its zip directory first)."""
    try:
        directory = find_directory(remote.read, remote.size, tail=remote.tail)
        entries = members(remote.read(directory.offset, directory.size), directory, wanted=_is_metadata)
        name = metadata_entry((e.name for e in entries), filename.split("-")[0])
        member = next((e for e in entries if e.name == name), None)
        if member is None:
            raise IndexFailure(remote.url, "wheel has no *.dist-info/METADATA")
        offset, length = data_span(member)
        remote.read(offset, min(length, remote.size - offset))  # header and data in one request
        return read_member(remote.read, member)
    except ZipFormatError as exc:
        raise IndexFailure(remote.url, f"not a readable wheel (zip, read by range): {exc.detail}") from None


def file_metadata(client: HttpClient, link: FileLink, url: str, *, ahead: bool) -> tuple[bytes, bool]:
    """Core metadata out of the file at ``url``: ``(bytes, True)`` read by ranges (a wheel on a
    server that answers them), else ``(bytes, False)`` out of the whole file, verified against
    ``link.sha256``. With ``ahead`` (a look-ahead guess) a whole file over
    :data:`AHEAD_WHOLE_LIMIT` bytes, or of unknown size, is not downloaded: :class:`LookAheadSkipped`.
    """
    limit = AHEAD_WHOLE_LIMIT if ahead else None
    with tempfile.SpooledTemporaryFile(max_size=_SPOOL) as spool:
        sink = HashingSink(spool)
        try:
            found = _by_range(client, url, link.filename, sink, limit) if link.is_wheel else False
            if isinstance(found, bytes):
                return found, True
            if found is False:  # an sdist, or ranges refused: one plain GET
                if limit is not None and (link.size is None or link.size > limit):
                    raise LookAheadSkipped(url, _skipped(link.size, limit))
                client.get(url, sink=sink, limit=limit)
        except BodyTooLarge as exc:
            raise LookAheadSkipped(url, _skipped(exc.size, exc.limit)) from None
        actual = sink.hash.hexdigest()
        if link.sha256 and link.sha256.lower() != actual:
            raise IndexFailure(url, f"hash mismatch: expected sha256 {link.sha256.lower()}, got {actual}")
        spool.seek(0)
        return archive_metadata(spool, link.filename, url), False


def _by_range(client: HttpClient, url: str, filename: str, sink: HashingSink,
              limit: int | None) -> bytes | bool:
    """METADATA by ranges; True when the whole file came into ``sink`` instead; False when the
    server refused ranges (nothing in ``sink``)."""
    try:
        remote = open_range(client, url, sink=sink, limit=limit)
        return True if remote is None else range_metadata(remote, filename)
    except RangesRefused:
        return False


def _skipped(size: int | None, limit: int) -> str:
    shown = f"{size} bytes" if size is not None else "of unknown size"
    return (f"look-ahead does not download a whole file over {limit} bytes (this one is {shown}) "
            "from a server without byte ranges")
