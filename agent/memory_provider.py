"""The contract between the host and a memory provider.

A memory provider gives the agent recall across sessions. The host loads at most one *external*
provider per profile (the one ``memory.provider`` names), hands it to a
:class:`agent.memory_manager.MemoryManager`, and from then on talks to it only through the methods
below. The manager calls every method inside the provider's own profile: the active home and the
secret scope (:mod:`agent.context`) are bound to the profile the manager serves, on whatever thread
the call happens.

Lifecycle, in order::

    is_available()                    cheap check, no network
    initialize(session_id, **kwargs)  once per session, before anything else below
    system_prompt_block()             static text for the system prompt
    prefetch(query) / queue_prefetch  recall before a turn / warm up for the next one
    get_tool_schemas / handle_tool_call   the provider's tools
    sync_turn(user, assistant, ...)   after each turn (on a background thread)
    on_pre_compress / on_memory_write optional observers
    on_session_end(messages)          at a session boundary
    shutdown()                        last call; flush and close

Required methods are abstract (``name``, ``is_available``, ``initialize``, ``get_tool_schemas``).
``handle_tool_call``, ``get_config_schema`` and ``save_config`` have defaults for providers without
tools or settings, and optional hooks have no-op defaults, so a provider overrides only what it
uses. Providers written against the older ``sync_turn(user, assistant)`` signature keep
working: callers go through :func:`call_sync_turn`, which passes only what the override accepts.
"""

from __future__ import annotations

import inspect
import json
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.threads import spawn_context_thread

__all__ = [
    "PRE_COMPRESS_CHECKPOINT_API_VERSION",
    "InitFailure",
    "MemoryProvider",
    "ProviderInitError",
    "accepted_kwargs",
    "call_sync_turn",
    "spawn_context_thread",
]

Message = dict[str, Any]
ToolSchema = dict[str, Any]
ConfigField = dict[str, Any]

#: Version 1: ``on_pre_compress`` is best effort and receives the raw message list. Version 2: the
#: provider durably checkpoints on every successful ``on_pre_compress`` call before returning.
PRE_COMPRESS_CHECKPOINT_API_VERSION = 2


