"""One member of a zip archive, found through its central directory and read by byte ranges.

Pure: every function works on bytes handed in through ``read(offset, length)`` (which returns
exactly that many bytes of the archive or raises) and the archive's total ``size``; where the
bytes come from (HTTP range requests, a local file) is the caller's business. Anything that is
not a well-formed zip raises :class:`ZipFormatError` with a short detail, which the caller turns
into an error naming the file's URL.

Layout facts used (APPNOTE.TXT): the end-of-central-directory record (EOCD, 22 bytes plus a
comment of up to 65,535 bytes) ends the archive; in a zip64 archive a 20-byte locator right before
it points at a 56-byte zip64 EOCD record carrying the 8-byte sizes; the central directory lists
every member (46 bytes plus name, extra, comment); each member's data follows its local header
(30 bytes plus name and an extra field that may differ from the central directory's).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass

Read = Callable[[int, int], bytes]

#: How far from the end the EOCD can start: its 22 bytes plus the longest comment.
EOCD_REACH = 22 + 0xFFFF
_EOCD = struct.Struct("<4s4H2LH")  # signature, disk, cd disk, entries here, entries, cd size, cd offset, comment
_LOCATOR = struct.Struct("<4sLQL")  # signature, disk, zip64 EOCD offset, disks
_EOCD64 = struct.Struct("<4sQ2H2L4Q")  # signature, record size, versions, disks, entries x2, cd size, cd offset
_CENTRAL = struct.Struct("<4s6H3L5H2L")
#: The same header's signature and its three lengths only: all a skipped entry needs.
_CENTRAL_LENGTHS = struct.Struct("<4s24x3H")
_LOCAL = struct.Struct("<4s5H3L2H")
_SIG_EOCD, _SIG_LOCATOR, _SIG_EOCD64 = b"PK\x05\x06", b"PK\x06\x07", b"PK\x06\x06"
_SIG_CENTRAL, _SIG_LOCAL = b"PK\x01\x02", b"PK\x03\x04"
_STORED, _DEFLATED = 0, 8
#: A member this large is no core metadata (and inflating it could exhaust memory).
MAX_MEMBER = 64 << 20


class ZipFormatError(ValueError):
    """The bytes are not a zip archive we can read (``detail`` says what is wrong)."""

    def __init__(self, detail: str) -> None:
        self.detail = detail
        super().__init__(detail)


@dataclass(frozen=True)
class Member:
    """One central directory entry: where its local header is and how its data is stored."""

    name: str
    method: int
    flags: int
    crc: int
    compressed_size: int
    size: int
    header_offset: int  # absolute position in the archive (any prefix before the zip included)
    central_extra: int  # length of the central directory's extra field (a hint for the local one)


@dataclass(frozen=True)
class Directory:
    """Where the central directory is (absolute), its size and entry count."""

    offset: int
    size: int
    entries: int
    prefix: int  # bytes before the zip proper (self-extracting stubs); member offsets add it


def find_directory(read: Read, size: int, tail: int = EOCD_REACH) -> Directory:
    """Locate the central directory from the end of the archive (zip64 followed).

    Looks in the last ``tail`` bytes first (what the caller already holds), and in the last
    :data:`EOCD_REACH` bytes only when the EOCD is not there (an archive comment longer than that).
    """
    for reach in dict.fromkeys((min(tail, EOCD_REACH), EOCD_REACH)):
        start = max(0, size - reach)
        at = _find_eocd(read(start, size - start))
        if at >= 0 or start == 0:
            break
    if at < 0:
        raise ZipFormatError("no end of central directory record (not a zip archive, or truncated)")
    record = read(start + at, _EOCD.size)
    _, disk, _, _, entries, cd_size, cd_offset, _ = _EOCD.unpack(record)
    end_at = start + at
    if disk not in (0, 0xFFFF):  # some zip64 writers put 0xFFFF in every EOCD field
        raise ZipFormatError("multi-disk archives are not supported")
    cd_end = end_at
    if entries == 0xFFFF or 0xFFFFFFFF in (cd_size, cd_offset):
        cd_end, entries, cd_size, cd_offset = _zip64(read, end_at)
    prefix = cd_end - cd_size - cd_offset
    if prefix < 0 or cd_end > size:
        raise ZipFormatError(f"central directory ({cd_size} bytes at {cd_offset}) lies outside the "
                             f"archive ({size} bytes)")
    return Directory(cd_offset + prefix, cd_size, entries, prefix)


def _find_eocd(tail: bytes) -> int:
    """Position of the last complete EOCD signature in ``tail``, or -1."""
    at = tail.rfind(_SIG_EOCD)
    while at >= 0 and at + _EOCD.size > len(tail):
        at = tail.rfind(_SIG_EOCD, 0, at)
    return at


def _zip64(read: Read, end_at: int) -> tuple[int, int, int, int]:
    """``(zip64 record position, entries, cd size, cd offset)`` from the locator before the EOCD."""
    if end_at < _LOCATOR.size:
        raise ZipFormatError("zip64 end of central directory locator missing")
    signature, _, record_at, _ = _LOCATOR.unpack(read(end_at - _LOCATOR.size, _LOCATOR.size))
    if signature != _SIG_LOCATOR:
        raise ZipFormatError("zip64 end of central directory locator missing")
    # The record sits right before the locator unless a prefix shifted every offset.
    expected_at = end_at - _LOCATOR.size - _EOCD64.size
    position = expected_at if expected_at >= 0 else record_at
    record = read(position, _EOCD64.size)
    if record[:4] != _SIG_EOCD64:
        if record_at + _EOCD64.size > end_at:
            raise ZipFormatError("zip64 end of central directory record missing")
        position, record = record_at, read(record_at, _EOCD64.size)
        if record[:4] != _SIG_EOCD64:
            raise ZipFormatError("zip64 end of central directory record missing")
    fields = _EOCD64.unpack(record)
    return position, fields[7], fields[8], fields[9]


def members(directory_bytes: bytes, directory: Directory,
            wanted: Callable[[bytes], bool] | None = None) -> list[Member]:
    """Every entry of a central directory (``directory_bytes`` is all of it), or those whose raw
    name is ``wanted``: every entry is still checked, but only those are decoded and built (a
    wheel of torch or transformers lists thousands of files; its metadata is one of them)."""
    found: list[Member] = []
    at = 0
    for _ in range(directory.entries):
        if at + _CENTRAL.size > len(directory_bytes):
            raise ZipFormatError("central directory is truncated")
        signature, name_len, extra_len, comment_len = _CENTRAL_LENGTHS.unpack_from(directory_bytes, at)
        if signature != _SIG_CENTRAL:
            raise ZipFormatError(f"bad central directory entry at offset {directory.offset + at}")
        name_at = at + _CENTRAL.size
        raw_name = directory_bytes[name_at:name_at + name_len]
        if wanted is None or wanted(raw_name):
            found.append(_member(directory_bytes, at, raw_name, directory.prefix))
        at = name_at + name_len + extra_len + comment_len
    return found


def _member(directory_bytes: bytes, at: int, raw_name: bytes, prefix: int) -> Member:
    """The entry whose central directory header starts at ``at`` (its name already cut out)."""
    fields = _CENTRAL.unpack_from(directory_bytes, at)
    flags, method, crc, compressed, size, extra_len, offset = (fields[3], fields[4], fields[7], fields[8],
                                                               fields[9], fields[11], fields[16])
    extra_at = at + _CENTRAL.size + len(raw_name)
    size, compressed, offset = _widen(directory_bytes[extra_at:extra_at + extra_len], size, compressed, offset)
    name = raw_name.decode("utf-8" if flags & 0x800 else "cp437")
    return Member(name, method, flags, crc, compressed, size, offset + prefix, extra_len)


def _widen(extra: bytes, size: int, compressed: int, offset: int) -> tuple[int, int, int]:
    """Replace 0xFFFFFFFF fields by their 8-byte values from the zip64 extra field (id 1)."""
    at = 0
    while at + 4 <= len(extra):
        kind, length = struct.unpack_from("<2H", extra, at)
        if kind == 1:
            values = extra[at + 4:at + 4 + length]
            wide = [struct.unpack_from("<Q", values, i)[0] for i in range(0, len(values) - 7, 8)]
            fields = [size, compressed, offset]
            for index, value in enumerate(fields):
                if value == 0xFFFFFFFF:
                    if not wide:
                        raise ZipFormatError("zip64 extra field is too short")
                    fields[index] = wide.pop(0)
            return fields[0], fields[1], fields[2]
        at += 4 + length
    return size, compressed, offset


def data_span(member: Member) -> tuple[int, int]:
    """``(offset, length)`` likely to cover the member's local header and data in one read."""
    return member.header_offset, _LOCAL.size + len(member.name.encode()) * 2 + member.central_extra \
        + member.compressed_size + 64


