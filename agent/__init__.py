"""The host side of hermes-pm: what the agent does with the plugins pm admits.

Table of contents (each module's docstring states its contracts):

* :mod:`agent.context` — the active home and the secret scope as context variables
  (:func:`active_home`, :func:`use_home`, :func:`secret_scope`).
* :mod:`agent.secrets` — a profile's ``.env``: :func:`get_secret` (fails closed where no profile
  is bound) and :func:`write_secret` (atomic, 0600, keeps other lines); :mod:`agent.secret_scope`
  is the same under the plugin guide's import path.
* :mod:`agent.runtime_cwd` — :func:`~agent.runtime_cwd.resolve_agent_cwd`: the conversation's
  working directory (session cwd, ``terminal.cwd``/``TERMINAL_CWD``, launch directory).
* :mod:`agent.threads` — threads that carry the caller's context: :func:`spawn_context_thread`
  (returns the thread unstarted), :class:`~agent.threads.SerialWorker`.
* :mod:`agent.memory_provider` — the :class:`MemoryProvider` contract every memory plugin
  implements, and :func:`~agent.memory_provider.call_sync_turn` for older signatures.
* :mod:`agent.memory_manager` — :class:`MemoryManager`: one per profile, at most one external
  provider, every hook run in the provider's own profile, never raising into the agent loop.
* :mod:`agent.discovery` — memory providers from four sources (bundled > user > project >
  entry points), found on disk, never imported.
* :mod:`agent.activation` — :func:`~agent.activation.activate`: a process puts its selected
  generation on ``sys.path`` (and leases it) before any plugin loads.
* :mod:`agent.gate` — usable and ready? pm's readiness of a provider's declared requirements.
* :mod:`agent.loader` — :func:`~agent.loader.load_memory_provider` /
  :func:`~agent.loader.load_into`: import only the configured provider, only once ready;
  :mod:`agent.imports` imports plugin folders as packages; :mod:`agent.skills` holds the skills
  of the active provider; :mod:`agent.errors` the loud errors.
* :mod:`agent.plugin_cli` — ``hermes <provider> …`` for the active provider only;
  :mod:`agent.memory_cli` and :mod:`agent.memory_setup` — ``hermes memory setup|status``.
* :mod:`agent.session` — :class:`~agent.session.AgentSession`: start-up (lazy install, compression
  gates, built-in + configured provider, checkpoint warning), tools incl. ``skill_view``, turns,
  compaction. :mod:`agent.builtin_memory` — MEMORY.md/USER.md with ``previous_content``;
  :mod:`agent.compression` and :mod:`agent.checkpoint` — the one lossy rewrite and checkpoint v2
  (``BLOCKED_MISSING_PREREQUISITE``); :mod:`agent.prefetch_spill` — prefetch cap and spill;
  :mod:`agent.logs` — ``<home>/logs/errors.log``/``gateway.log`` and ``hermes logs``;
  :mod:`agent.agent_config` — the agent's own config keys; :mod:`agent.config_schema` —
  ``config_schema.py`` read as data; :mod:`agent.provider_child` — a provider's schema and
  ``save_config`` run in a child process for the dashboard.
* :mod:`agent.testing` — builders for host-side tests (installed distributions, spy plugins).

The ``hermes`` command itself is :mod:`agent.cli`. Top-level names the plugin guide imports live
beside this package: ``utils`` (``read_json_or_empty``, ``atomic_json_write``),
``hermes_cli.config`` (``save_config(..., merge_existing=True)``), ``hermes_constants``
(``get_hermes_home``) and ``tui_gateway.session_workdir``.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: `hermes pm sync` reaches pm's shortcut without loading typing (~5 ms)
if TYPE_CHECKING:
    from typing import Any

    from agent.context import active_home, secret_scope, use_home
    from agent.memory_manager import MemoryManager
    from agent.memory_provider import MemoryProvider, ProviderInitError
    from agent.secrets import SecretScopeError, get_secret, write_secret
    from agent.threads import spawn_context_thread

#: Re-exports, loaded on first use (PEP 562) so ``hermes pm …`` does not import the manager.
_LAZY = {
    "active_home": "agent.context", "secret_scope": "agent.context", "use_home": "agent.context",
    "MemoryManager": "agent.memory_manager", "MemoryProvider": "agent.memory_provider",
    "ProviderInitError": "agent.memory_provider", "SecretScopeError": "agent.secrets",
    "get_secret": "agent.secrets", "write_secret": "agent.secrets", "spawn_context_thread": "agent.threads",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_LAZY[name]), name)


__all__ = [
    "MemoryManager",
    "MemoryProvider",
    "ProviderInitError",
    "SecretScopeError",
    "active_home",
    "get_secret",
    "secret_scope",
    "spawn_context_thread",
    "use_home",
    "write_secret",
]
