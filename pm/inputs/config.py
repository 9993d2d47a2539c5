"""A home's ``config.yaml``: the selection keys and the ``pm`` settings, validated at the boundary.

Keys outside ``plugins``, ``memory``, ``pm`` and ``security`` belong to the agent and are ignored.
Inside ``pm`` an unknown key is an error with a "did you mean", so a typo never silently drops a
setting.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pm.base import yamlfile as _yaml
from pm.base.errors import ConfigError, InputError, Problem, quote
from pm.base.files import TextFile, read_text
from pm.base.lock import seconds
from pm.base.watch import UNWATCHED, Watch

CONFIG_NAME = "config.yaml"
#: The keys of config.yaml that hold a home's selection, with the sections they sit in.
SELECTION_KEYS = ("plugins", "plugins.enabled", "plugins.disabled", "memory", "memory.provider")

#: pm settings and the type each must have.
PM_SETTINGS: dict[str, tuple[type, ...]] = {
    "index_url": (str,),
    "extra_index_urls": (str, list),
    "find_links": (str, list),
    "no_index": (bool,),
    "core": (str,),
    "core_lock": (str,),
    "prereleases": (str,),
    "exclude_newer": (str,),
    "allow_builds": (list,),
    "catalog": (str,),
    "catalog_url": (str,),
    "keep_removed": (list,),
    "lock_timeout": (int, float),
    "assume_yes": (bool,),  # consent to a change's cargo without asking: pm.ops.consent
    "constraints": (list,),  # PEP 508 requirements: pm.inputs.overrides
    "overrides": (list,),
    "json_api_url": (str,),  # where advisories are read (pm.index.advisories)
}


@dataclass(frozen=True)
class HomeConfig:
    """What pm reads from one home's config.yaml (all empty when the file does not exist)."""

    file: Path
    exists: bool = False
    sha256: str | None = None
    enabled: tuple[str, ...] = ()
    disabled: tuple[str, ...] = ()
    memory_provider: str | None = None
    pm: dict[str, Any] = field(default_factory=dict)
    allow_lazy_installs: bool = False
    scan_on_install: bool = True  # plugins.scan_on_install: pm.env.plugin_scan
    #: Which of :data:`SELECTION_KEYS` the file writes (a rollback restores absent ones as absent).
    keys: tuple[str, ...] = ()


def config_data(home: Path) -> dict[str, Any]:
    """The whole of ``<home>/config.yaml`` as a dict for the host's own sections, read within pm's
    bounds; ``{}`` when it is missing or unusable (:func:`read_config` is where a broken config is
    reported)."""
    try:
        return config_mapping(home)
    except ConfigError:
        return {}


def config_mapping(home: Path) -> dict[str, Any]:
    """The whole of ``<home>/config.yaml`` as a dict, read within pm's bounds (a regular file of at
    most 1 MiB inside ``home``, no alias bomb, no duplicate key); ``{}`` when it does not exist or
    holds no mapping. Raises :class:`ConfigError` naming the file when it cannot be read."""
    path = home / CONFIG_NAME
    if not path.exists() and not path.is_symlink():
        return {}
    data = _mapping(path, _source(path, home))
    return data if isinstance(data, dict) else {}


def _source(path: Path, home: Path, watch: Watch = UNWATCHED) -> TextFile:
    try:
        return read_text(path, within=home, watch=watch)
    except InputError as exc:
        raise ConfigError(list(exc.problems)) from exc


def _mapping(path: Path, source: TextFile) -> Any:
    try:
        data = _yaml.load(source.text)
    except _yaml.Error as exc:
        raise ConfigError.one(path, None, f"is not valid YAML: {_yaml.describe(exc)}") from exc
    return {} if data is None else data


def read_config(home: Path, *, watch: Watch = UNWATCHED) -> HomeConfig:
    """Read ``<home>/config.yaml``; raise :class:`ConfigError` listing every problem."""
    path = home / CONFIG_NAME
    if not path.exists() and not path.is_symlink():  # a dangling or looping symlink is not "no config"
        watch.file(path)  # no config: creating one is a change (pm.base.watch)
        return HomeConfig(file=path)
    return parse_config(path, _source(path, home, watch))


