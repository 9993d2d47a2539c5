"""TOML for pm's own files: :func:`load`, the one reading of a TOML file pm parses
(pyproject.toml, pylock.toml, uv.toml) after :func:`pm.base.files.read_text` has read it within
bounds; errors name the file (the TOML side of :mod:`pm.base.yamlfile`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pm.base.errors import InputError


def load(path: Path, text: str) -> dict[str, Any]:
    """The document ``text`` (read from ``path`` by :func:`pm.base.files.read_text`, so bounded in
    size) holds; :class:`~pm.base.errors.InputError` naming ``path`` when it is not valid TOML or nests
    too deeply for the parser (tomllib recurses once per level of nested arrays or inline tables)."""
    import tomllib  # only when a TOML file is read

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError.one(path, None, f"is not valid TOML: {exc}") from None
    except RecursionError:
        raise InputError.one(path, None, "is not valid TOML: it nests arrays or tables too deeply") from None
