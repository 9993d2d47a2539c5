"""``from hermes_constants import get_hermes_home`` (the path older guide translations show).

The active home of the current context (:func:`agent.context.active_home`): the profile a
manager bound around the hook, else ``$HERMES_HOME``, else ``~/.hermes``. Inside a provider,
prefer the ``hermes_home`` passed to ``initialize`` and keep it on the instance.
"""

from __future__ import annotations

from pathlib import Path

from agent.context import active_home

__all__ = ["get_hermes_home"]


def get_hermes_home() -> Path:
    """The home the current context serves."""
    return active_home()