def parse_config(path: Path, source: TextFile) -> HomeConfig:
    """The config ``source`` holds, as if read from ``path``; :class:`ConfigError` listing every
    problem (what :func:`read_config` does after reading, and what an editor checks before writing)."""
    data = _mapping(path, source)
    if not isinstance(data, dict):
        raise ConfigError.one(path, None, f"must be a mapping at the top level, got {type(data).__name__}")
    problems: list[Problem] = []
    plugins = _section(data, "plugins", path, problems)
    memory = _section(data, "memory", path, problems)
    pm = _section(data, "pm", path, problems)
    security = _section(data, "security", path, problems)
    problems += _near_misses(path, "plugins", plugins, ("enabled", "disabled", "scan_on_install"))
    scan = plugins.get("scan_on_install", True)
    if not isinstance(scan, bool):
        problems.append(Problem(path, "plugins.scan_on_install", f"must be true or false, got {quote(scan)}"))
    # memory.<name> (a mapping) is that provider's own settings section, never a typo of provider
    sections = {k: v for k, v in memory.items() if not isinstance(v, dict)}
    problems += _near_misses(path, "memory", sections, ("provider",))
    enabled = _names(plugins, "plugins.enabled", "enabled", path, problems)
    disabled = _names(plugins, "plugins.disabled", "disabled", path, problems)
    provider = memory.get("provider")
    if provider is not None and (not isinstance(provider, str) or not provider):
        problems.append(Problem(path, "memory.provider", f"must be a plugin name, got {quote(provider)}"))
        provider = None
    settings = _pm_settings(pm, path, problems)
    if problems:
        raise ConfigError(problems)
    return HomeConfig(
        file=path,
        exists=True,
        sha256=source.sha256,
        enabled=enabled,
        disabled=disabled,
        memory_provider=provider or None,
        pm=settings,
        allow_lazy_installs=security.get("allow_lazy_installs") is True,
        scan_on_install=scan is not False,
        keys=_selection_keys(data),
    )


def _selection_keys(data: dict[str, Any]) -> tuple[str, ...]:
    """Which of :data:`SELECTION_KEYS` ``data`` (a parsed config) writes."""
    found = []
    for key in SELECTION_KEYS:
        section, _, name = key.partition(".")
        value = data.get(section)
        if section in data and (not name or (isinstance(value, dict) and name in value)):
            found.append(key)
    return tuple(found)


def _near_misses(path: Path, section: str, data: dict[str, Any], known: tuple[str, ...]) -> list[Problem]:
    """A key that is nearly one pm reads is an error: a typo must not silently change the selection.
    (Other keys belong to the agent and are left alone.)"""
    problems = []
    for key in data:
        if key in known or not isinstance(key, str):
            continue
        close = _close(key, known, 0.75)
        if close:
            problems.append(Problem(path, f"{section}.{key}", f"unknown key; did you mean {section}.{close[0]}?"))
    return problems


def _section(data: dict[str, Any], key: str, path: Path, problems: list[Problem]) -> dict[str, Any]:
    value = data.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        problems.append(Problem(path, key, f"must be a mapping, got {type(value).__name__} {quote(value)}"))
        return {}
    return value


def _names(section: dict[str, Any], label: str, key: str, path: Path, problems: list[Problem]) -> tuple[str, ...]:
    value = section.get(key)
    if value is None:
        return ()
    if not isinstance(value, list):
        problems.append(Problem(path, label, f"must be a list of plugin names, got {type(value).__name__} {quote(value)}"))
        return ()
    bad = [item for item in value if not isinstance(item, str) or not item]
    if bad:
        hint = " (YAML reads bare on/off/yes/no as booleans: quote the name)" if isinstance(bad[0], bool) else ""
        problems.append(Problem(path, label, f"must be a list of plugin names; {quote(bad[0])} is not one{hint}"))
        return ()
    return tuple(dict.fromkeys(value))


def _bad_value(key: str, value: Any) -> str | None:
    """What a setting of the right type must still be: a list of strings; a number of seconds
    (:func:`pm.base.lock.seconds`, the one rule for timeouts)."""
    if isinstance(value, list) and not all(isinstance(item, str) for item in value):
        return "a list of strings"
    if key == "lock_timeout" and seconds(value) is None:
        return "a finite number, 0 or more"
    return None


def _pm_settings(section: dict[str, Any], path: Path, problems: list[Problem]) -> dict[str, Any]:
    settings: dict[str, Any] = {}
    for key, value in section.items():
        if key not in PM_SETTINGS:
            close = _close(str(key), PM_SETTINGS, 0.6)
            hint = f"; did you mean {quote(close[0])}?" if close else f"; known keys: {', '.join(PM_SETTINGS)}"
            problems.append(Problem(path, f"pm.{key}", f"unknown key{hint}"))
            continue
        types = PM_SETTINGS[key]
        if value is None:
            continue
        if (isinstance(value, bool) and bool not in types) or not isinstance(value, types):
            names = " or ".join(t.__name__ for t in types)
            problems.append(Problem(path, f"pm.{key}", f"must be {names}, got {quote(value)}"))
            continue
        bad = _bad_value(key, value)
        if bad:
            problems.append(Problem(path, f"pm.{key}", f"must be {bad}, got {quote(value)}"))
            continue
        if said := _requirement_problems(path, key, value):
            problems += said
            continue
        settings[key] = value
    return settings


def _requirement_problems(path: Path, key: str, value: Any) -> list[Problem]:
    """pm.constraints and pm.overrides: each entry a usable requirement (:mod:`pm.inputs.overrides`)."""
    if key not in ("constraints", "overrides") or not isinstance(value, list):
        return []
    from pm.inputs.overrides import config_problems

    return config_problems(path, key, value)


def _close(word: str, known: Iterable[str], cutoff: float) -> list[str]:
    """A near match for a "did you mean" (difflib loads only when a key is unknown)."""
    import difflib

    return difflib.get_close_matches(word, known, n=1, cutoff=cutoff)
