"""Exceptions that carry data.

Every error pm raises on purpose is a :class:`PmError`: it knows its exit code and carries the
facts (file, key, value, URL) as attributes. Formatting into sentences happens in one place
(``str(error)`` for one line, the CLI and receipts for the rest); nothing here logs or prints.
"""

from __future__ import annotations

import reprlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_CONFLICT = 3
EXIT_NOT_READY = 4


_EXCERPT = reprlib.Repr()
for _name, _limit in (("maxlevel", 3), ("maxtuple", 4), ("maxlist", 4), ("maxdict", 4), ("maxset", 4),
                      ("maxfrozenset", 4), ("maxstring", 80), ("maxlong", 40), ("maxother", 80)):
    setattr(_EXCERPT, _name, _limit)


def quote(value: Any) -> str:
    """A bounded excerpt of an untrusted value for a message, like ``repr`` for small values:
    long strings and deep or long containers are cut (``'aaaa...aaa'``, ``[[[...]]]``), so a
    message never carries a whole hostile value."""
    return _EXCERPT.repr(value)


class PmError(Exception):
    """Base of every deliberate pm failure. Each class carries what a receipt says of it: its
    ``kind`` (a stable kebab-case word, the receipt's ``failure.kind``; the schema's enum is
    generated from these by ``scripts/dev/failure_kinds.py``), its ``outcome`` (``failed`` or
    ``refused``) and ``exit_code``, what the CLI returns."""

    kind = "error"
    outcome = "failed"
    exit_code = EXIT_FAILURE


class UsageError(PmError):
    """The command line itself is wrong."""

    kind = "usage"
    exit_code = EXIT_USAGE


@dataclass(frozen=True)
class Problem:
    """One thing wrong with one key of one file."""

    file: Path
    key: str | None
    message: str
    line: int | None = None  # where the key is, when the file's reader knows (YAML does)

    def __str__(self) -> str:
        where = f"{self.file}" + (f":{self.line}" if self.line else "") + (f": {self.key}" if self.key else "")
        return f"{where}: {self.message}"


class InputError(PmError):
    """A file pm reads (manifest, pyproject, config) is unusable; ``problems`` lists every issue.

    Raised after validating a file completely, so one error reports all of its problems.
    """

    kind = "input"

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(str(p) for p in self.problems))

    @classmethod
    def one(cls, file: Path, key: str | None, message: str) -> "InputError":
        return cls([Problem(file, key, message)])


class ConfigError(InputError):
    """The primary home's ``config.yaml`` cannot be used."""

    kind = "config"


class TargetError(PmError):
    """The target interpreter could not be inspected."""

    kind = "target"

    def __init__(self, python: str, detail: str) -> None:
        self.python = python
        self.detail = detail
        super().__init__(f"cannot inspect target interpreter {python!r}: {detail}")
