"""People's messages to stderr, data to stdout; colour only on a terminal and never with NO_COLOR."""

from __future__ import annotations

import json
import os
import sys
from typing import Any, TextIO

_CODES = {"bold": "1", "red": "31", "green": "32", "yellow": "33", "dim": "2"}


def use_colour(stream: TextIO) -> bool:
    return stream.isatty() and not os.environ.get("NO_COLOR")


def paint(text: str, style: str, stream: TextIO | None = None) -> str:
    stream = sys.stdout if stream is None else stream
    if not use_colour(stream):
        return text
    return f"\x1b[{_CODES[style]}m{text}\x1b[0m"


def say(message: str) -> None:
    """A message for a person (stderr)."""
    print(message, file=sys.stderr)


def emit_json(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2, sort_keys=False, default=str)
    sys.stdout.write("\n")


def table(rows: list[list[str]], headers: list[str]) -> str:
    widths = [max(len(str(c)) for c in column) for column in zip(headers, *rows)]
    lines = ["  ".join(h.upper().ljust(w) for h, w in zip(headers, widths)).rstrip()]
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines)
