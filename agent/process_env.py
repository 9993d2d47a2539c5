"""A profile's ``.env`` in the process environment, for a process that serves that one profile.

Providers written to the older guide samples read their keys from ``os.environ`` (``MY_API_KEY``);
``hermes memory setup`` writes them to ``<home>/.env``. A process that serves one profile (``hermes
memory status``/``setup``, a provider's own ``hermes <provider> …`` command, a single-profile
:class:`~agent.session.AgentSession`) puts that profile's ``.env`` into :data:`os.environ` when it
starts, before any provider is imported (:func:`load_profile_env`), as the host does at start-up.

Which wins: **the real environment**. A variable the process was started with is never
overwritten (dotenv's default, ``override=False``): ``MY_API_KEY=other hermes memory status``
uses ``other``. (The real host lets ``~/.hermes/.env`` override stale shell exports; here a value
someone set for this run is taken to mean this run.)

No value leaks across profiles: only the keys this module set are ever changed again. Loading
another profile's ``.env`` first withdraws what the previous one put there (each key still holding
the value set); a process that serves several profiles at once (a gateway:
``MemoryManager(multi_profile=True)``) withdraws them too and never loads one again
(:func:`serve_many_profiles`): there every provider reads its own profile's secrets through the
secret scope (:func:`agent.secret_scope.get_secret`), which is bound per call.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

from agent.secrets import read_env

__all__ = ["forget", "load_profile_env", "serve_many_profiles"]

logger = logging.getLogger(__name__)

_LOCK = threading.Lock()
#: The values this module set from a profile's ``.env``; whether the process serves many profiles.
_LOADED: dict[str, str] = {}
_STATE = {"many": False}


def load_profile_env(home: str | os.PathLike[str]) -> tuple[str, ...]:
    """Put ``<home>/.env`` into :data:`os.environ` (see the module docstring) and return the names
    set from it. Again for the same home: what the file says now (a key ``hermes memory setup``
    just wrote is added). For another home: the previous one's values are withdrawn first. In a
    process that serves several profiles (:func:`serve_many_profiles`): nothing, ever."""
    path = Path(home).expanduser().absolute()
    with _LOCK:
        if _STATE["many"]:
            return ()
        _withdraw()
        for name, value in read_env(path).items():
            if name not in os.environ:
                os.environ[name] = value
                _LOADED[name] = value
        if _LOADED:
            logger.info("%s: %s put in the process environment", path / ".env", ", ".join(sorted(_LOADED)))
        return tuple(sorted(_LOADED))


def serve_many_profiles() -> None:
    """This process serves several profiles: withdraw any profile's ``.env`` values from the
    environment, and load none from now on."""
    with _LOCK:
        _STATE["many"] = True
        _withdraw()


def forget() -> None:
    """Start over, as a new process would: withdraw what was loaded, and serve one profile again."""
    with _LOCK:
        _STATE["many"] = False
        _withdraw()


def _withdraw() -> None:
    """Remove the values this module set that still hold (a value changed since is someone's)."""
    for name, value in _LOADED.items():
        if os.environ.get(name) == value:
            del os.environ[name]
    _LOADED.clear()
