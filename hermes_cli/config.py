"""``hermes_cli.config``: read and write a home's ``config.yaml`` the one safe way.

The guide: every write to ``config.yaml`` goes through ``save_config(..., merge_existing=True)``.
With ``merge_existing`` the given mapping is merged key by key (nested mappings recursively) into
what the file holds now, so a provider that saves ``{"memory": {"my-provider": {...}}}`` never
drops another section. Writes are atomic and serialized within the process; the result must still
be a valid config (:func:`pm.inputs.config.read_config`), else nothing is written.
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from agent.context import active_home
from pm.base.errors import ConfigError
from pm.base.store import Store
from pm.inputs.config import CONFIG_NAME, read_config

__all__ = ["ConfigWriteError", "config_path", "load_config", "save_config"]

_LOCK = threading.Lock()


class ConfigWriteError(ValueError):
    """The merged config would be invalid; ``path`` was left as it was. ``problems`` are pm's."""

    def __init__(self, path: Path, problems: str) -> None:
        self.path = path
        self.problems = problems
        super().__init__(f"{path}: not written, the result would be invalid: {problems}")


def config_path(home: str | os.PathLike[str] | None = None) -> Path:
    """``<home>/config.yaml`` (default home: the active one)."""
    return Path(home) / CONFIG_NAME if home is not None else active_home() / CONFIG_NAME


def load_config(home: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The whole ``config.yaml`` as a dict (``{}`` when it does not exist)."""
    path = config_path(home)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    return data if isinstance(data, dict) else {}


def _merge(base: dict[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in update.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def save_config(config: Mapping[str, Any], home: str | os.PathLike[str] | None = None, *,
                merge_existing: bool = True) -> Path:
    """Write ``config`` to ``<home>/config.yaml`` (merged into the current file when
    ``merge_existing``) atomically; returns the path. Raises :class:`ConfigWriteError` when the
    result is not a valid config."""
    path = config_path(home)
    with _LOCK:
        data = _merge(load_config(path.parent), config) if merge_existing else dict(config)
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        _validate(text, path)
        Store(path.parent).write_bytes(path, text.encode("utf-8"))
    return path


def _validate(text: str, path: Path) -> None:
    """pm's own reading of ``text`` as a config, from a scratch folder beside ``path``."""
    with tempfile.TemporaryDirectory(prefix=".config-check-", dir=path.parent) as scratch:
        (Path(scratch) / CONFIG_NAME).write_text(text, encoding="utf-8")
        try:
            read_config(Path(scratch))
        except ConfigError as exc:
            raise ConfigWriteError(path, str(exc)) from exc
