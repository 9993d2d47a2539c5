"""Secrets of a profile: its ``<home>/.env``.

Reading goes through the secret scope of the current context (:mod:`agent.context`):
:func:`get_secret` reads the ``.env`` of the profile bound there and **fails closed**, raising
:class:`SecretScopeError`, where none is bound. It never falls back to ``os.environ``,
``$HERMES_HOME`` or ``~/.hermes``: a secret read from the wrong profile is worse than none.

The ``.env`` format is the plain subset every dotenv tool agrees on: ``KEY=VALUE`` lines, an
optional ``export`` prefix, ``#`` comment lines, blank lines, values in single quotes (literal),
double quotes (``\\n``, ``\\t``, ``\\"``, ``\\\\`` escapes) or bare (a `` #`` starts a trailing
comment). There is no shell or variable expansion: ``$OTHER`` is the five characters it shows.
When a key repeats, the last line wins.

Writing (:func:`write_secret`) is atomic: temp file in the same folder, mode 0600, fsync,
``os.replace``. Every other line, comments included, is kept byte for byte.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from agent.context import secret_scope
from pm.base.store import Store

__all__ = [
    "ENV_FILE_NAME",
    "SecretScopeError",
    "get_secret",
    "parse_env",
    "read_env",
    "write_secret",
]

ENV_FILE_NAME = ".env"

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_LINE_RE = re.compile(r"\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*\Z", re.DOTALL)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}


class SecretScopeError(LookupError):
    """Raised by :func:`get_secret` when no profile is bound in the current context.

    ``name`` is the secret that was asked for. The message says how to bind a profile.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(
            f"cannot read secret {name!r}: no profile is bound in this context "
            "(run the code inside agent.context.use_home(home), or start the thread with "
            "agent.threads.spawn_context_thread so it carries the caller's profile)"
        )


def _unquote(raw: str) -> str:
    if len(raw) >= 2 and raw[0] == raw[-1] == "'":
        return raw[1:-1]
    if len(raw) >= 2 and raw[0] == raw[-1] == '"':
        return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(0)), raw[1:-1])
    # A bare value: a " #" (whitespace then hash) starts a trailing comment.
    return re.split(r"\s#", raw, maxsplit=1)[0].rstrip()


def _parse_line(line: str) -> tuple[str, str] | None:
    stripped = line.strip()
    if not stripped or stripped.startswith("#"):
        return None
    match = _LINE_RE.match(line)
    if match is None:
        return None  # not a KEY=VALUE line: kept on write, ignored on read
    key, raw = match.groups()
    if raw[:1] in ("'", '"'):
        quote = raw[0]
        end = _closing_quote(raw, quote)
        if end > 0:
            raw = raw[: end + 1]  # drop whatever follows the closing quote (a comment)
    return key, _unquote(raw)


def _closing_quote(raw: str, quote: str) -> int:
    i = 1
    while i < len(raw):
        if quote == '"' and raw[i] == "\\":
            i += 2
            continue
        if raw[i] == quote:
            return i
        i += 1
    return -1


def parse_env(text: str) -> dict[str, str]:
    """Parse ``.env`` text into ``{KEY: value}``. Lines that are not ``KEY=VALUE`` are ignored;
    the last occurrence of a key wins. Pure: no I/O, no expansion."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        parsed = _parse_line(line)
        if parsed is not None:
            values[parsed[0]] = parsed[1]
    return values


def read_env(home: str | os.PathLike[str]) -> dict[str, str]:
    """The parsed ``<home>/.env``; ``{}`` when the file does not exist. Undecodable bytes are
    replaced, never fatal."""
    path = Path(home) / ENV_FILE_NAME
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return {}
    return parse_env(text)


def get_secret(name: str, default: str | None = None) -> str | None:
    """The value of ``name`` in the ``.env`` of the profile bound in the current context.

    Returns ``default`` when the bound profile's ``.env`` lacks the key (or does not exist).
    Raises :class:`SecretScopeError` when no profile is bound — never reads another profile's
    file or the process environment instead. The file is read on every call, so a value written
    by ``hermes memory setup`` is seen at once.
    """
    scope = secret_scope()
    if scope is None:
        raise SecretScopeError(name)
    return read_env(scope).get(name, default)


def _format_value(value: str) -> str:
    if value and re.fullmatch(r"[A-Za-z0-9_./:@+,=-]+", value):
        return value
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    escaped = escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return f'"{escaped}"'


def write_secret(home: str | os.PathLike[str], name: str, value: str) -> Path:
    """Set ``name=value`` in ``<home>/.env`` atomically and return the file's path.

    The first line that sets ``name`` is replaced in place, later duplicates of it are dropped
    (so the file has one answer), and every other line is kept byte for byte; a new key is
    appended. The file ends up with mode 0600 whatever it had before. The home is created if
    missing. Raises ``ValueError`` for a name that is not an environment-variable name.
    """
    if not _NAME_RE.match(name):
        raise ValueError(f"invalid secret name {name!r}: expected letters, digits and '_'")
    home_path = Path(home)
    home_path.mkdir(parents=True, exist_ok=True)
    path = home_path / ENV_FILE_NAME
    try:
        old = path.read_bytes().decode("utf-8", errors="surrogateescape")
    except FileNotFoundError:
        old = ""
    new_line = f"{name}={_format_value(value)}"
    lines = old.splitlines(keepends=True)
    out: list[str] = []
    replaced = False
    for line in lines:
        parsed = _parse_line(line)
        if parsed is not None and parsed[0] == name:
            if not replaced:
                ending = line[len(line.rstrip("\r\n")) :] or "\n"
                out.append(new_line + ending)
                replaced = True
            continue
        out.append(line)
    if not replaced:
        if out and not out[-1].endswith(("\n", "\r")):
            out[-1] += "\n"
        out.append(new_line + "\n")
    _atomic_write(path, "".join(out).encode("utf-8", errors="surrogateescape"))
    return path


def _atomic_write(path: Path, data: bytes) -> None:
    """Through pm's one atomic writer, confined to the home's folder; secrets are 0600."""
    Store(path.parent).write_bytes(path, data, mode=0o600)
