"""Core metadata by HTTP range requests: real wheels on a real local index without PEP 658 files."""

from __future__ import annotations

import os
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from pm.index import IndexFailure, SimpleIndexSource
from pm.index._ranges import AHEAD_WHOLE_LIMIT, TAIL
from pm.index.base import FileLink, LookAheadSkipped, looking_ahead
from pm.index.cache import Cache
from pm.testing import LocalIndex, build_wheel, metadata_bytes
from pm.testing.index import Transfer

REQUIRES = ["small>=1", 'extra-dep; extra == "x"']


def _big_wheel(folder: Path, megabytes: int, name: str = "big") -> Path:
    """A wheel holding ``megabytes`` MB of random (incompressible) data before its dist-info."""
    payload = {f"{name}/blob.bin": os.urandom(megabytes * 1_000_000)}
    return build_wheel(folder, name, "1.0", requires_dist=REQUIRES, requires_python=">=3.8",
                       provides_extra=["x"], extra_files=payload)


def _link(source: SimpleIndexSource, filename: str) -> FileLink:
    (found,) = [x for x in source.links(canonicalize_name(filename.split("-")[0])) if x.filename == filename]
    return found


def _file_transfers(index: LocalIndex, filename: str, count: int = 0) -> list[Transfer]:
    """The answers for ``filename``; with ``count``, waits (up to 10 s) until that many are logged:
    an answer the client hung up on is logged when the server notices."""
    deadline = time.monotonic() + 10
    while True:
        found = [t for t in index.transfers if t.path == f"/files/{filename}"]
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.01)


def _shown(transfer: Transfer) -> tuple[str, str | None, int, int]:
    return transfer.method, transfer.range, transfer.status, transfer.body_bytes


def _check(metadata_found, wheel: Path) -> None:
    assert metadata_found.name == "big" and str(metadata_found.version) == "1.0"
    assert metadata_found.requires_dist == tuple(Requirement(r) for r in REQUIRES)
    assert metadata_found.requires_python == SpecifierSet(">=3.8")
    assert metadata_bytes(wheel)  # the real file has it too


def test_a_big_wheel_is_read_by_one_suffix_range(tmp_path: Path) -> None:
    wheel = _big_wheel(tmp_path, 4)
    cache = Cache(tmp_path / "cache")
    with LocalIndex([wheel], metadata_files=False) as index, SimpleIndexSource(index.url, cache) as source:
        found = source.metadata(_link(source, wheel.name))
        transfers = _file_transfers(index, wheel.name, count=1)
    _check(found, wheel)
    assert found.unverified
    # The dist-info is written last, so the 16 KiB tail holds directory and METADATA: one request.
    assert [_shown(t) for t in transfers] == [("GET", f"bytes=-{TAIL}", 206, TAIL)]
    assert wheel.stat().st_size > 60 * TAIL
    # Cached by the wheel's sha256, still marked unverified: no request the second time.
    with LocalIndex([wheel], metadata_files=False) as index, SimpleIndexSource(index.url, cache) as source:
        again = source.metadata(_link(source, wheel.name))
        assert _file_transfers(index, wheel.name) == []
    assert again == found and again.unverified


def test_a_zip64_wheel_with_a_large_central_directory_takes_three_ranges(tmp_path: Path) -> None:
    """66,000 entries: the entry count overflows 16 bits (zip64 end records) and the central
    directory (~4 MB) does not fit the first range; METADATA sits before it (a third range)."""
    entries = {f"big/m{i:05}.py": b"" for i in range(66_000)}
    wheel = build_wheel(tmp_path, "big", "1.0", requires_dist=REQUIRES, requires_python=">=3.8",
                        provides_extra=["x"], extra_files=entries)
    with zipfile.ZipFile(wheel) as archive:
        assert len(archive.infolist()) > 0xFFFF
    with LocalIndex([wheel], metadata_files=False) as index, SimpleIndexSource(index.url) as source:
        found = source.metadata(_link(source, wheel.name))
        transfers = _file_transfers(index, wheel.name, count=3)
    _check(found, wheel)
    assert [t.status for t in transfers] == [206, 206, 206]
    size = wheel.stat().st_size
    central = transfers[1].body_bytes
    assert transfers[0].range == f"bytes=-{TAIL}"
    # The second asks only for the part of the central directory the tail did not bring.
    assert transfers[1].range is not None and transfers[1].range.endswith(f"-{size - TAIL - 1}")
    assert 3_000_000 < central < size and transfers[2].body_bytes < 2_000
    assert sum(t.body_bytes for t in transfers) < central + TAIL + 2_000


def test_a_server_without_ranges_gives_the_whole_file_once(tmp_path: Path) -> None:
    wheel = _big_wheel(tmp_path, 1)
    with LocalIndex([wheel], metadata_files=False, ranges=False) as index, \
            SimpleIndexSource(index.url) as source:
        found = source.metadata(_link(source, wheel.name))
        transfers = _file_transfers(index, wheel.name, count=1)
    _check(found, wheel)
    assert not found.unverified  # the whole file was checked against its sha256
    # The range request's 200 answer is the whole download: no second request.
    assert [_shown(t) for t in transfers] == [("GET", f"bytes=-{TAIL}", 200, wheel.stat().st_size)]


