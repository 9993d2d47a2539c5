"""Calls into a memory provider's code that a host command makes (importing it, ``register(ctx)``,
``is_available()``), bounded: whatever the provider raises — ``SystemExit`` and
``KeyboardInterrupt`` included — is that provider's failure, and a call that does not return in
time is one too, naming the provider. A provider can neither silence the command nor hang it.

The call runs on a daemon thread, in a copy of the caller's context (its bound profile), and the command waits for it at most
``HERMES_PROVIDER_TIMEOUT`` seconds (default :data:`DEFAULT_TIMEOUT`); a hung call is left
behind on its thread (Python cannot stop it) and ends with the process. A real Ctrl-C reaches
the command's own thread and stops the command, as it should.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from typing import TypeVar

from pm.base.lock import env_seconds

from .errors import ProviderLoadFailed

T = TypeVar("T")

#: Seconds a host command waits for one call into a provider (an import included).
DEFAULT_TIMEOUT = 30.0
TIMEOUT_ENV = "HERMES_PROVIDER_TIMEOUT"


def timeout() -> float:
    """``$HERMES_PROVIDER_TIMEOUT`` when it is a finite positive number, else the default
    (:func:`pm.base.lock.env_seconds`, pm's one rule for timeouts)."""
    return env_seconds(TIMEOUT_ENV, DEFAULT_TIMEOUT)


def call(provider: str, failed: str, function: Callable[[], T]) -> T:
    """``function()``'s value; :class:`ProviderLoadFailed` naming ``provider`` when it raises
    anything or runs too long, its problem ``failed`` (what went wrong, as a person reads it:
    ``"failed in register(ctx)"``) followed by the exception or the time limit."""
    outcome: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(function())
        except BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt too: the provider's, not ours
            failure.append(exc)

    # in a copy of the caller's context: the profile (and secret scope) bound here is the call's,
    # so an is_available() that reads get_secret() sees the profile's .env as the guide promises
    worker = threading.Thread(target=contextvars.copy_context().run, args=(run,), name=f"provider-{provider}",
                              daemon=True)
    worker.start()
    limit = timeout()
    worker.join(limit)
    if worker.is_alive():
        raise ProviderLoadFailed(provider, f"{failed}: did not return within {limit:g}s (a provider's code must "
                                           f"not block; raise {TIMEOUT_ENV} if it is only slow)")
    if failure:
        exc = failure[0]
        if isinstance(exc, ProviderLoadFailed):
            raise exc
        said = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        raise ProviderLoadFailed(provider, f"{failed}: {said}") from exc
    return outcome[0]
