"""The plugin selection a generation was built from, as its record keeps it, and written back.

A generation's ``generation.json`` keeps, under ``selection``, one entry per home of the
environment (the primary, then each profile): ``plugins.enabled``, ``plugins.disabled`` and
``memory.provider`` as that home's ``config.yaml`` held them when the generation was built, and
which of those keys (and their sections) the file wrote at all. ``hermes pm rollback`` writes them
back with :func:`pm.inputs.restore.restored`, through the config editor (:mod:`pm.inputs.config_edit`: comments, key
order and line endings kept), so the next sync finds the selection the generation was built for.

A generation built before pm recorded this has no ``selection``: :func:`saved_selection` is None
and nothing is guessed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pm.base.names import BUILTIN_PROVIDER
from pm.inputs.config import CONFIG_NAME, HomeConfig
from pm.inputs.selection import HomeSelection, Selection


@dataclass(frozen=True)
class SavedHome:
    """One home's selection keys as a generation's record keeps them."""

    home: Path
    profile: str | None  # None for the primary home
    enabled: tuple[str, ...] = ()
    disabled: tuple[str, ...] = ()
    memory_provider: str | None = None
    keys: tuple[str, ...] = ()  # which selection keys the file wrote (pm.inputs.config.SELECTION_KEYS)

    @classmethod
    def of(cls, home: HomeSelection) -> SavedHome:
        config = home.config
        return cls(home.home, home.name or None, config.enabled, config.disabled, config.memory_provider,
                   config.keys)

    @classmethod
    def from_json(cls, data: Any) -> SavedHome:
        """Raises ValueError when ``data`` is not an entry :meth:`to_json` wrote."""
        if not isinstance(data, dict) or not isinstance(data.get("home"), str):
            raise ValueError(f"not a recorded home selection: {data!r}")
        return cls(Path(data["home"]), _text(data.get("profile")), _names(data.get("enabled")),
                   _names(data.get("disabled")), _text(data.get("memory_provider")), _names(data.get("keys")))

    def to_json(self) -> dict[str, Any]:
        return {"home": str(self.home), "profile": self.profile, "enabled": list(self.enabled),
                "disabled": list(self.disabled), "memory_provider": self.memory_provider, "keys": list(self.keys)}

    @property
    def config(self) -> Path:
        return self.home / CONFIG_NAME

    @property
    def label(self) -> str:
        """How a person names this home: ``home``, or ``profile NAME``."""
        return "home" if self.profile is None else f"profile {self.profile}"

    def selects(self) -> tuple[str, ...]:
        """What it enables: ``plugins.enabled`` minus ``plugins.disabled`` (by key or leaf name), then
        ``memory.provider`` when it is not listed already."""
        kept = [n for n in self.enabled if n not in self.disabled and n.rsplit("/", 1)[-1] not in self.disabled]
        provider = self.memory_provider
        return (*kept, *([f"memory.provider={provider}"] if provider and provider not in kept else []))

    def for_file(self, now: HomeConfig) -> SavedHome:
        """What to write back to a file that holds ``now``: this selection, except that the
        ``memory.provider`` it names now stays when neither it nor the recorded one selects a
        plugin that the recorded ``plugins.enabled`` does not (listed there, by key or leaf name, or
        the host's own provider). ``hermes memory setup`` names the provider after the generation
        that admitted it was built; a rollback past a later change must not take it away."""
        if now.memory_provider == self.memory_provider or not (
                self._lists(now.memory_provider) and self._lists(self.memory_provider)):
            return self
        keys = (*(k for k in self.keys if not k.startswith("memory")), *(k for k in now.keys if k.startswith("memory")))
        return replace(self, memory_provider=now.memory_provider, keys=keys)

    def _lists(self, provider: str | None) -> bool:
        return provider is None or provider == BUILTIN_PROVIDER or any(
            provider in (name, name.rsplit("/", 1)[-1]) for name in self.enabled)

    def matches(self, config: HomeConfig) -> bool:
        """Whether ``config`` holds exactly this selection."""
        return (config.enabled, config.disabled, config.memory_provider) == (
            self.enabled, self.disabled, self.memory_provider)


def record_of(selection: Selection) -> list[dict[str, Any]]:
    """The ``selection`` entry of a new generation's record."""
    return [SavedHome.of(home).to_json() for home in selection.homes]


def saved_selection(record: dict[str, Any]) -> tuple[SavedHome, ...] | None:
    """The selection a generation's record keeps; None when it keeps none (built by an older pm)
    or what it keeps is not readable."""
    entries = record.get("selection")
    if not isinstance(entries, list):
        return None
    try:
        return tuple(SavedHome.from_json(entry) for entry in entries)
    except ValueError:
        return None


def _names(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"not a list of names: {value!r}")
    return tuple(value)


def _text(value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ValueError(f"not a name: {value!r}")
    return value
