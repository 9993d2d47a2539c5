"""One agent session's start-up and memory: what ``AIAgent`` does with the plugin machinery.

:meth:`AgentSession.start`, in order:

1. the lazy install of a configured but missing catalog provider (:func:`pm.ops.update.lazy_install`:
   runs only when ``security.allow_lazy_installs`` is exactly ``true``, else warns with the
   command; once per process per home and provider);
2. the compression settings as enforced (:class:`agent.compression.CompressionSettings`): the
   ``codex_app_server`` API mode is refused while ``compression.checkpoint_required`` is true,
   micro-compaction is forced off, native compaction suppressed — each logged;
3. a :class:`~agent.memory_manager.MemoryManager` with the built-in provider (MEMORY.md/USER.md,
   its writes announced to the external provider) and the provider ``memory.provider`` names
   (:func:`agent.loader.load_into`: loud errors, never a silent fallback);
4. ``initialize_all`` with ``hermes_home``, ``platform``, ``agent_identity``, ``user_id`` (when
   known) and the construction-time workspace ``cwd`` (when non-empty);
5. with the checkpoint required, a warning naming the providers that opted into checkpoint API v2
   (or saying that none did, so every compaction will be blocked).

The session's tools are the manager's plus ``skill_view``; :meth:`AgentSession.compress` is the
compaction entry point (manual and automatic).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent.builtin_memory import BuiltinMemoryProvider
from agent.checkpoint import CHECKPOINT_SETTING, checkpoint_providers
from agent.compression import CompressionResult, CompressionSettings, Summarizer, compress, default_summarizer
from agent.loader import LoadedProvider, load_into
from agent.memory_manager import MemoryManager
from agent.process_env import load_profile_env
from agent.skills import SKILL_VIEW_SCHEMA, skill_view

__all__ = ["AgentSession"]

logger = logging.getLogger(__name__)


class AgentSession:
    """A session of the agent for one profile ``home`` (see the module docstring)."""

    def __init__(self, home: str | os.PathLike[str], session_id: str, *, platform: str = "cli",
                 api_mode: str | None = None, cwd: str | os.PathLike[str] | None = None,
                 user_id: str | None = None, agent_identity: str | None = None,
                 multi_profile: bool = False, say: Callable[[str], None] | None = None) -> None:
        self.home = Path(home).expanduser().absolute()
        self.session_id = session_id
        self.platform = platform
        self.api_mode = api_mode
        self.cwd = str(cwd) if cwd is not None and str(cwd).strip() else None
        self.user_id = user_id
        self.agent_identity = agent_identity
        self.say = say or (lambda text: logger.warning("%s", text))
        self.manager = MemoryManager(self.home, multi_profile=multi_profile)
        self.settings = CompressionSettings()
        self.loaded: LoadedProvider | None = None
        self.warnings: list[str] = []

    @property
    def session_cwd(self) -> str | None:
        """The workspace the memory hooks see (``tui_gateway`` keeps it current)."""
        return self.manager.session_cwd

    @session_cwd.setter
    def session_cwd(self, value: str | None) -> None:
        self.manager.session_cwd = value

    def _warn(self, text: str) -> None:
        self.warnings.append(text)
        self.say(text)

    def start(self) -> AgentSession:
        """Start-up (module docstring). Raises :class:`agent.compression.CompressionConfigError`
        and the loader's :class:`agent.errors.MemoryPluginError`; a provider that fails to
        initialize raises :class:`agent.memory_provider.ProviderInitError`."""
        from pm.ops import Notices
        from pm.ops.update import lazy_install

        if not self.manager.multi_profile:  # one profile: its .env in os.environ, as at start-up
            load_profile_env(self.home)
        lazy_install(self.home, Notices(self._warn))
        self.settings = CompressionSettings.for_home(self.home)
        self.settings.check_api_mode(self.api_mode)
        for note in self.settings.notes:
            self._warn(note)
        self.manager.add_provider(BuiltinMemoryProvider(notify=self.manager.on_memory_write))
        self.loaded = load_into(self.manager)
        self.session_cwd = self.cwd
        extra: dict[str, Any] = {"user_id": self.user_id} if self.user_id else {}
        if self.agent_identity:
            extra["agent_identity"] = self.agent_identity
        if self.cwd:
            extra["cwd"] = self.cwd
        self.manager.initialize_all(self.session_id, platform=self.platform, **extra)
        if self.settings.checkpoint_required:
            opted = checkpoint_providers(self.manager.providers)
            names = ", ".join(repr(n) for n in opted) if opted else "none (every compaction will be blocked)"
            self._warn(f"{CHECKPOINT_SETTING} is true: compaction needs a pre-compress checkpoint from "
                       f"the memory providers that opted in: {names}")
        return self

    # -- the agent loop ------------------------------------------------------------------------

    def tool_schemas(self) -> list[dict[str, Any]]:
        return [*self.manager.get_tool_schemas(), dict(SKILL_VIEW_SCHEMA)]

    def call_tool(self, name: str, args: dict[str, Any] | str, **kwargs: Any) -> str:
        if name == "skill_view" and isinstance(args, dict):
            return skill_view(str(args.get("name", "")), home=self.home)
        return self.manager.handle_tool_call(name, args, **kwargs)

    def system_prompt(self) -> str:
        return self.manager.system_prompt_block()

    def prefetch(self, query: str) -> str:
        return self.manager.prefetch(query, session_id=self.session_id)

    def sync_turn(self, user: str, assistant: str, messages: list[dict[str, Any]] | None = None) -> None:
        self.manager.sync_all(user, assistant, session_id=self.session_id, messages=messages)

    def compress(self, messages: list[dict[str, Any]], *,
                 summarize: Summarizer = default_summarizer) -> CompressionResult | None:
        """Compact ``messages`` (:func:`agent.compression.compress`): raises
        :class:`agent.checkpoint.CheckpointBlocked` (``BLOCKED_MISSING_PREREQUISITE``) and then
        nothing was rewritten."""
        return compress(messages, self.manager, self.settings, summarize=summarize)

    def native_compaction_allowed(self) -> bool:
        """Whether server-side native compaction may run (never while the checkpoint is required)."""
        return self.settings.codex_responses_native

    def switch_session(self, session_id: str, messages: list[dict[str, Any]]) -> None:
        """End the current session for every provider (``on_session_end``) and start
        ``session_id`` (``initialize`` again, same profile and settings)."""
        self.manager.on_session_end(messages)
        self.session_id = session_id
        extra: dict[str, Any] = {"user_id": self.user_id} if self.user_id else {}
        if self.cwd:
            extra["cwd"] = self.cwd
        self.manager.initialize_all(session_id, platform=self.platform, **extra)

    def close(self, messages: list[dict[str, Any]] | None = None) -> None:
        if messages is not None:
            self.manager.on_session_end(messages)
        self.manager.shutdown_all()
