"""The notes file: Markdown, one ``## topic`` section per topic, one ``- note (date)`` per note.

The first line carries the format version, ``<!-- markdown_notes format 1.0 -->``. Files of
another major format are refused rather than rewritten (:class:`NotesFormatError`); a newer minor
format is read and kept when the file is written back. Versions are compared with ``packaging``.
A file without the header line (written by hand) is read as the current format.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

__all__ = ["FORMAT", "READABLE", "Note", "Notebook", "NotesFormatError", "parse", "render"]

FORMAT = Version("1.0")
READABLE = SpecifierSet(">=1.0,<2")

_HEADER = re.compile(r"<!--\s*markdown_notes format\s+(\S+)\s*-->")
_DATED = re.compile(r"^(.*\S)\s+\((\d{4}-\d{2}-\d{2})\)$")


class NotesFormatError(ValueError):
    """The notes file is of a format this provider cannot read."""


@dataclass(frozen=True)
class Note:
    text: str
    date: str = ""

    def line(self) -> str:
        return f"- {self.text}" + (f" ({self.date})" if self.date else "")


@dataclass
class Notebook:
    """Topics in file order, each with its notes in file order."""

    format: Version = FORMAT
    topics: dict[str, list[Note]] = field(default_factory=dict)

    def add(self, topic: str, note: Note) -> bool:
        """Add ``note`` under ``topic``; ``False`` when that topic already has the same text."""
        notes = self.topics.setdefault(topic, [])
        if any(n.text == note.text for n in notes):
            return False
        notes.append(note)
        return True

    def all(self) -> list[tuple[str, Note]]:
        return [(topic, note) for topic, notes in self.topics.items() for note in notes]


def parse(text: str, *, source: str = "notes file") -> Notebook:
    """Read a notes file. Raises :class:`NotesFormatError` for an unreadable format."""
    lines = text.splitlines()
    book = Notebook()
    match = _HEADER.search(lines[0]) if lines else None
    if match:
        try:
            book.format = Version(match.group(1))
        except InvalidVersion:
            raise NotesFormatError(
                f"{source}: format {match.group(1)!r} is not a version") from None
        if not READABLE.contains(book.format):
            raise NotesFormatError(
                f"{source}: format {book.format} cannot be read by this provider "
                f"(it reads {READABLE}); it was written by a newer markdown_notes")
    topic = "general"
    for line in lines[1 if match else 0:]:
        if line.startswith("## "):
            topic = line[3:].strip() or "general"
        elif line.startswith("- "):
            body = line[2:].strip()
            dated = _DATED.match(body)
            note = Note(dated.group(1), dated.group(2)) if dated else Note(body)
            book.add(topic, note)
    return book


def render(book: Notebook) -> str:
    """The file text of ``book`` (the format line keeps the newer of the file's and ours)."""
    out = [f"<!-- markdown_notes format {max(book.format, FORMAT)} -->", "# Notes"]
    for topic, notes in book.topics.items():
        out += ["", f"## {topic}"] + [note.line() for note in notes]
    return "\n".join(out) + "\n"
