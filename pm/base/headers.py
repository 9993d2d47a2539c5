"""Email-style header fields (core metadata: METADATA, PKG-INFO), read as the standard library's
``email.parser.HeaderParser`` (policy compat32) reads them, without importing the ``email``
package: that costs ~6 ms of a command's start (email.parser pulls email.utils, socket and more)
and every build reads the metadata of each candidate.

Same answers as ``HeaderParser().parsestr(text).items()`` for text without surrogates (decoded
with ``errors="replace"``): the header block ends at the first line that is neither a header
line (``Name:``, the name printable ASCII without ``:`` or space) nor a continuation (leading
space or tab) -- a blank line or anything else; a ``From `` line, a line starting with ``:`` and
a continuation without a field before it are skipped; a value keeps its continuation lines
(their line ends too) and loses its leading blanks and trailing line end. Line ends are ``\\r\\n``,
``\\r`` or ``\\n``. ``tests/pm/base/test_headers.py`` holds both readers to the same answers.
"""

from __future__ import annotations

import re

#: A line of the header block (``email.feedparser.headerRE``).
_HEADER_LINE = re.compile(r"From |[\041-\071\073-\176]*:|[\t ]")
_LINES = re.compile(r".*?(?:\r\n|\r|\n)|.+\Z", re.DOTALL)


def header_items(text: str) -> list[tuple[str, str]]:
    """(field name as written, value) of each header field of ``text``, in order."""
    block: list[str] = []
    for match in _LINES.finditer(text):
        line = match.group()
        if not _HEADER_LINE.match(line):
            break
        block.append(line)
    items: list[tuple[str, str]] = []
    name, value = "", [""]
    for line in block:
        if line[0] in " \t":
            if name:
                value.append(line)
            continue
        if name:
            items.append(_field(name, value))
            name = ""
        if line.startswith("From ") or line.startswith(":"):
            continue  # an envelope line, a field without a name: no field (email: a defect)
        name, value = line[: line.index(":")], [line]
    if name:
        items.append(_field(name, value))
    return items


def _field(name: str, lines: list[str]) -> tuple[str, str]:
    first = lines[0].split(":", 1)[1].lstrip(" \t")
    return name, (first + "".join(lines[1:])).rstrip("\r\n")
