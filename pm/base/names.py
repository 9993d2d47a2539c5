"""Plugin names as pm accepts them from people and files, and untrusted text made safe to print.

A plugin name (``notes``, ``tools/notes``) is a folder name under ``plugins/``: it must fit in a
file name, hold no control character (a ``\\n`` would forge a table row, ``\\x1b[2J`` clear the
screen), and never climb out of ``plugins/``. A name that config.yaml could not hold plainly is
refused before anything is written or installed.
"""

from __future__ import annotations

from pm.base.errors import UsageError, quote

#: The host's own memory provider: always there, never installed, never a plugin root.
BUILTIN_PROVIDER = "builtin"

#: Longest plugin name (each ``/``-separated part); file systems stop at 255 bytes.
MAX_NAME = 128


class BadName(UsageError):
    """A plugin name pm cannot use; ``name`` (bounded in the message) and ``why``."""

    kind = "bad-name"

    def __init__(self, name: str, why: str, label: str = "plugin name") -> None:
        self.name = name
        self.why = why
        super().__init__(f"{label} {quote(name)} {why}")


def check_name(name: str, label: str = "plugin name") -> str:
    """``name`` when it can be a plugin name; raises :class:`BadName` saying why not."""
    if not name or not name.strip():
        raise BadName(name, "is empty", label)
    if not name.isprintable():
        raise BadName(name, "contains a control or unprintable character", label)
    parts = name.split("/")
    if name.startswith(("/", "~", "-")) or "\\" in name or any(p in ("", ".", "..") for p in parts):
        raise BadName(name, "is not a folder name under plugins/ (no '..', '/', '~' or '-' at the start)", label)
    if any(len(p) > MAX_NAME or len(p.encode("utf-8", "surrogateescape")) > 255 for p in parts):
        raise BadName(name, f"is {len(name)} characters; a plugin name is at most {MAX_NAME}", label)
    return name


def printable(text: str) -> str:
    """``text`` with every control or unprintable character written as an escape (``\\n``,
    ``\\x1b``), so untrusted names cannot forge lines or drive a terminal."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
