"""Who may use a :class:`~agent.memory_manager.MemoryManager`: which providers join it and which
callers may call into it (the contracts "one external provider", "one manager per instance" and
"only the initializing profile calls in" of :mod:`agent.memory_manager`). Every refusal is
logged here, with its event name."""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from agent.context import bound_home
from agent.logs import log_event
from pm.base.names import BUILTIN_PROVIDER

if TYPE_CHECKING:
    from agent.memory_manager import MemoryManager

logger = logging.getLogger("agent.memory_manager")

BUILTIN_PROVIDER_NAME = BUILTIN_PROVIDER  # pm.base.names: the one spelling of the host's provider
EVENT_INSTANCE_SHARED = "memory_provider_instance_shared"
EVENT_REFUSED = "memory_provider_refused"
EVENT_CALLER_UNRESOLVED = "memory_caller_profile_unresolved"
EVENT_CALLER_FOREIGN = "memory_caller_profile_mismatch"

#: Every live manager, to refuse an instance another one holds; guarded by :data:`LIVE_LOCK`.
LIVE: weakref.WeakSet[MemoryManager] = weakref.WeakSet()
LIVE_LOCK = threading.Lock()


def name_of(provider: object) -> str:
    """A provider's name, or its class name when its ``name`` property breaks."""
    try:
        return str(provider.name)  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - a broken name property must not break logging
        return type(provider).__name__


def refusal(manager: MemoryManager, provider: object, name: str, held: Sequence[object], *,
            closed: bool) -> str | None:
    """Why ``manager`` (holding ``held``; ``closed`` after shutdown) refuses ``provider``, logged
    here, or None. The caller holds :data:`LIVE_LOCK` and the manager's lock."""
    for other in LIVE:
        if other is not manager and other.holds(provider):
            logger.warning(
                "%s: memory provider %r instance is already bound to the manager of %s; "
                "refused for %s (each profile needs a fresh instance)",
                EVENT_INSTANCE_SHARED, name, other.home, manager.home,
                extra={"event": EVENT_INSTANCE_SHARED, "provider": name},
            )
            return EVENT_INSTANCE_SHARED
    if closed:
        return _refuse(manager.home, name, "the manager is shut down")
    if any(p is provider or name_of(p) == name for p in held):
        return _refuse(manager.home, name, "a provider of that name is already added")
    external = [name_of(p) for p in held if name_of(p) != BUILTIN_PROVIDER_NAME]
    if name != BUILTIN_PROVIDER_NAME and external:
        return _refuse(manager.home, name, f"{external[0]!r} is already the external memory provider (one at a time)")
    return None


def _refuse(home: Path, name: str, why: str) -> str:
    logger.warning(
        "%s: memory provider %r refused for %s: %s", EVENT_REFUSED, name, home, why,
        extra={"event": EVENT_REFUSED, "provider": name},
    )
    return why


def admits_caller(home: Path, hook: str, *, multi_profile: bool) -> bool:
    """Whether the calling context may use the providers of ``home``; a refusal is logged (and
    written to the profile's logs) here."""
    caller = bound_home()
    if caller == home or (caller is None and not multi_profile):
        return True
    event = EVENT_CALLER_UNRESOLVED if caller is None else EVENT_CALLER_FOREIGN
    who = "a caller that names no profile" if caller is None else f"a caller of {caller}"
    message = f"{hook} refused for {who}: the memory providers of {home} serve only that profile"
    logger.warning("%s: %s", event, message, extra={"event": event, "hook": hook})
    log_event(home, event, message)
    return False
