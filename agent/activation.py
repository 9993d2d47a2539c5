"""Activation: a ``hermes`` process runs on the generation that was selected when it started.

At start-up, before any plugin is loaded, :func:`activate` puts the selected generation's
``site-packages`` (and what its ``.pth`` files add) at the front of :data:`sys.path` and takes a
lease on it (:func:`pm.env.leases.take`, released at exit), so ``hermes pm gc`` never removes an
environment this process uses. A later ``hermes pm sync`` selects a new generation; this process
keeps its own until it restarts. Activation happens at most once per process: a second call
returns the generation already active.

Profiles share their primary home's environment: for a home at ``<primary>/profiles/<name>``
the generation and the lease are the primary home's (:func:`environment_home`).

Modules imported before activation (the host's own, e.g. ``yaml``) stay as they are: pm resolves
every generation with core's locked versions, so they are the versions the generation holds.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import logging
import site
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from agent.errors import ActivationError
from pm.base.store import Store
from pm.env import generations, leases
from pm.env.generations import Generation
from pm.inputs.settings import environment_home

__all__ = ["Activation", "activate", "active", "environment_home"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Activation:
    """What this process activated: the environment ``home`` and its ``generation`` (``None``
    when no generation was selected: only providers without declared requirements can load)."""

    home: Path
    generation: Generation | None


_ACTIVE: Activation | None = None
_LOCK = threading.Lock()


def active() -> Activation | None:
    """This process's activation, or ``None`` before :func:`activate` ran."""
    return _ACTIVE


def activate(home: Path) -> Generation | None:
    """Activate the generation selected for ``home`` (see the module docstring) and return it;
    ``None`` when no generation is selected. Idempotent: once a process is activated, later
    calls return the same generation (a newer selection waits for a restart, logged).

    Raises :class:`~agent.errors.ActivationError` when the selected generation's environment is
    missing, was built for another Python, or another home's environment is already active.
    """
    global _ACTIVE
    env_home = environment_home(home)
    with _LOCK:
        if _ACTIVE is not None:
            return _already_active(_ACTIVE, env_home)
        generation = generations.selected(env_home)
        if generation is not None:
            _check_usable(generation)
            _put_on_path(generation.site_packages)
            store = Store.for_home(env_home)
            leases.take(env_home, generation.id, store)
            atexit.register(_release, env_home, store)
            logger.info("activated generation %s of %s", generation.id, env_home)
        _ACTIVE = Activation(env_home, generation)
        return generation


def _release(env_home: Path, store: Store) -> None:
    """Drop this process's lease at exit (a lease of a dead process lapses anyway)."""
    with contextlib.suppress(Exception):
        leases.release(env_home, store)


def _already_active(current: Activation, env_home: Path) -> Generation | None:
    if current.home != env_home:
        raise ActivationError(
            f"cannot activate the environment of {env_home}: this process already runs on the "
            f"environment of {current.home} (one environment per process)")
    selected = generations.selected(env_home)
    running = current.generation.id if current.generation else None
    if selected is not None and selected.id != running:
        logger.info("generation %s is selected; this process keeps %s until it restarts",
                    selected.id, running or "no generation")
    return current.generation


def _check_usable(generation: Generation) -> None:
    built_for = str(generation.record.get("target", {}).get("markers", {}).get("python_version"))
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    if built_for != running:
        raise ActivationError(
            f"generation {generation.id} was built for Python {built_for}, but this hermes runs "
            f"Python {running}; run `hermes pm sync` with this interpreter")
    if not generation.site_packages.is_dir():
        raise ActivationError(
            f"generation {generation.id} has no site-packages at {generation.site_packages}; "
            "run `hermes pm sync` to rebuild it")


def _put_on_path(site_packages: Path) -> None:
    """Prepend ``site_packages`` and the folders its ``.pth`` files add to ``sys.path``."""
    before = list(sys.path)
    site.addsitedir(str(site_packages))
    added = [p for p in sys.path if p not in before]
    rest = [p for p in sys.path if p not in added]
    sys.path[:] = added + rest
    importlib.invalidate_caches()
