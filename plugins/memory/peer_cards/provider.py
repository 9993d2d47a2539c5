"""The ``peer_cards`` provider: facts per peer, recalled before each turn, kept by two tools."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from agent.memory_provider import MemoryProvider, spawn_context_thread

from . import store

_TOOLS: list[dict[str, Any]] = [
    {"name": "peer_card_add", "description": "Keep a short fact about a peer (default: the user).",
     "parameters": {"type": "object", "properties": {"fact": {"type": "string"}, "peer": {"type": "string"}},
                    "required": ["fact"], "additionalProperties": False}},
    {"name": "peer_card_search", "description": "Find facts sharing words with the query.",
     "parameters": {"type": "object", "properties": {"query": {"type": "string"}},
                    "required": ["query"], "additionalProperties": False}},
]


class PeerCardsProvider(MemoryProvider):
    """The peer cards of the one profile :meth:`initialize` binds."""

    def __init__(self) -> None:
        self._home: Path | None = None
        self._sync_thread: threading.Thread | None = None

    @property
    def name(self) -> str:
        return store.NAME

    def is_available(self) -> bool:
        return True  # local files only; no network, no key

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self._home = Path(kwargs["hermes_home"])  # the guide's CORRECT pattern: bound on the instance
        self._session_id = session_id

    @property
    def home(self) -> Path:
        assert self._home is not None, "initialize() first"
        return self._home

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [dict(t) for t in _TOOLS]

    def handle_tool_call(self, name: str, args: dict[str, Any], **kwargs: Any) -> str:
        if name == "peer_card_add":
            peer = str(args.get("peer") or store.settings(self.home)["user_peer"])
            return json.dumps({"id": store.add(self.home, peer, str(args["fact"])), "peer": peer})
        if name == "peer_card_search":
            found = store.recall(self.home, str(args["query"]), int(store.settings(self.home)["recall_limit"]))
            return json.dumps([{"peer": p, **f} for p, f in found])
        return json.dumps({"error": f"peer_cards has no tool {name!r}"})

    def get_config_schema(self) -> list[dict[str, Any]]:
        return [
            {"key": "user_peer", "description": "Your peer name", "default": store.DEFAULTS["user_peer"]},
            {"key": "ai_peer", "description": "The assistant's peer name", "default": store.DEFAULTS["ai_peer"]},
            {"key": "recall_limit", "description": "Facts recalled before a turn", "type": "integer",
             "default": store.DEFAULTS["recall_limit"]},
        ]

    def load_config(self, hermes_home: str | Path) -> dict[str, Any]:
        return store.read_json_or_empty(store.settings_path(Path(hermes_home)))

    def save_config(self, values: dict[str, Any], hermes_home: str | Path) -> None:
        store.save_settings(Path(hermes_home), values)

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        found = store.recall(self.home, query, int(store.settings(self.home)["recall_limit"]))
        return "\n".join(f"- ({peer}) {fact['fact']}" for peer, fact in found)

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: list[dict[str, Any]] | None = None) -> None:
        home = self.home

        def _sync() -> None:
            store.note_turn(home, session_id or self._session_id)

        if self._sync_thread and self._sync_thread.is_alive():
            self._sync_thread.join(timeout=5.0)
        self._sync_thread = spawn_context_thread(_sync, name="peer-cards-sync")
        self._sync_thread.start()

    def shutdown(self) -> None:
        if self._sync_thread is not None:
            self._sync_thread.join(timeout=5.0)
