"""The host side of memory: one :class:`MemoryManager` per profile, holding its providers.

Contracts the agent loop relies on:

* **One external provider.** Besides the host's own ``builtin`` provider, a manager holds at most
  one provider; :meth:`MemoryManager.add_provider` refuses a second with a logged warning.
* **One manager per instance.** An instance held by another live manager (another profile) is
  refused and logged with the event ``memory_provider_instance_shared``: a provider caches its
  home at ``initialize``, so sharing it would write one profile's memories into another's home.
* **Every hook runs in the provider's own profile.** The manager binds its home (active home and
  secret scope, :func:`agent.context.use_home`) around every call, on every thread.
* **Hooks never raise into the agent loop.** A provider's exception is caught and logged with the
  provider's name; tool calls return a JSON ``{"error": ...}`` result instead. The one exception
  is :meth:`MemoryManager.initialize_all`: a provider that is unavailable or fails to initialize
  is dropped from the manager (shut down, its tools withdrawn) and, after the others are
  initialized, :class:`ProviderInitError` names it. The caller decides whether the session goes
  on without it, so a missing memory is never silent.
* **``sync_all`` never blocks.** Turns are queued to one context-carrying background thread and
  synced in order; :meth:`MemoryManager.wait_idle` waits for the queue to drain.
* **Only the initializing profile calls in.** Tool calls and every lifecycle hook are refused
  (logged) when the caller's context binds another home (:func:`agent.context.use_home`); in a
  multi-profile gateway (``multi_profile=True``) a caller that binds none is refused too and
  logged as ``memory_caller_profile_unresolved`` in the profile's ``logs/errors.log`` and
  ``logs/gateway.log``. ``handle_tool_call`` passes ``hermes_home``, ``agent_identity`` and
  ``caller_gsk`` on to the provider.
* **Prefetch is whole, up to a cap** (:mod:`agent.prefetch_spill`, settings fixed at
  :meth:`MemoryManager.add_provider`); **pre-compress checkpoints** follow :mod:`agent.checkpoint`.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from agent.checkpoint import run_pre_compress
from agent.context import active_home, use_home
from agent.memory_membership import (
    BUILTIN_PROVIDER_NAME,
    LIVE,
    LIVE_LOCK,
    admits_caller,
    name_of,
    refusal,
)
from agent.memory_provider import (
    InitFailure,
    MemoryProvider,
    ProviderInitError,
    accepted_kwargs,
    call_sync_turn,
)
from agent.prefetch_spill import SpillSettings, apply_spill
from agent.process_env import serve_many_profiles
from agent.runtime_cwd import use_session_cwd
from agent.threads import SerialWorker

__all__ = ["BUILTIN_PROVIDER_NAME", "InitFailure", "MemoryManager", "ProviderInitError"]

logger = logging.getLogger(__name__)

EVENT_HOOK_FAILED = "memory_provider_hook_failed"

T = TypeVar("T")
Message = dict[str, Any]

def _profile_name(home: Path) -> str:
    """``<name>`` for a profile home ``…/profiles/<name>``, else ``"default"``."""
    return home.name if home.parent.name == "profiles" else "default"


def _error_result(message: str) -> str:
    return json.dumps({"error": message})


class MemoryManager:
    """The memory providers of one profile (``hermes_home``; default: the active home when the
    manager is created). Thread-safe; hooks are called in the order providers were added."""

    def __init__(
        self, hermes_home: str | os.PathLike[str] | None = None, *, sync_timeout: float = 30.0,
        multi_profile: bool = False,
    ) -> None:
        self._home = Path(hermes_home).expanduser().absolute() if hermes_home else active_home()
        self._multi_profile = multi_profile
        if multi_profile:  # a gateway: no profile's .env in os.environ (agent.process_env)
            serve_many_profiles()
        self._identity = ""
        self._spill: dict[str, SpillSettings] = {}
        #: The session's working directory (:func:`agent.runtime_cwd.resolve_agent_cwd` inside
        #: every hook); kept current by ``tui_gateway.session_workdir._register_session_cwd``.
        self.session_cwd: str | None = None
        self._sync_timeout = sync_timeout
        self._providers: list[MemoryProvider] = []
        self._tools: dict[str, MemoryProvider] = {}
        self._session_id = ""
        self._lock = threading.RLock()
        self._worker = SerialWorker(f"memory-sync:{self._home.name}")
        weakref.finalize(self, self._worker.close, 0)  # a forgotten manager frees its thread
        self._closed = False
        with LIVE_LOCK:
            LIVE.add(self)

    @property
    def home(self) -> Path:
        """The profile this manager serves; every hook runs with it bound."""
        return self._home

    @property
    def multi_profile(self) -> bool:
        """Whether this process serves several profiles (a gateway)."""
        return self._multi_profile

    @property
    def providers(self) -> tuple[MemoryProvider, ...]:
        """The providers currently held, in the order they were added."""
        with self._lock:
            return tuple(self._providers)

    # -- membership ------------------------------------------------------------------------------

    def add_provider(self, provider: MemoryProvider) -> bool:
        """Hold ``provider``; ``True`` when accepted. Refused (``False``, logged as a warning):
        a second external provider, a second provider of the same name, an instance another live
        manager holds (event ``memory_provider_instance_shared``), or any add after
        :meth:`shutdown_all`. Raises ``TypeError`` for an object that is not a provider."""
        if not isinstance(provider, MemoryProvider):
            raise TypeError(f"expected a MemoryProvider, got {type(provider).__name__}")
        name = name_of(provider)
        with LIVE_LOCK, self._lock:
            reason = refusal(self, provider, name, self._providers, closed=self._closed)
            if reason is None:
                self._providers.append(provider)
        if reason is not None:
            return False
        if name != BUILTIN_PROVIDER_NAME:  # fixed now: a changed setting needs a restart
            self._spill[name] = SpillSettings.for_home(self._home)
        self._index_tools()
        return True

    def holds(self, provider: object) -> bool:
        """Whether this manager, not shut down, holds the instance ``provider``."""
        return not self._closed and any(p is provider for p in self._providers)

    # -- calling providers -----------------------------------------------------------------------

    def _call(
        self,
        provider: MemoryProvider,
        hook: str,
        fn: Callable[..., T],
        default: T,
        /,
        *args: Any,
        **kwargs: Any,
    ) -> T:
        """``fn(*args, **kwargs)`` inside this profile; on exception log it with the provider's
        name and return ``default``. A provider must never kill the agent loop."""
        try:
            with use_home(self._home), use_session_cwd(self.session_cwd):
                return fn(*args, **kwargs)
        except Exception as exc:
            logger.warning(
                "%s: memory provider %r failed in %s: %s: %s", EVENT_HOOK_FAILED,
                name_of(provider), hook, type(exc).__name__, exc, exc_info=True,
                extra={"event": EVENT_HOOK_FAILED, "provider": name_of(provider), "hook": hook},
            )
            return default

    def _admits_caller(self, hook: str) -> bool:
        return admits_caller(self._home, hook, multi_profile=self._multi_profile)

    def _join_texts(self, hook: str, call: Callable[[MemoryProvider], str]) -> str:
        texts = [self._call(p, hook, call, "", p) for p in self.providers]
        return "\n\n".join(t for t in texts if isinstance(t, str) and t.strip())

    def _index_tools(self) -> list[dict[str, Any]]:
        """Rebuild the tool-name → provider routing table; return the schemas it routes."""
        tools: dict[str, MemoryProvider] = {}
        schemas: list[dict[str, Any]] = []
        none: list[dict[str, Any]] = []
        for provider in self.providers:
            for schema in self._call(provider, "get_tool_schemas", provider.get_tool_schemas, none):
                tool = schema.get("name") if isinstance(schema, dict) else None
                if not isinstance(tool, str):
                    logger.warning("memory provider %r declared a tool without a name: %r",
                                   name_of(provider), schema)
                elif tool in tools:
                    logger.warning("memory tool %r of %r is shadowed by %r", tool,
                                   name_of(provider), name_of(tools[tool]))
                else:
                    tools[tool] = provider
                    schemas.append(schema)
        with self._lock:
            self._tools = tools
        return schemas

    # -- lifecycle -------------------------------------------------------------------------------

    def initialize_all(
        self,
        session_id: str,
        *,
        platform: str = "cli",
        hermes_home: str | os.PathLike[str] | None = None,
        **kwargs: Any,
    ) -> None:
        """Initialize every provider for ``session_id``. ``hermes_home`` (default: the manager's
        home) becomes the manager's home and is always passed on, as a ``str``, with
        ``platform`` and ``kwargs``. Providers that are unavailable or raise are dropped and
        shut down; then :class:`ProviderInitError` names them (see the module docstring)."""
        if hermes_home is not None:
            self._home = Path(hermes_home).expanduser().absolute()
        self._session_id = session_id
        self._identity = str(kwargs.get("agent_identity") or self._identity or _profile_name(self._home))
        init_kwargs = {"hermes_home": str(self._home), "platform": platform,
                       "agent_identity": self._identity, **kwargs}
        failures: list[InitFailure] = []
        for provider in self.providers:
            failure = self._initialize_one(provider, session_id, init_kwargs)
            if failure is not None:
                failures.append(failure)
                with self._lock:
                    self._providers.remove(provider)
                self._call(provider, "shutdown", provider.shutdown, None)
        self._index_tools()
        if failures:
            for f in failures:
                logger.error("memory provider %r %s", f.provider, f.reason,
                             extra={"event": "memory_provider_init_failed", "provider": f.provider})
            raise ProviderInitError(failures)

    def _initialize_one(
        self, provider: MemoryProvider, session_id: str, init_kwargs: dict[str, Any]
    ) -> InitFailure | None:
        name = name_of(provider)
        try:
            with use_home(self._home):
                if not provider.is_available():
                    return InitFailure(name, "is not available (is_available() returned False)")
                provider.initialize(
                    session_id, **accepted_kwargs(provider, "initialize", init_kwargs)
                )
        except Exception as exc:  # noqa: BLE001 - reported through ProviderInitError
            return InitFailure(name, f"failed to initialize: {type(exc).__name__}: {exc}", exc)
        return None

    def shutdown_all(self) -> None:
        """Drain pending syncs (up to ``sync_timeout``), stop the sync thread, call every
        provider's ``shutdown`` (last added first) and release the instances. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        if not self._worker.close(self._sync_timeout):
            logger.warning("memory sync thread of %s still busy after %.1fs; abandoned",
                           self._home, self._sync_timeout)
        for provider in reversed(self.providers):
            self._call(provider, "shutdown", provider.shutdown, None)
        with LIVE_LOCK:
            LIVE.discard(self)

    # -- the agent loop's hooks ------------------------------------------------------------------

    def system_prompt_block(self) -> str:
        """The providers' static prompt blocks, joined by blank lines."""
        if not self._admits_caller("system_prompt_block"):
            return ""
        return self._join_texts("system_prompt_block", lambda p: p.system_prompt_block())

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """Recall for the coming turn from every provider, joined by blank lines (``""`` when
        none has anything). Synchronous: providers keep it fast. An external provider's
        result is capped or spilled per :mod:`agent.prefetch_spill`."""
        if not self._admits_caller("prefetch"):
            return ""
        kw = {"session_id": session_id or self._session_id}

        def one(p: MemoryProvider) -> str:
            text = p.prefetch(query, **accepted_kwargs(p, "prefetch", kw))
            spill = self._spill.get(name_of(p))
            return apply_spill(text, spill, name_of(p)) if spill and isinstance(text, str) else text

        return self._join_texts("prefetch", one)

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        """Ask every provider to warm up recall for the next turn."""
        if not self._admits_caller("queue_prefetch"):
            return
        kw = {"session_id": session_id or self._session_id}
        for p in self.providers:
            call_kw = accepted_kwargs(p, "queue_prefetch", kw)
            self._call(p, "queue_prefetch", p.queue_prefetch, None, query, **call_kw)

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """Every provider's tool schemas (first declaration of a name wins); also refreshes
        the routing table used by :meth:`handle_tool_call`."""
        return self._index_tools()

    def has_tool(self, name: str) -> bool:
        """Whether some provider declared the tool ``name``."""
        with self._lock:
            return name in self._tools

    def handle_tool_call(self, name: str, args: dict[str, Any] | str, **kwargs: Any) -> str:
        """Route the tool call to the provider that declared ``name``; always returns a JSON
        string. Unknown tools, arguments that are not a JSON object and provider exceptions
        become ``{"error": ...}`` results, never exceptions. The provider also receives
        ``hermes_home`` (this profile), ``agent_identity`` and ``caller_gsk`` (the caller's
        gateway session key, ``""`` when it gave none) — to check, never to rebind."""
        if not self._admits_caller(f"tool {name!r}"):
            return _error_result(f"memory tool {name!r} refused: the caller's profile is not "
                                 f"{self._home} (see {self._home / 'logs' / 'errors.log'})")
        with self._lock:
            provider = self._tools.get(name)
            known = sorted(self._tools)
        if provider is None:
            return _error_result(f"unknown memory tool {name!r}; known tools: {known}")
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except ValueError as exc:
                return _error_result(f"arguments of memory tool {name!r} are not JSON: {exc}")
        if not isinstance(args, dict):
            return _error_result(f"arguments of memory tool {name!r} must be a JSON object")
        kwargs.setdefault("session_id", self._session_id)
        kwargs.update(hermes_home=str(self._home), agent_identity=self._identity,
                      caller_gsk=str(kwargs.get("caller_gsk") or ""))
        call_kw = accepted_kwargs(provider, "handle_tool_call", kwargs)
        sentinel: Any = object()
        result = self._call(
            provider, f"tool {name!r}", provider.handle_tool_call, sentinel, name, args, **call_kw
        )
        if result is sentinel:
            return _error_result(f"memory provider {name_of(provider)!r} failed on tool {name!r}")
        if isinstance(result, str):
            return result
        return json.dumps(result, default=str)

    def sync_all(
        self,
        user: str,
        assistant: str,
        *,
        session_id: str = "",
        messages: list[Message] | None = None,
    ) -> None:
        """Queue the completed turn for every provider's ``sync_turn`` and return at once. Turns
        are synced in order on one background thread that carries this profile's context. After
        :meth:`shutdown_all` the turn is dropped (logged)."""
        if not self._admits_caller("sync_turn"):
            return
        sid = session_id or self._session_id
        snapshot = list(messages) if messages is not None else None

        def job() -> None:
            for p in self.providers:
                self._call(p, "sync_turn", call_sync_turn, None, p, user, assistant,
                           session_id=sid, messages=snapshot)

        with use_home(self._home):  # the worker thread starts in a copy of this context
            accepted = self._worker.submit(job)
        if not accepted:
            logger.warning("memory sync after shutdown of %s dropped", self._home)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until every queued sync has run; ``False`` if ``timeout`` seconds passed first."""
        return self._worker.wait_idle(timeout)

    def on_session_end(self, messages: list[Message]) -> None:
        """Let queued syncs finish (up to ``sync_timeout``), then tell every provider."""
        if not self._admits_caller("on_session_end"):
            return
        if not self.wait_idle(self._sync_timeout):
            logger.warning("memory syncs of %s still pending at session end", self._home)
        for p in self.providers:
            self._call(p, "on_session_end", p.on_session_end, None, messages)

    def on_pre_compress(self, messages: list[Message], *, require_checkpoint: bool = False) -> str:
        """What the providers want the compression summary to keep, joined by blank lines.
        Version 1 providers get ``messages`` as they are, best effort; checkpoint v2 providers
        get the normalized evidence and ``require_checkpoint`` (when their override takes it).
        With ``require_checkpoint`` raises :class:`agent.checkpoint.CheckpointBlocked` when no
        v2 provider is active or one fails (:func:`agent.checkpoint.run_pre_compress`)."""
        if not self._admits_caller("on_pre_compress"):
            return ""

        def call(p: MemoryProvider, msgs: list[Message], require: bool) -> str:
            kw = accepted_kwargs(p, "on_pre_compress", {"require_checkpoint": require})
            with use_home(self._home), use_session_cwd(self.session_cwd):
                return p.on_pre_compress(msgs, **kw)

        def best_effort(p: MemoryProvider, msgs: list[Message], require: bool) -> str:
            return self._call(p, "on_pre_compress", call, "", p, msgs, require)

        try:
            texts = run_pre_compress(self.providers, messages, require_checkpoint, call, best_effort)
        except Exception as exc:
            logger.error("%s", exc, extra={"event": "memory_checkpoint_blocked"})
            raise
        return "\n\n".join(texts)

    def on_memory_write(self, action: str, target: str, content: str,
                        metadata: dict[str, Any] | None = None) -> None:
        """Mirror a built-in memory write to every external provider (after the write
        succeeded); ``metadata`` (``previous_content`` for replace/remove) goes to overrides
        that take it."""
        if not self._admits_caller("on_memory_write"):
            return
        for p in self.providers:
            if name_of(p) != BUILTIN_PROVIDER_NAME:
                kw = accepted_kwargs(p, "on_memory_write", {"metadata": dict(metadata or {})})
                self._call(p, "on_memory_write", p.on_memory_write, None, action, target, content, **kw)
