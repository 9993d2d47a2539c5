"""The pure zip reader behind range metadata, on real archives (zipfile's, and hand-written zip64).

Each archive is read through a ``read(offset, length)`` over its bytes that also records what was
asked, so the tests see which slices a remote reader would have fetched.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from pathlib import Path

import pytest

from pm.index._zipdir import (
    EOCD_REACH,
    ZipFormatError,
    data_span,
    find_directory,
    members,
    read_member,
)
from pm.testing import build_wheel, metadata_bytes

METADATA = "demo-1.0.dist-info/METADATA"


class Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.asked: list[tuple[int, int]] = []

    def __call__(self, offset: int, length: int) -> bytes:
        self.asked.append((offset, length))
        assert 0 <= offset and offset + length <= len(self.data)
        return self.data[offset:offset + length]


def _metadata(data: bytes, tail: int = EOCD_REACH) -> tuple[bytes, Reader]:
    read = Reader(data)
    directory = find_directory(read, len(data), tail=tail)
    entries = members(read(directory.offset, directory.size), directory)
    (member,) = [e for e in entries if e.name == METADATA]
    offset, length = data_span(member)
    assert _local_size(data, offset, member.compressed_size) <= length  # one read: header and data
    return read_member(read, member), read


def _local_size(data: bytes, offset: int, compressed: int) -> int:
    name_len, extra_len = struct.unpack_from("<2H", data, offset + 26)
    return 30 + name_len + extra_len + compressed


@pytest.fixture
def wheel(tmp_path: Path) -> Path:
    return build_wheel(tmp_path, "demo", "1.0", requires_dist=["alpha>=1"], requires_python=">=3.8")


def test_a_wheel_written_by_zipfile(wheel: Path) -> None:
    found, _ = _metadata(wheel.read_bytes())
    assert found == metadata_bytes(wheel)


def test_bytes_before_the_zip_shift_every_offset(wheel: Path) -> None:
    """A self-extracting stub (or any prefix) before the archive: offsets are relative to the zip."""
    found, _ = _metadata(b"#!stub\n" * 1000 + wheel.read_bytes())
    assert found == metadata_bytes(wheel)


def test_a_long_archive_comment_needs_a_wider_tail(wheel: Path) -> None:
    buffer = io.BytesIO(wheel.read_bytes())
    with zipfile.ZipFile(buffer, "a") as archive:
        archive.comment = b"c" * 0xFFFF
    data = buffer.getvalue()
    found, read = _metadata(data, tail=64 << 10)
    assert found == metadata_bytes(wheel)
    assert read.asked[:2] == [(len(data) - (64 << 10), 64 << 10), (len(data) - EOCD_REACH, EOCD_REACH)]


def test_stored_members(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr(METADATA, b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n")
    assert _metadata(buffer.getvalue())[0] == b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n"


def _zip64(entries: dict[str, bytes]) -> bytes:
    """A zip whose every central entry uses zip64 extra fields for sizes and offset, ended by zip64
    end records (what writers emit past 4 GiB; zipfile only does so when it must)."""
    out, central = bytearray(), bytearray()
    for name, content in entries.items():
        packed = zlib.compress(content)[2:-4]
        crc, raw = zlib.crc32(content), name.encode()
        offset = len(out)
        local_extra = struct.pack("<2H2Q", 1, 16, len(content), len(packed))
        out += struct.pack("<4s5H3L2H", b"PK\x03\x04", 45, 0, 8, 0, 0, crc, 0xFFFFFFFF, 0xFFFFFFFF,
                           len(raw), len(local_extra)) + raw + local_extra + packed
        extra = struct.pack("<2H3Q", 1, 24, len(content), len(packed), offset)
        central += struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 45, 45, 0, 8, 0, 0, crc, 0xFFFFFFFF,
                               0xFFFFFFFF, len(raw), len(extra), 0, 0, 0, 0, 0xFFFFFFFF) + raw + extra
    cd_offset, count = len(out), len(entries)
    out += central
    record_at = len(out)
    out += struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, count, count, len(central), cd_offset)
    out += struct.pack("<4sLQL", b"PK\x06\x07", 0, record_at, 1)
    out += struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    return bytes(out)


def test_zip64_extra_fields_and_end_records() -> None:
    content = b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nRequires-Dist: alpha\n"
    data = _zip64({"demo/__init__.py": b"x = 1\n" * 100, METADATA: content})
    with zipfile.ZipFile(io.BytesIO(data)) as archive:  # the stdlib agrees it is a valid zip
        assert archive.read(METADATA) == content
    assert _metadata(data)[0] == content


@pytest.mark.parametrize(("damage", "detail"), [
    (lambda d: d[:-10], "no end of central directory record (not a zip archive, or truncated)"),
    (lambda d: b"no zip at all", "no end of central directory record (not a zip archive, or truncated)"),
])
def test_damaged_archives(wheel: Path, damage, detail: str) -> None:
    data = damage(wheel.read_bytes())
    with pytest.raises(ZipFormatError) as caught:
        _metadata(data)
    assert caught.value.detail == detail


def test_a_central_directory_pointing_outside_the_file(wheel: Path) -> None:
    data = bytearray(wheel.read_bytes())
    end = data.rfind(b"PK\x05\x06")
    struct.pack_into("<L", data, end + 16, len(data))  # central directory offset past the end
    with pytest.raises(ZipFormatError) as caught:
        _metadata(bytes(data))
    assert caught.value.detail.startswith("central directory (")


def test_only_wanted_entries_are_built_yet_every_entry_is_checked() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for number in range(50):
            archive.writestr(f"demo/m{number}.py", b"x = 1\n")
        archive.writestr(METADATA, b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n")
    data = buffer.getvalue()
    read = Reader(data)
    directory = find_directory(read, len(data))
    listing = read(directory.offset, directory.size)
    wanted = [e for e in members(listing, directory) if e.name == METADATA]

    assert members(listing, directory, wanted=lambda raw: raw.endswith(b"/METADATA")) == wanted
    at = [i for i in range(len(listing)) if listing.startswith(b"PK\x01\x02", i)][25]  # an entry not wanted
    damaged = listing[:at] + b"PK\x01\x09" + listing[at + 4:]
    with pytest.raises(ZipFormatError, match="bad central directory entry"):
        members(damaged, directory, wanted=lambda raw: raw.endswith(b"/METADATA"))
    with pytest.raises(ZipFormatError, match="truncated"):
        members(listing[:-len(METADATA) - 20], directory, wanted=lambda raw: raw.endswith(b"/METADATA"))