def read_member(read: Read, member: Member) -> bytes:
    """The member's uncompressed bytes (stored or deflated), checked against its CRC-32 and size."""
    if member.flags & 0x1:
        raise ZipFormatError(f"{member.name} is encrypted")
    if member.size > MAX_MEMBER or member.compressed_size > MAX_MEMBER:
        raise ZipFormatError(f"{member.name} is too large ({member.size} bytes) for core metadata")
    header = read(member.header_offset, _LOCAL.size)
    fields = _LOCAL.unpack(header)
    if fields[0] != _SIG_LOCAL:
        raise ZipFormatError(f"bad local header for {member.name} at offset {member.header_offset}")
    start = member.header_offset + _LOCAL.size + fields[9] + fields[10]
    data = read(start, member.compressed_size)
    if member.method == _STORED:
        content = data
    elif member.method == _DEFLATED:
        inflater = zlib.decompressobj(-15)
        try:
            content = inflater.decompress(data, member.size + 1)
        except zlib.error as exc:
            raise ZipFormatError(f"{member.name}: invalid deflate data ({exc})") from None
    else:
        raise ZipFormatError(f"{member.name}: unsupported compression method {member.method}")
    if len(content) != member.size or zlib.crc32(content) != member.crc:
        raise ZipFormatError(f"{member.name}: CRC-32 or size mismatch (corrupt or truncated data)")
    return content
