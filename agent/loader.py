"""Loading the memory provider a home names, and only that one, and only once it is ready.

:func:`load_memory_provider` is the one path from a plugin folder to a running provider:

1. read ``memory.provider`` from the home's ``config.yaml`` (:func:`pm.inputs.config.read_config`);
2. find it by the precedence of :mod:`agent.discovery` (no import);
3-5. pass the gate (:func:`agent.gate.ready`): refuse it loudly when unusable, activate this
   process's generation if not done yet, ask pm's readiness whether its declared requirements
   are met there; if not, raise :class:`~agent.errors.ProviderNotReady` naming the
   plugin, each unmet requirement and the command to run — never fall back to another provider;
6. import its package (:mod:`agent.imports`) and call ``register(ctx)`` with a
   :class:`PluginContext`: ``ctx.register_memory_provider(instance)`` and
   ``ctx.register_skill(name, path, description)``.

Each load calls ``register`` again, so each load gets a fresh instance (the package itself is
executed once per process). :func:`load_into` hands it to a :class:`MemoryManager`, which refuses
an instance another profile's manager holds (``memory_provider_instance_shared``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from agent import bounded
from agent import skills as skill_table
from agent.context import active_home
from agent.discovery import ProviderInfo, discover_memory_providers, find_memory_provider
from agent.errors import ProviderLoadFailed, ProviderNotFound
from agent.gate import ACTIVE, ProviderReadiness, ready
from agent.imports import import_package
from agent.memory_manager import MemoryManager
from agent.memory_provider import MemoryProvider
from agent.skills import Skill, qualify
from pm.env.generations import Generation
from pm.inputs.config import read_config

__all__ = ["ACTIVE", "LoadedProvider", "PluginContext", "load_into", "load_memory_provider",
           "resolve_provider"]

logger = logging.getLogger(__name__)

class PluginContext:
    """What a memory plugin's ``register(ctx)`` receives. Collects, validates, runs nothing."""

    def __init__(self, info: ProviderInfo) -> None:
        self._info = info
        self.providers: list[MemoryProvider] = []
        self.skills: dict[str, Skill] = {}

    @property
    def plugin_name(self) -> str:
        return self._info.name

    @property
    def plugin_root(self) -> Path:
        return self._info.root

    def register_memory_provider(self, provider: MemoryProvider) -> None:
        """Offer ``provider`` (a fresh :class:`MemoryProvider` instance) for this load."""
        if not isinstance(provider, MemoryProvider):
            raise TypeError(f"register_memory_provider expects a MemoryProvider, got "
                            f"{type(provider).__name__}")
        self.providers.append(provider)

    def register_skill(self, name: str, path: str | os.PathLike[str],
                       description: str = "") -> None:
        """Offer the skill file ``path`` (relative to the plugin root, or absolute inside it) as
        ``<provider>:<name>``. Raises ``ValueError`` for a bad name, a repeated name, or a path
        that is missing or outside the plugin root."""
        qualified = qualify(self._info.name, name)
        if qualified in self.skills:
            raise ValueError(f"skill {qualified!r} registered twice")
        root = self._info.root.resolve()
        target = (root / path).resolve()
        if target != root and root not in target.parents:
            raise ValueError(f"skill {qualified!r}: {path!s} is outside the plugin root {root}")
        if not target.exists():
            raise ValueError(f"skill {qualified!r}: {target} does not exist")
        self.skills[qualified] = Skill(self._info.name, name, target, str(description))


@dataclass(frozen=True)
class LoadedProvider:
    """A provider ready to hand to a manager: the ``provider`` instance (fresh for this load),
    where it came from (``info``), why it was judged ready, its ``module`` and ``skills``."""

    info: ProviderInfo
    provider: MemoryProvider
    readiness: ProviderReadiness
    module: ModuleType
    skills: Mapping[str, Skill] = field(default_factory=dict)


def resolve_provider(home: Path, name: str | None = None, *, env: Mapping[str, str] | None = None,
                     cwd: Path | None = None) -> ProviderInfo | None:
    """The provider ``name`` (default: ``memory.provider`` of ``home``'s config) would load, or
    ``None`` when no provider is configured. Raises :class:`ProviderNotFound`."""
    config = read_config(Path(home))
    wanted = name or config.memory_provider
    if wanted is None:
        return None
    info = find_memory_provider(Path(home), wanted, env=env, cwd=cwd)
    if info is None:
        from pm.inputs.settings import environment_home
        from pm.ops.providers import provider_remedy

        known = sorted({i.name for i in discover_memory_providers(Path(home), env=env, cwd=cwd)})
        # what installs it: `hermes update` only when the catalog has it (and memory.provider names it)
        remedy = provider_remedy(environment_home(Path(home)), wanted, configured=not name or name == config.memory_provider)
        raise ProviderNotFound(wanted, known, where=None if name else config.file, command=remedy.command,
                               otherwise=remedy.why)
    return info


