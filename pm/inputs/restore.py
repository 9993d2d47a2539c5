"""Write a recorded selection (:mod:`pm.inputs.recorded`) back into a ``config.yaml``'s text, through
the config editor (:mod:`pm.inputs.config_edit`): comments, key order and line endings kept; the
result checked as pm reads a config before anyone writes it. ``hermes pm rollback`` uses it.
"""

from __future__ import annotations

from typing import Any

from pm.base import yamlfile as _yaml
from pm.base.files import TextFile
from pm.inputs.config import parse_config
from pm.inputs.config_edit import ConfigEditError, change_list, set_list, set_mapping, set_value
from pm.inputs.recorded import SavedHome


def restored(text: str, saved: SavedHome) -> str:
    """``text`` (a ``config.yaml``) with ``saved``'s selection written back: each list edited item by
    item (comments on kept items, and items commented out by an earlier removal, come back as they
    were), absent keys and sections removed again; every other line stays. Raises
    :class:`ConfigEditError` when the result would not hold exactly ``saved``'s selection."""
    keys = saved.keys
    text = _list(text, "enabled", saved.enabled, keys)
    text = _list(text, "disabled", saved.disabled, keys)
    text = _provider(text, saved.memory_provider, keys)
    for section in ("plugins", "memory"):
        if section not in keys:
            text = _drop_if_empty(text, section)
    new = parse_config(saved.config, TextFile(saved.config, text.encode(), text))
    if not saved.matches(new):
        raise ConfigEditError(f"{saved.config}: pm cannot write the recorded selection back safely; "
                              f"set plugins.enabled to {list(saved.enabled)!r}, plugins.disabled to "
                              f"{list(saved.disabled)!r} and memory.provider to {saved.memory_provider!r} by hand")
    return text


def _list(text: str, key: str, names: tuple[str, ...], keys: tuple[str, ...]) -> str:
    section = _section(text, "plugins")
    if f"plugins.{key}" not in keys:
        return _without(text, "plugins", key, keys) if key in section else text
    current = [str(n) for n in section.get(key) or []]
    for name in names:  # adds first: a line an earlier removal commented out comes back in place
        if name not in current:
            text = change_list(text, key, add=name)
    for name in current:
        if name not in names:
            text = change_list(text, key, remove=name)
    now = _section(text, "plugins")
    if key not in now or [str(n) for n in now[key] or []] != list(names):
        text = set_list(text, key, list(names))  # another order, or the key written anew
    return text


def _provider(text: str, provider: str | None, keys: tuple[str, ...]) -> str:
    section = _section(text, "memory")
    if "memory.provider" not in keys:
        return _without(text, "memory", "provider", keys) if "provider" in section else text
    if section.get("provider") == provider and "provider" in section:
        return text
    if provider is None:  # the file wrote `provider:` with no name
        data = _mapping(text)
        return set_mapping(text, {**data, "memory": {**section, "provider": None}})
    return set_value(text, "memory", "provider", provider)


def _without(text: str, section: str, key: str, keys: tuple[str, ...]) -> str:
    """``text`` without ``section.key``; a section left empty goes too, unless ``keys`` (what the
    recorded file wrote) has it (then it stays, as ``section:``)."""
    data = _mapping(text)
    rest = {k: v for k, v in _section(text, section).items() if k != key}
    if rest or section in keys:
        return set_mapping(text, {**data, section: rest or None})
    return set_mapping(text, {k: v for k, v in data.items() if k != section})


def _drop_if_empty(text: str, section: str) -> str:
    data = _mapping(text)
    if section in data and not data[section]:
        return set_mapping(text, {k: v for k, v in data.items() if k != section})
    return text


def _mapping(text: str) -> dict[str, Any]:
    try:
        data = _yaml.load(text)
    except _yaml.Error as exc:
        raise ConfigEditError(f"config.yaml is not valid YAML, so pm cannot edit it: {_yaml.describe(exc)}") from None
    return data if isinstance(data, dict) else {}


def _section(text: str, name: str) -> dict[str, Any]:
    value = _mapping(text).get(name)
    return value if isinstance(value, dict) else {}
