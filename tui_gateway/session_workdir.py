"""Keeping a running agent's session cwd in step with the Desktop/TUI workspace.

:func:`_register_session_cwd` is what the gateway calls when the user switches workspace, and
again when an agent attaches late to a session whose workspace moved: the agent's
``session_cwd`` (read by :func:`agent.runtime_cwd.resolve_agent_cwd` inside its memory hooks)
becomes the new folder. It deliberately does *not* re-initialize memory providers, rename
sessions or rebuild cached system prompts: providers keep the workspace they were built with.
An empty or missing cwd leaves the session unpinned.
"""

from __future__ import annotations

import os
import threading
from typing import Any

__all__ = ["_register_session_cwd", "pending_session_cwd"]

_PENDING: dict[str, str] = {}
_LOCK = threading.Lock()


def _register_session_cwd(agent: Any, cwd: str | os.PathLike[str] | None,
                          *, session_id: str | None = None) -> str | None:
    """Set ``agent.session_cwd`` to ``cwd`` (``None`` for empty). With no agent yet, remember it
    under ``session_id`` for :func:`pending_session_cwd`. Returns the cwd now in effect."""
    value = str(cwd) if cwd is not None and str(cwd).strip() else None
    if agent is None:
        if session_id is not None:
            with _LOCK:
                if value is None:
                    _PENDING.pop(session_id, None)
                else:
                    _PENDING[session_id] = value
        return value
    agent.session_cwd = value
    return value


def pending_session_cwd(session_id: str) -> str | None:
    """The workspace registered for ``session_id`` before an agent attached (consumed)."""
    with _LOCK:
        return _PENDING.pop(session_id, None)
