"""The agent's own settings in a home's ``config.yaml`` (the sections pm ignores).

Read forgivingly: a missing or unreadable file, or a key of the wrong type, gives the default (pm
reports a broken config loudly on its own path). Booleans count only when they are YAML
booleans, so ``"false"`` in quotes is not ``true``. Dotted keys address nested sections:
``setting(data, "hooks.output_spill.max_chars", 10_000)``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, TypeVar, cast

from pm.inputs.config import config_data

__all__ = ["flag", "load", "setting"]

T = TypeVar("T")


def load(home: str | os.PathLike[str]) -> dict[str, Any]:
    """``<home>/config.yaml`` as a dict; ``{}`` when missing or unreadable."""
    # bounded: a FIFO or an alias bomb in config.yaml cannot hold the host
    return config_data(Path(home))


def setting(data: dict[str, Any], key: str, default: T) -> T:
    """The value at dotted ``key`` when it has the type of ``default`` (``int`` for a ``float``
    default too; never a ``bool`` for a number); else ``default``."""
    value: Any = data
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            return default
        value = value[part]
    wanted: tuple[type, ...] = (int, float) if isinstance(default, float) else (type(default),)
    if isinstance(value, bool) and not isinstance(default, bool):
        return default
    return cast(T, value) if isinstance(value, wanted) else default


def flag(data: dict[str, Any], key: str) -> bool:
    """Whether ``key`` is exactly ``true``."""
    return setting(data, key, False) is True
