"""The working directory of a conversation, which is not the process's ``os.getcwd()``.

One Desktop or gateway process serves many sessions, each with its own workspace, so code acting
for a session asks :func:`resolve_agent_cwd` instead of ``os.getcwd()``. The answer, first that
is set and non-empty:

1. the **session cwd** of the current context — bound around every memory hook by the session's
   :class:`~agent.memory_manager.MemoryManager` (:func:`use_session_cwd`), and kept current when
   a Desktop/TUI workspace changes (:func:`tui_gateway.session_workdir._register_session_cwd`);
2. the scoped ``terminal.cwd`` — bound for the context (:func:`use_terminal_cwd`, what the host
   does from the profile's ``config.yaml``), else the ``TERMINAL_CWD`` variable it is handed over
   as, else ``terminal.cwd`` in the active home's ``config.yaml``;
3. the **launch directory**: the process's working directory when this module was first imported.

Nothing here changes the process's working directory.
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agent.context import active_home
from pm.inputs.config import config_data

__all__ = ["LAUNCH_CWD", "TERMINAL_CWD_ENV", "resolve_agent_cwd", "session_cwd", "terminal_cwd_of",
           "use_session_cwd", "use_terminal_cwd"]

TERMINAL_CWD_ENV = "TERMINAL_CWD"


def _launch_cwd() -> Path:
    try:
        return Path(os.getcwd())
    except OSError:  # the launch directory was removed: the home folder is the honest fallback
        return Path.home()


#: The process's working directory at start-up (first import of this module).
LAUNCH_CWD = _launch_cwd()

_SESSION_CWD: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "hermes_session_cwd", default=None)
_TERMINAL_CWD: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "hermes_terminal_cwd", default=None)


def _text(value: object) -> str | None:
    return str(value) if isinstance(value, str | os.PathLike) and str(value).strip() else None


@contextmanager
def use_session_cwd(cwd: str | os.PathLike[str] | None) -> Iterator[str | None]:
    """Bind the session cwd for the ``with`` block (``None`` or ``""``: unbound)."""
    token = _SESSION_CWD.set(_text(cwd))
    try:
        yield _SESSION_CWD.get()
    finally:
        _SESSION_CWD.reset(token)


@contextmanager
def use_terminal_cwd(cwd: str | os.PathLike[str] | None) -> Iterator[str | None]:
    """Bind the scoped ``terminal.cwd`` for the ``with`` block (``None`` or ``""``: unbound)."""
    token = _TERMINAL_CWD.set(_text(cwd))
    try:
        yield _TERMINAL_CWD.get()
    finally:
        _TERMINAL_CWD.reset(token)


def session_cwd() -> str | None:
    """The session cwd bound in the current context, or ``None``."""
    return _SESSION_CWD.get()


def terminal_cwd_of(home: str | os.PathLike[str]) -> str | None:
    """``terminal.cwd`` of ``<home>/config.yaml`` (``~`` expanded); ``None`` when unset or the
    file is missing or unreadable (a broken config is reported elsewhere, not here)."""
    # bounded: a FIFO or an alias bomb in config.yaml cannot hold the host
    terminal = config_data(Path(home)).get("terminal")
    value = _text(terminal.get("cwd")) if isinstance(terminal, dict) else None
    return os.path.expanduser(value) if value else None


def resolve_agent_cwd() -> Path:
    """The working directory of the conversation the current context serves (module docstring)."""
    for candidate in (_SESSION_CWD.get(), _TERMINAL_CWD.get(),
                      _text(os.environ.get(TERMINAL_CWD_ENV)), terminal_cwd_of(active_home())):
        if candidate:
            return Path(candidate).expanduser()
    return LAUNCH_CWD
