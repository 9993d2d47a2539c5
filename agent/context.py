"""The active home and the secret scope, as context variables.

A *home* is a ``HERMES_HOME`` directory (docs/design.md: vocabulary); each profile is a home too. Which
home the running code serves is not a process-wide global: it is a :class:`contextvars.ContextVar`,
so two profiles served by two threads of one process never see each other's home.

Two variables, bound together by :func:`use_home`:

* the **active home** — where profile-scoped storage goes. Resolution order: the context
  override (:func:`use_home`), then ``$HERMES_HOME``, then ``~/.hermes``. Always has an answer.
* the **secret scope** — which profile's ``.env`` :func:`agent.secrets.get_secret` may read.
  It has *no* fallback: neither ``$HERMES_HOME`` nor ``~/.hermes`` binds it. Code running where
  nobody bound a profile (a bare :class:`threading.Thread`, a callback from a library's own
  pool) reads no secret at all rather than the wrong profile's.

A new thread starts with an empty context. :func:`agent.threads.spawn_context_thread` starts one
that runs in a copy of the caller's context, so the home and the secret scope travel with the work.
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = [
    "HOME_ENV_VAR",
    "active_home",
    "bound_home",
    "default_home",
    "secret_scope",
    "use_home",
    "use_secret_scope",
]

HOME_ENV_VAR = "HERMES_HOME"

_ACTIVE_HOME: contextvars.ContextVar[Path | None] = contextvars.ContextVar(
    "hermes_active_home", default=None
)
_SECRET_SCOPE: contextvars.ContextVar[Path | None] = contextvars.ContextVar(
    "hermes_secret_scope", default=None
)


def default_home() -> Path:
    """The home when the context binds none: ``$HERMES_HOME`` if set and non-empty, else
    ``~/.hermes``. Read from the environment on every call (never cached)."""
    env = os.environ.get(HOME_ENV_VAR, "").strip()
    if env:
        return Path(env).expanduser()
    return Path.home() / ".hermes"


def active_home() -> Path:
    """The home the current context serves: the :func:`use_home` override, else
    :func:`default_home`. Never raises, never touches the filesystem."""
    bound = _ACTIVE_HOME.get()
    return bound if bound is not None else default_home()


def bound_home() -> Path | None:
    """The home a :func:`use_home` in the current context bound, or ``None`` when the caller
    named no profile (no fallback to ``$HERMES_HOME``): how a manager tells who is calling."""
    return _ACTIVE_HOME.get()


def secret_scope() -> Path | None:
    """The home whose ``.env`` is bound in the current context, or ``None`` when no profile is
    bound. Unlike :func:`active_home` there is no fallback (see the module docstring)."""
    return _SECRET_SCOPE.get()


@contextmanager
def use_home(path: str | os.PathLike[str], *, bind_secrets: bool = True) -> Iterator[Path]:
    """Serve the home ``path`` for the duration of the ``with`` block.

    Binds the active home and, unless ``bind_secrets`` is false, the secret scope to the same
    home. Both are restored on exit, also on error. Nesting works; the innermost wins. The path is
    made absolute (``~`` expanded) but need not exist. Yields the bound path.
    """
    home = Path(path).expanduser().absolute()
    home_token = _ACTIVE_HOME.set(home)
    scope_token = _SECRET_SCOPE.set(home) if bind_secrets else None
    try:
        yield home
    finally:
        if scope_token is not None:
            _SECRET_SCOPE.reset(scope_token)
        _ACTIVE_HOME.reset(home_token)


@contextmanager
def use_secret_scope(path: str | os.PathLike[str] | None) -> Iterator[Path | None]:
    """Bind only the secret scope (``None`` unbinds it: secrets fail closed inside the block).
    The active home is left as it is. Restored on exit."""
    scope = None if path is None else Path(path).expanduser().absolute()
    token = _SECRET_SCOPE.set(scope)
    try:
        yield scope
    finally:
        _SECRET_SCOPE.reset(token)
