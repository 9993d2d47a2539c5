"""Byte-range answers (RFC 9110) for :class:`~pm.testing.index.LocalIndex`: pure, bytes in."""

from __future__ import annotations

import re
from http import HTTPStatus

_RANGE = re.compile(r"\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*")


def answer_range(data: bytes, asked: str | None) -> tuple[int, bytes, dict[str, str]]:
    """``(status, body, headers)`` for a GET of ``data`` with Range header ``asked`` (RFC 9110):
    one ``first-last``, ``first-`` or suffix ``-length`` range gets 206 with Content-Range; an
    unsatisfiable one 416; no header, a malformed one or several ranges, 200 with everything."""
    whole = (HTTPStatus.OK, data, {"Accept-Ranges": "bytes"})
    match = _RANGE.fullmatch(asked or "")
    if match is None or match.groups() == ("", ""):
        return whole
    size, (first_text, last_text) = len(data), match.groups()
    if first_text == "":  # suffix: the last N bytes
        first, last = max(0, size - int(last_text)), size - 1
        unsatisfiable = int(last_text) == 0 or size == 0
    else:
        first = int(first_text)
        last = min(int(last_text), size - 1) if last_text else size - 1
        if last_text and int(last_text) < first:
            return whole  # invalid: ignored
        unsatisfiable = first >= size
    if unsatisfiable:
        return HTTPStatus.REQUESTED_RANGE_NOT_SATISFIABLE, b"", {
            "Accept-Ranges": "bytes", "Content-Range": f"bytes */{size}"}
    return HTTPStatus.PARTIAL_CONTENT, data[first:last + 1], {
        "Accept-Ranges": "bytes", "Content-Range": f"bytes {first}-{last}/{size}"}