def test_a_refused_range_falls_back_to_one_plain_download(tmp_path: Path) -> None:
    """416 to the suffix request (here: ranges come from an empty stale copy, so none can be
    satisfied): one GET without Range brings the whole file, checked against its sha256."""
    wheel = _big_wheel(tmp_path, 1)
    (tmp_path / "empty").write_bytes(b"")
    with LocalIndex([wheel], metadata_files=False) as index, SimpleIndexSource(index.url) as source:
        index.stale_ranges[wheel.name] = tmp_path / "empty"
        found = source.metadata(_link(source, wheel.name))
        transfers = _file_transfers(index, wheel.name, count=2)
    _check(found, wheel)
    assert not found.unverified
    assert [_shown(t) for t in transfers] == [("GET", f"bytes=-{TAIL}", 416, 0),
                                              ("GET", None, 200, wheel.stat().st_size)]


def test_look_ahead_never_downloads_a_big_wheel_whole(tmp_path: Path) -> None:
    wheel = _big_wheel(tmp_path, 3 * AHEAD_WHOLE_LIMIT // 1_000_000)
    size = wheel.stat().st_size
    pool = ThreadPoolExecutor(2)
    with LocalIndex([wheel], metadata_files=False, ranges=False) as index, \
            SimpleIndexSource(index.url, executor=pool) as source:
        link = _link(source, wheel.name)
        source.prefetch_metadata([link])
        pool.shutdown(wait=True)
        with looking_ahead(), pytest.raises(LookAheadSkipped) as skipped:
            source.metadata(link)  # the resolver's look-ahead threads are refused the same way
        declined = _file_transfers(index, wheel.name, count=2)
        # The resolver's own call still gets the metadata (correctness first): one whole GET.
        index.reset_log()
        found = source.metadata(link)
        fetched = _file_transfers(index, wheel.name, count=1)
    assert skipped.value.url == link.url
    assert skipped.value.detail == (f"look-ahead does not download a whole file over {AHEAD_WHOLE_LIMIT} bytes "
                                    f"(this one is {size} bytes) from a server without byte ranges")
    # Each look-ahead asked for a range, got the whole file and hung up without reading it.
    assert [(t.range, t.status) for t in declined] == [(f"bytes=-{TAIL}", 200)] * 2
    assert all(t.body_bytes < size for t in declined)
    _check(found, wheel)
    assert [(t.status, t.body_bytes) for t in fetched] == [(200, size)]


def test_look_ahead_reads_a_big_wheel_by_range(tmp_path: Path) -> None:
    wheel = _big_wheel(tmp_path, AHEAD_WHOLE_LIMIT // 1_000_000 + 1)
    pool = ThreadPoolExecutor(2)
    with LocalIndex([wheel], metadata_files=False) as index, \
            SimpleIndexSource(index.url, executor=pool) as source:
        link = _link(source, wheel.name)
        source.prefetch_metadata([link])
        pool.shutdown(wait=True)
        found = source.metadata(link)  # joins the prefetched result
        transfers = _file_transfers(index, wheel.name, count=1)
    _check(found, wheel)
    assert [(t.status, t.body_bytes) for t in transfers] == [(206, TAIL)]


@pytest.mark.parametrize(("stale", "detail"), [
    (b"this is no zip archive\n" * 4000,
     "not a readable wheel (zip, read by range): no end of central directory record "
     "(not a zip archive, or truncated)"),
    ("truncated", "not a readable wheel (zip, read by range): no end of central directory record "
                  "(not a zip archive, or truncated)"),
    ("flipped", "not a readable wheel (zip, read by range): big-1.0.dist-info/METADATA: "
                "CRC-32 or size mismatch (corrupt or truncated data)"),
])
def test_a_corrupt_range_answer_is_an_index_failure_naming_the_url(tmp_path: Path, stale: bytes | str,
                                                                   detail: str) -> None:
    wheel = _big_wheel(tmp_path / "real", 1)
    data = wheel.read_bytes()
    if stale == "truncated":
        stale = data[:len(data) // 2]
    elif stale == "flipped":  # one bit of METADATA's compressed bytes changed
        with zipfile.ZipFile(wheel) as archive:
            info = archive.getinfo("big-1.0.dist-info/METADATA")
        at = info.header_offset + 30 + len(info.filename) + len(info.extra) + 2
        stale = data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1:]
    assert isinstance(stale, bytes)
    (tmp_path / "stale.bin").write_bytes(stale)
    with LocalIndex([wheel], metadata_files=False) as index, SimpleIndexSource(index.url) as source:
        index.stale_ranges[wheel.name] = tmp_path / "stale.bin"
        link = _link(source, wheel.name)
        with pytest.raises(IndexFailure) as caught:
            source.metadata(link)
    assert (caught.value.url, caught.value.detail) == (link.url, detail)
