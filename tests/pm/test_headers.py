"""pm.base.headers: core metadata's header fields read as email.parser.HeaderParser reads them, held
to the standard library's answers on every shape of header block, well-formed or not."""

from __future__ import annotations

import itertools
import random
from email.parser import HeaderParser

import pytest

from pm.base.headers import header_items

TEXTS = [
    "",
    "\n",
    "Metadata-Version: 2.1\nName: alpha\nVersion: 1.0\n\nDescription body\nName: not-a-field\n",
    "Name: alpha\r\nVersion: 1.0\r\nRequires-Dist: beta>=1;\r\n  extra == 'x'\r\n\r\nbody",
    "Name: alpha\rVersion: 1.0\rRequires-Dist: beta\r\tgamma\r\rbody",  # old Mac line ends
    "Name:alpha\nVersion:\t 1.0  \nSummary:\n",  # no blank after the colon, an empty value
    "Name: alpha\nRequires-Dist: a\nRequires-Dist: b\nrequires-dist: c\nVersion: 1.0",  # no final line end
    "Name: alpha\nThis line has no colon\nVersion: 1.0\n",  # the header block ends there
    "Name: alpha\nBad Name: space before the colon\nVersion: 1.0\n",
    "From someone Tue Jan 1\nName: alpha\nVersion: 1.0\n",  # an envelope line first
    "Name: alpha\nFrom someone\n  continued\nVersion: 1.0\n",  # misplaced envelope, then a continuation
    "Name: alpha\nVersion: 1.0\nFrom the end",
    "From: someone@example.org\nName: alpha\n",  # From: is a field
    "  leading continuation\nName: alpha\n",
    ": no name\n  continued\nName: alpha\n",
    "Name: a:b:c\nKeywords: x, y\n    z\n\t w\n",
    "Name: \u00e9l\u00e8ve\nSummary: caf\u00e9 \ufffd\nVersion: 1\n",
    "Name: alpha\x0bbeta\nSummary: a\u2028b\x85c\x1cd\x0ce\n",  # boundaries str.splitlines knows, email does not
    "Name: alpha\n\n\nVersion: 1.0\n",
    "Name: alpha\n \nVersion: 1.0\n",  # a blank continuation line
    "Name: alpha\r\n\r\nVersion: 1.0\r\n",
    "Name: alpha\n\r\nVersion: 1.0\n",
    "Name: alpha   \n\t\n",
    "X-\x7f: control\nName: alpha\n",
    "Name: alpha\nDescription: one\n        |two\n        |\n\nbody",
]


def stdlib(text: str) -> list[tuple[str, str]]:
    return [(k, str(v)) for k, v in HeaderParser().parsestr(text).items()]


@pytest.mark.parametrize("text", TEXTS)
def test_fields_are_the_standard_librarys(text: str) -> None:
    assert header_items(text) == stdlib(text)


def test_long_texts_across_the_standard_readers_chunks() -> None:
    """The email parser reads 8 KiB at a time; a line end split between chunks changes nothing."""
    for size in (8190, 8191, 8192, 8193):
        for end in ("\n", "\r\n", "\r"):
            text = f"Name: alpha{end}Summary: {'x' * (size - 20)}{end}Version: 1.0{end}{end}body"
            assert header_items(text) == stdlib(text)


def test_random_header_blocks_read_the_same() -> None:
    pieces = ["Name", "Requires-Dist", "From", "From ", ":", " ", "\t", "a", "b c", "\n", "\r", "\r\n",
              "\n\n", "x:y", "\u00e9", "\x0b", "=", ";"]
    rng = random.Random(22)
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 24)))
        assert header_items(text) == stdlib(text), text


def test_every_short_text_over_a_small_alphabet_reads_the_same() -> None:
    for length in range(6):
        for letters in itertools.product(["N", ":", " ", "\n", "\r", "F"], repeat=length):
            text = "".join(letters)
            assert header_items(text) == stdlib(text), repr(text)
