"""The gate before a memory provider's code runs: is it usable, and is it ready?

:func:`ready` is the gate every host caller uses (loader, plugin CLI, ``hermes memory``):
usable, then ready. *Usable* (:func:`check_usable`): the discovered root has no problems, is not shadowed and not in
``plugins.disabled``. *Ready* (:func:`judge`): pm's readiness (:func:`pm.env.readiness.check`, from
installed distribution metadata, never from "the module imports") says the provider's declared
requirements are met in the generation this process runs on. A provider that declares no
requirements — an empty list, no declaration at its root (sidecar-only), ``python_runtime:
external`` — is ready without any generation. Entry-point providers are installed packages pm
does not manage: found means ready.

The readiness is judged with the inputs of the environment's home (the primary home for a profile,
:func:`agent.activation.environment_home`), exactly as ``hermes pm check`` judges it; a provider
not selected yet is judged as the candidate of that selection (``hermes pm check --with``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.activation import activate, environment_home
from agent.discovery import ProviderInfo
from agent.errors import ProviderInvalid, ProviderNotReady
from pm.base.commands import hermes
from pm.env.generations import Generation
from pm.env.readiness import check
from pm.inputs.collect import Inputs, gather
from pm.inputs.config import read_config
from pm.inputs.selection import Status
from pm.inputs.settings import Flags, resolve_home
from pm.inputs.target import running_environment

__all__ = ["ACTIVE", "ProviderReadiness", "check_usable", "judge", "needs_generation", "ready", "sync_command"]

#: ``generation=`` default: the generation this process runs on (activating it if not done yet).
ACTIVE: Any = object()


@dataclass(frozen=True)
class ProviderReadiness:
    """The verdict on one provider: ``ready``, the ``unmet`` requirements, a one-line
    ``reason``, the ``generation`` judged (``None`` when none was needed or none exists) and the
    ``command`` that would make it ready (``None`` when ready)."""

    provider: ProviderInfo
    ready: bool
    reason: str
    unmet: tuple[str, ...] = ()
    generation: Generation | None = None
    command: str | None = None

    def error(self) -> ProviderNotReady:
        """The loud error for a provider that is not ready."""
        return ProviderNotReady(self.provider.name, self.unmet, self.provider.declaration_file,
                                self.command or "hermes pm sync")

    def to_json(self) -> dict[str, object]:
        return {"ready": self.ready, "reason": self.reason, "unmet": list(self.unmet),
                "generation": self.generation.id if self.generation else None,
                "command": self.command}


def sync_command(home: Path) -> str:
    """``hermes pm sync`` for the environment of ``home``, with ``--home`` when that is not the
    default home (so it runs exactly as printed)."""
    env_home = environment_home(home)
    default = resolve_home(None).absolute()
    return hermes("pm", "sync", home=None if env_home == default else env_home)


def ready(info: ProviderInfo, home: Path, generation: Generation | None = ACTIVE, *,
          lazily: bool = False) -> ProviderReadiness:
    """The one gate the host's callers use before plugin code runs: :func:`check_usable` (raises
    :class:`ProviderInvalid`), then the generation to judge — the one this process runs on with
    :data:`ACTIVE` (activated now if not yet; with ``lazily``, only when ``info`` needs one), or the
    ``generation`` given — then :func:`judge`. The caller decides what a not-ready verdict means
    (``readiness.error()`` to refuse loudly)."""
    check_usable(info, home)
    running = generation
    if generation is ACTIVE:
        running = activate(home) if not lazily or needs_generation(info) else None
    return judge(info, home, running)


def check_usable(info: ProviderInfo, home: Path) -> None:
    """Raise :class:`ProviderInvalid` unless ``info`` may be loaded for ``home``: no problems,
    not shadowed, not listed in ``plugins.disabled`` of ``home``'s ``config.yaml``."""
    if info.problems:
        raise ProviderInvalid(info.name, "cannot be used: " + "; ".join(info.problems))
    if info.shadowed_by is not None:
        raise ProviderInvalid(info.name, f"at {info.root} is shadowed by {info.shadowed_by}")
    config = read_config(Path(home))
    if info.key in config.disabled or info.name in config.disabled:
        raise ProviderInvalid(info.name, f"is listed in plugins.disabled of {config.file}")


def judge(info: ProviderInfo, home: Path, generation: Generation | None) -> ProviderReadiness:
    """Whether ``info``'s declared requirements are met in ``generation`` (the one this process
    runs on). Never imports plugin code; reads declarations, config and dist-info folders only.
    Raises :class:`ProviderInvalid` when pm's selection says the provider sits out here."""
    exempt = _exempt(info)
    if exempt is not None:
        return ProviderReadiness(info, True, exempt, generation=generation)
    command = sync_command(home)
    if generation is None:
        unmet = tuple(f"requires {r}; no generation is selected" for r in _applicable(info))
        return ProviderReadiness(info, False, "no generation is selected", unmet, None, command)
    inputs = _inputs_with(info, home)
    verdict = check(inputs, generation).verdict(info.key)
    if verdict is None:  # not a member of the union it was judged in
        raise ProviderInvalid(info.name, "is not part of the environment's selection")
    if verdict.ready:
        return ProviderReadiness(info, True, f"ready in generation {generation.id}",
                                 generation=generation)
    changed = getattr(verdict, "changed", None)  # new or changed since the generation was built
    unmet = ((changed,) if changed else ()) + tuple(verdict.unmet)
    return ProviderReadiness(info, False, verdict.reason(), unmet, generation, command)


def needs_generation(info: ProviderInfo) -> bool:
    """Whether pm must judge ``info`` against a generation (it declares requirements pm
    installs); ``False`` for the exempt kinds listed in the module docstring."""
    return _exempt(info) is None


def _exempt(info: ProviderInfo) -> str | None:
    """Why ``info`` needs no generation, or ``None`` when pm must judge it."""
    if info.entry_point is not None:
        ep = info.entry_point
        return (f"installed distribution {ep.distribution} {ep.version} "
                "(entry point; not managed by pm)")
    plugin = info.plugin
    if plugin is None or plugin.declaration is None:
        return "no declaration at its root (it brings its own environment)"
    if plugin.manifest is not None and plugin.manifest.external:
        return "python_runtime: external (it brings its own interpreter)"
    if not _applicable(info):
        return "declares no requirements"
    return None


def _applicable(info: ProviderInfo) -> list[str]:
    env = running_environment(extra="")
    return [str(r) for r in info.requirements if r.marker is None or r.marker.evaluate(env)]


def _inputs_with(info: ProviderInfo, home: Path) -> Inputs:
    """The environment home's inputs, with ``info`` as a candidate when no home selects it."""
    env_home = environment_home(home)
    inputs = gather(env_home, Flags())
    status = inputs.find(info.key)
    if status is not None and status.is_member:
        return inputs
    if status is not None and status.status is not Status.NOT_ENABLED:
        raise ProviderInvalid(info.name, f"sits out of the environment: {status.reason}")
    return gather(env_home, Flags(), candidate=info.key)
