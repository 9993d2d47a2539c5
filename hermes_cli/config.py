"""``hermes_cli.config``: read and write a home's ``config.yaml`` the one safe way.

The guide: every write to ``config.yaml`` goes through ``save_config(..., merge_existing=True)``.
With ``merge_existing`` the given mapping is merged key by key (nested mappings recursively) into
what the file holds now, so a provider that saves ``{"memory": {"my-provider": {...}}}`` never
drops another section. Writes are atomic and serialized (between threads and, under the home lock,
between processes); the result must still be a valid config (:func:`pm.inputs.config.read_config`), else
nothing is written.

Underneath is pm's own reading and writing of config.yaml: the bounded reader
(:func:`pm.inputs.config.config_mapping`: at most 1 MiB, no alias bomb, a duplicated key refused rather
than one copy silently dropped) and the one editor (:func:`pm.ops.config_file.edit_config` with
:func:`pm.inputs.config_edit.set_mapping`): only the keys that change are rewritten, so comments, key
order and line endings elsewhere in the file stay as they were.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agent.context import active_home
from pm.base.errors import ConfigError
from pm.inputs.config import CONFIG_NAME, config_mapping
from pm.inputs.config_edit import ConfigEditError, set_mapping

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
    """The whole ``config.yaml`` as a dict (``{}`` when it does not exist). Read within pm's
    bounds: a file pm cannot read (too large, not a regular file, invalid YAML, a duplicated key)
    raises :class:`pm.base.errors.ConfigError` naming the file and the line."""
    return config_mapping(config_path(home).parent)


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
    result is not a valid config, or when the current file cannot be read safely (a duplicated
    key, for one: refused, never dropped)."""
    from pm.ops.config_file import edit_config  # the lock and the store: only when writing

    path = config_path(home)
    folder = Path(os.path.abspath(path.parent))

    def edit(text: str) -> str:
        current = config_mapping(folder)
        wanted = _merge(current, config) if merge_existing else _plain(config)
        return set_mapping(text, wanted)

    with _LOCK:
        folder.mkdir(parents=True, exist_ok=True)
        try:
            edit_config(folder, edit)
        except (ConfigError, ConfigEditError) as exc:
            raise ConfigWriteError(path, str(exc)) from exc
    return path


def _plain(config: Mapping[str, Any]) -> dict[str, Any]:
    return {key: _plain(value) if isinstance(value, Mapping) else value for key, value in config.items()}