class MemoryProvider(ABC):
    """Base class of every memory provider. Subclass it and implement the abstract methods.

    Instances are per profile and per load: a host creates a fresh instance for each manager, and
    a manager refuses an instance another manager already holds.
    """

    #: Which ``on_pre_compress`` contract this provider keeps (see
    #: :data:`PRE_COMPRESS_CHECKPOINT_API_VERSION`). 1 is the historical best-effort contract.
    pre_compress_checkpoint_api_version: int = 1

    # -- required ---------------------------------------------------------------------------

    @property
    @abstractmethod
    def name(self) -> str:
        """Short stable identifier, equal to the plugin's name (e.g. ``"sqlite_fts"``).

        MUST be constant for the instance's lifetime; it names the provider in logs, tool routing
        and error results. ``"builtin"`` is reserved for the host's own provider.
        """

    @abstractmethod
    def is_available(self) -> bool:
        """Whether this provider can run here: configured, credentials present, backend present.

        MUST NOT use the network or block for long (it runs at start-up and in ``hermes memory
        status``). MUST NOT raise; return ``False`` instead. Readiness of declared Python
        dependencies is pm's job, not this method's.
        """

    @abstractmethod
    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Prepare for the session ``session_id``: open stores, create tables, start workers.

        Called once, before any other hook. ``kwargs`` always include ``hermes_home`` (``str``,
        the profile's home: keep all profile-scoped storage under it, never ``~/.hermes``) and
        usually ``platform`` (``"cli"``, ``"telegram"``, ``"cron"`` …). Other keys may appear
        (``agent_context``, ``agent_identity``, ``user_id`` …); implementations MUST accept and
        ignore keys they do not know, and MUST tolerate optional keys being absent. Raise to
        report that the provider cannot serve this session; the manager reports it loudly.
        """

    @abstractmethod
    def get_tool_schemas(self) -> list[ToolSchema]:
        """The tools this provider offers the model, in the OpenAI function format:
        ``{"name": ..., "description": ..., "parameters": <JSON Schema object>}``.

        Return ``[]`` for a context-only provider. Names SHOULD be unique across providers; the
        manager routes a call to the first provider that declared the name. Must be cheap.
        """

    # -- defaults a provider may keep (the guide: "leave the no-op default") ----------------------

    def handle_tool_call(self, name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run the tool ``name`` (one of :meth:`get_tool_schemas`) with the model's ``args``.

        Returns the tool result as a JSON string; report a bad argument as a JSON object with an
        ``"error"`` key rather than raising. ``kwargs`` carry the call context and MUST be
        accepted even when unused: ``session_id``, and from the manager ``hermes_home`` (the
        profile this instance was initialized for), ``agent_identity`` and ``caller_gsk`` (the
        caller's gateway session key, ``""`` outside a gateway). Use them to check, never to
        rebind. Exceptions are caught by the manager and turned into an error result.

        Default (a provider without tools): an ``{"error": ...}`` result naming the tool.
        """
        return json.dumps({"error": f"memory provider {self.name!r} has no tool {name!r}"})

    def get_config_schema(self) -> list[ConfigField]:
        """The settings ``hermes memory setup`` asks for, one dict per field: ``key`` and
        ``description`` (required), ``secret`` (bool: goes to ``<home>/.env`` under ``env_var``,
        never to :meth:`save_config`), ``env_var``, ``required``, ``default``, ``choices``,
        ``type`` (``text``, ``integer``, ``number``, ``boolean``), ``url``.

        Pure: no I/O. Default ``[]``: no settings. A ``config_schema.py`` beside the provider's
        ``__init__.py`` (a literal ``CONFIG_SCHEMA = [...]``, read from disk) takes precedence in
        ``hermes memory setup`` (:mod:`agent.config_schema`).
        """
        return []

    def save_config(self, values: dict[str, Any], hermes_home: str | Path) -> None:  # noqa: B027
        """Persist the non-secret settings ``values`` for the profile at ``hermes_home``.

        Secrets are never passed here. MUST write only under ``hermes_home`` and SHOULD write
        atomically (:func:`utils.atomic_json_write`). Raise ``ValueError`` with a message naming
        the key for an invalid value. Default: nothing (an environment-variable-only provider).
        """

    def load_config(self, hermes_home: str | Path) -> dict[str, Any]:
        """The non-secret settings :meth:`save_config` stored for the profile at ``hermes_home``,
        by their keys: what ``hermes memory setup`` offers as the defaults when it runs again (a
        person pressing Enter keeps them). Reads only; MUST NOT raise for a missing or unreadable
        file (return what can be read). Default ``{}``: setup offers the schema's defaults."""
        return {}

    # -- optional hooks (no-op defaults) --------------------------------------------------------

    def system_prompt_block(self) -> str:
        """Static text for the system prompt (instructions, status); ``""`` for none."""
        return ""

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """Recall for the turn about to run: formatted text to inject as context, ``""`` when
        nothing is relevant. Runs on the agent's path before each model call, so it MUST be
        fast; slow backends do the work in :meth:`queue_prefetch` and return cached text here."""
        return ""

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:  # noqa: B027
        """Start recall for the *next* turn in the background. MUST NOT block."""

    def sync_turn(  # noqa: B027
        self,
        user: str,
        assistant: str,
        *,
        session_id: str = "",
        messages: list[Message] | None = None,
    ) -> None:
        """Persist one completed turn. ``messages`` is the OpenAI-style conversation as of the
        turn (tool calls included) when the host has it. Called on the manager's background
        thread, in turn order, never concurrently with another ``sync_turn`` of the same manager
        — but possibly while the agent's thread calls another hook (a tool call, a prefetch)."""

    def on_session_end(self, messages: list[Message]) -> None:  # noqa: B027
        """A session boundary (exit, reset, expiry); ``messages`` is the whole conversation.
        Every ``sync_turn`` queued before it has run when it is called."""

    def on_pre_compress(self, messages: list[Message], *, require_checkpoint: bool = False) -> str:
        """``messages`` are about to be summarized away. Return text the summary must keep
        (``""`` for none); it is forwarded into the summary prompt.

        Version 1 (default): best effort, the raw message list; an exception is logged and the
        compaction goes on. Version 2 (``pre_compress_checkpoint_api_version = 2``): every
        successful return means the durable checkpoint is committed, so raise on any failure;
        ``messages`` is the normalized evidence (user/assistant text only, earlier summaries
        left out: :func:`agent.checkpoint.normalize_evidence`); ``require_checkpoint`` mirrors
        ``compression.checkpoint_required`` (True: a raise blocks the lossy rewrite with
        ``BLOCKED_MISSING_PREREQUISITE``). Overrides without the keyword keep working."""
        return ""

    def on_memory_write(  # noqa: B027
        self, action: str, target: str, content: str, *, metadata: dict[str, Any] | None = None
    ) -> None:
        """Mirror of a write to the host's built-in memory: ``action`` (``"add"``,
        ``"replace"``, ``"remove"``), ``target`` (``"memory"`` or ``"user"``), ``content``.
        Called only after the write (or the whole batch) succeeded, in operation order. For
        ``replace`` and ``remove``, ``metadata["previous_content"]`` is the full text of the
        entry the host chose under the store's lock (``old_text`` is only the caller's search
        string). Overrides with the older three-argument signature keep working."""

    def shutdown(self) -> None:  # noqa: B027
        """Last call: flush queues, close connections. MUST be safe to call more than once."""


# -- errors the host reports -------------------------------------------------------------------


@dataclass(frozen=True)
class InitFailure:
    """One provider that could not start: its ``provider`` name, a one-line ``reason``, and the
    ``error`` raised (``None`` when ``is_available()`` said no)."""

    provider: str
    reason: str
    error: BaseException | None = None


class ProviderInitError(RuntimeError):
    """Raised by :meth:`MemoryManager.initialize_all` after trying every provider, when at least
    one could not start. ``failures`` names each; the providers that did start stay usable."""

    def __init__(self, failures: list[InitFailure]) -> None:
        self.failures = tuple(failures)
        lines = "; ".join(f"memory provider {f.provider!r} {f.reason}" for f in self.failures)
        super().__init__(f"{lines} (run `hermes memory status` for details)")



# -- calling hooks across signature generations --------------------------------------------------

_SIGNATURES: dict[tuple[type, str], tuple[bool, frozenset[str]]] = {}
_SIGNATURES_LOCK = threading.Lock()


def _signature_of(cls: type, method: str) -> tuple[bool, frozenset[str]]:
    """``(takes **kwargs, keyword-capable parameter names)`` of ``cls.method``, inspected once
    per class and cached."""
    key = (cls, method)
    cached = _SIGNATURES.get(key)
    if cached is not None:
        return cached
    func: Callable[..., Any] = getattr(cls, method)
    result: tuple[bool, frozenset[str]]
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):  # a builtin or C callable: assume the current contract
        result = (True, frozenset())
    else:
        var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)
        names = frozenset(
            p.name
            for p in params
            if p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        )
        result = (var_kw, names)
    with _SIGNATURES_LOCK:
        _SIGNATURES[key] = result
    return result


def accepted_kwargs(provider: object, method: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The subset of ``kwargs`` that ``provider.method`` accepts by keyword (all of them when it
    takes ``**kwargs``). Lets the host call an older override without a ``TypeError``."""
    var_kw, names = _signature_of(type(provider), method)
    if var_kw:
        return dict(kwargs)
    return {key: value for key, value in kwargs.items() if key in names}


def call_sync_turn(
    provider: MemoryProvider,
    user: str,
    assistant: str,
    *,
    session_id: str = "",
    messages: list[Message] | None = None,
) -> None:
    """Call ``provider.sync_turn`` with the keywords its override accepts: the current signature
    gets ``session_id`` and ``messages``; the older ``sync_turn(user, assistant)`` gets neither.
    Exceptions propagate (the manager catches and logs them)."""
    extra = accepted_kwargs(
        provider, "sync_turn", {"session_id": session_id, "messages": messages}
    )
    provider.sync_turn(user, assistant, **extra)
