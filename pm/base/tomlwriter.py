"""A small TOML writer for the documents pm emits (pylock.toml): tables, arrays of tables,
strings, integers, booleans, datetimes, lists and inline tables. Keys are written in insertion order.

Strings are TOML basic strings: every control character TOML forbids raw (U+0000–U+001F except
tab, and U+007F) is escaped; a lone surrogate (a non-UTF-8 file name decoded by the OS layer) is
written as the text ``\\udcXX``, since TOML cannot carry it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any


def dumps(document: Mapping[str, Any]) -> str:
    lines: list[str] = []
    _table(lines, [], document)
    return "\n".join(lines).lstrip("\n") + "\n"


def _is_table(value: Any) -> bool:
    return isinstance(value, Mapping)


def _is_table_array(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, Mapping) for v in value)


def _table(lines: list[str], path: list[str], table: Mapping[str, Any]) -> None:
    for key, value in table.items():
        if value is None or _is_table(value) or _is_table_array(value):
            continue
        lines.append(f"{_key(key)} = {_value(value)}")
    for key, value in table.items():
        if _is_table(value):
            if not value or any(not (_is_table(v) or _is_table_array(v)) for v in value.values()):
                lines += ["", f"[{'.'.join(map(_key, [*path, key]))}]"]  # else its sub-tables define it
            _table(lines, [*path, key], value)
        elif _is_table_array(value):
            for item in value:
                lines += ["", f"[[{'.'.join(map(_key, [*path, key]))}]]"]
                _table(lines, [*path, key], item)


def _key(key: str) -> str:
    bare = key.replace("-", "").replace("_", "").isalnum() and key.isascii()
    return key if bare else _string(key)


def _string(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's, except that TOML also forbids raw DEL)."""
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items() if v is not None) + "}"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")