def load_memory_provider(
    home: str | os.PathLike[str] | None = None,
    *,
    name: str | None = None,
    generation: Generation | None = ACTIVE,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> LoadedProvider | None:
    """Load the provider ``home`` names (steps in the module docstring); ``None`` when
    ``memory.provider`` is unset. ``name`` loads that provider instead (``hermes memory setup``);
    its skills are offered only when it is the configured one. ``generation`` is the generation
    this process runs on; default :data:`ACTIVE`.

    Raises :class:`pm.base.errors.ConfigError` for an unreadable ``config.yaml``,
    :class:`~agent.errors.ActivationError` when the selected generation cannot be activated,
    :class:`~agent.errors.ProviderNotFound`, :class:`~agent.errors.ProviderInvalid`,
    :class:`~agent.errors.ProviderNotReady` (nothing imported) or
    :class:`~agent.errors.ProviderLoadFailed`; all are :class:`~agent.errors.MemoryPluginError`.
    """
    home_path = Path(home).expanduser().absolute() if home is not None else active_home()
    info = resolve_provider(home_path, name, env=env, cwd=cwd)
    if info is None:
        return None
    readiness = ready(info, home_path, generation)
    if not readiness.ready:
        raise readiness.error()
    module = _import(info)
    ctx = _register(info, module)
    if name is None or _configured(home_path) in (info.name, info.key):
        skill_table.replace_active(home_path, info.name, ctx.skills.values())
    logger.info("memory provider %r loaded from %s (%s)", info.name, info.root, readiness.reason)
    return LoadedProvider(info, ctx.providers[0], readiness, module, dict(ctx.skills))


def load_into(manager: MemoryManager, **kwargs: Any) -> LoadedProvider | None:
    """Load the provider of ``manager.home`` (see :func:`load_memory_provider`, same keyword
    arguments) and add it to ``manager``. Raises :class:`ProviderLoadFailed` when the manager
    refuses the instance (for example ``memory_provider_instance_shared``: the plugin handed out
    an instance another profile's manager holds); its skills are withdrawn then."""
    loaded = load_memory_provider(manager.home, **kwargs)
    if loaded is None:
        return None
    if not manager.add_provider(loaded.provider):
        skill_table.withdraw(manager.home, loaded.info.name)
        raise ProviderLoadFailed(
            loaded.info.name, f"was refused by the memory manager of {manager.home} (see the "
            "warning logged just before: each profile needs a fresh instance from register(ctx))")
    return loaded


def _configured(home: Path) -> str | None:
    return read_config(home).memory_provider


def _import(info: ProviderInfo) -> ModuleType:
    """Import the plugin's package, bounded (:mod:`agent.bounded`): a SystemExit or a hang at
    import is this provider's failure, not the command's."""
    return bounded.call(info.name, f"failed to import from {info.module_file}", lambda: import_package(info))


def _register(info: ProviderInfo, module: ModuleType) -> PluginContext:
    """Call the plugin's entry (``register(ctx)``, the entry point's attribute, or a
    :class:`MemoryProvider` subclass it names) and check it offered exactly one provider
    named like the plugin."""
    attr = info.entry_point.attr if info.entry_point and info.entry_point.attr else "register"
    target: Any = module
    for part in attr.split("."):
        target = getattr(target, part, None)
    ctx = PluginContext(info)
    if isinstance(target, type) and issubclass(target, MemoryProvider):
        provider_class = target
        bounded.call(info.name, f"failed in {attr}()", lambda: ctx.register_memory_provider(provider_class()))
    elif callable(target):
        entry = target
        bounded.call(info.name, f"failed in {attr}(ctx)", lambda: entry(ctx))
    else:
        raise ProviderLoadFailed(info.name, f"has no {attr}(ctx) in {info.module_file}")
    if len(ctx.providers) != 1:
        raise ProviderLoadFailed(
            info.name, f"registered {len(ctx.providers)} memory providers; expected exactly one")
    offered = ctx.providers[0].name
    if offered != info.name:
        raise ProviderLoadFailed(
            info.name, f"registered a provider named {offered!r}; it must be named {info.name!r}")
    return ctx
