"""``sqlite_fts``: long-term memory in a local SQLite FTS5 index (standard library only).

Storage is per profile: ``<hermes_home>/memory/sqlite_fts.db`` for memories and
``<hermes_home>/memory/sqlite_fts.json`` for settings, where ``hermes_home`` is the home given to
:meth:`SqliteFtsProvider.initialize`. Completed turns (``sync_turn``) and the host's built-in memory
writes (``on_memory_write``) are stored; ``prefetch`` recalls the best matches for the prompt; the
model gets two tools, ``memory_search`` and ``memory_store``.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from difflib import get_close_matches
from pathlib import Path
from typing import Any

from agent.context import active_home
from agent.memory_provider import MemoryProvider

from .store import FtsStore, fts5_available

__all__ = ["PROVIDER_NAME", "SqliteFtsProvider"]

logger = logging.getLogger(__name__)

PROVIDER_NAME = "sqlite_fts"
DEFAULT_MAX_RESULTS = 5
MAX_RESULTS_LIMIT = 50
_SNIPPET_CHARS = 300

_CONFIG_SCHEMA: list[dict[str, Any]] = [
    {
        "key": "max_results",
        "description": "How many memories a search or a recall returns at most",
        "type": "integer",
        "default": DEFAULT_MAX_RESULTS,
        "minimum": 1,
        "maximum": MAX_RESULTS_LIMIT,
        "secret": False,
        "required": False,
    }
]

_TOOLS: list[dict[str, Any]] = [
    {
        "name": "memory_search",
        "description": "Search long-term memory (past conversations and saved facts) by words.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Words to look for."},
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_RESULTS_LIMIT,
                    "description": "How many results at most (default: the max_results setting).",
                },
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    },
    {
        "name": "memory_store",
        "description": "Save a durable fact or note to long-term memory.",
        "parameters": {
            "type": "object",
            "properties": {"content": {"type": "string", "description": "The text to remember."}},
            "required": ["content"],
            "additionalProperties": False,
        },
    },
]


def config_path(hermes_home: str | os.PathLike[str]) -> Path:
    """Where the settings of the profile at ``hermes_home`` live."""
    return Path(hermes_home) / "memory" / f"{PROVIDER_NAME}.json"


def database_path(hermes_home: str | os.PathLike[str]) -> Path:
    """Where the memories of the profile at ``hermes_home`` live."""
    return Path(hermes_home) / "memory" / f"{PROVIDER_NAME}.db"


def _validate_max_results(value: Any) -> int:
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(
            f"{PROVIDER_NAME} setting 'max_results': expected an integer, got {value!r}"
        )
    if not 1 <= value <= MAX_RESULTS_LIMIT:
        raise ValueError(
            f"{PROVIDER_NAME} setting 'max_results': {value!r} is outside 1..{MAX_RESULTS_LIMIT}"
        )
    return value


def _load_settings(hermes_home: Path) -> dict[str, Any]:
    path = config_path(hermes_home)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        logger.warning("%s: ignoring unreadable settings %s: %s", PROVIDER_NAME, path, exc)
        return {}
    return data if isinstance(data, dict) else {}


def _write_json_atomically(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2, sort_keys=True)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class SqliteFtsProvider(MemoryProvider):
    """The bundled SQLite FTS5 memory provider. One instance serves one profile."""

    def __init__(self) -> None:
        self._store: FtsStore | None = None
        self._home: Path | None = None
        self._session_id = ""
        self._max_results = DEFAULT_MAX_RESULTS

    @property
    def name(self) -> str:
        return PROVIDER_NAME

    @property
    def home(self) -> Path | None:
        """The profile home given at :meth:`initialize` (``None`` before)."""
        return self._home

    def is_available(self) -> bool:
        return fts5_available()

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        home = kwargs.get("hermes_home")
        self._home = Path(home) if home else active_home()
        self._session_id = session_id
        settings = _load_settings(self._home)
        try:
            self._max_results = _validate_max_results(
                settings.get("max_results", DEFAULT_MAX_RESULTS)
            )
        except ValueError as exc:
            logger.warning("%s: %s; using %d", PROVIDER_NAME, exc, DEFAULT_MAX_RESULTS)
            self._max_results = DEFAULT_MAX_RESULTS
        store = FtsStore(database_path(self._home))
        store.ensure()
        self._store = store

    def _require_store(self) -> FtsStore:
        if self._store is None:
            raise RuntimeError(f"{PROVIDER_NAME} is not initialized (call initialize first)")
        return self._store

    # -- tools -----------------------------------------------------------------------------------

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [dict(tool) for tool in _TOOLS]

    def handle_tool_call(self, name: str, args: dict[str, Any], **kwargs: Any) -> str:
        if name == "memory_search":
            return json.dumps(self._tool_search(args))
        if name == "memory_store":
            session_id = str(kwargs.get("session_id") or self._session_id)
            return json.dumps(self._tool_store(args, session_id))
        return json.dumps({"error": f"{PROVIDER_NAME} has no tool {name!r}"})

    def _tool_search(self, args: dict[str, Any]) -> dict[str, Any]:
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            return {"error": "memory_search: 'query' must be a non-empty string"}
        try:
            limit = _validate_max_results(args.get("limit", self._max_results))
        except ValueError as exc:
            return {"error": f"memory_search: 'limit': {exc}"}
        hits = self._require_store().search(query, limit=limit)
        return {"count": len(hits), "results": [hit.to_dict() for hit in hits]}

    def _tool_store(self, args: dict[str, Any], session_id: str) -> dict[str, Any]:
        content = args.get("content")
        if not isinstance(content, str) or not content.strip():
            return {"error": "memory_store: 'content' must be a non-empty string"}
        memory_id, created = self._require_store().add(
            content.strip(), kind="fact", session_id=session_id
        )
        return {"stored": created, "id": memory_id}

    # -- hooks -----------------------------------------------------------------------------------

    def system_prompt_block(self) -> str:
        return (
            "Long-term memory (sqlite_fts): call memory_search to recall earlier conversations "
            "and saved facts; call memory_store to save a fact worth keeping."
        )

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        if self._store is None or not query.strip():
            return ""
        hits = self._store.search(query, limit=self._max_results, drop_stopwords=True)
        if not hits:
            return ""
        lines = [f"## Relevant memories ({PROVIDER_NAME})"]
        for hit in hits:
            text = " ".join(hit.content.split())
            if len(text) > _SNIPPET_CHARS:
                text = " ".join(hit.snippet.split()) or text[:_SNIPPET_CHARS] + " …"
            lines.append(f"- {text}")
        return "\n".join(lines)

    def sync_turn(
        self,
        user: str,
        assistant: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        if not (user or "").strip() and not (assistant or "").strip():
            return
        content = f"User: {(user or '').strip()}\nAssistant: {(assistant or '').strip()}"
        self._require_store().add(content, kind="turn", session_id=session_id or self._session_id)

    def on_memory_write(self, action: str, target: str, content: str) -> None:
        if action in ("add", "replace") and content and content.strip():
            self._require_store().add(
                content.strip(), kind=f"builtin:{target}", session_id=self._session_id
            )

    def shutdown(self) -> None:
        self._store = None

    # -- settings --------------------------------------------------------------------------------

    def get_config_schema(self) -> list[dict[str, Any]]:
        return [dict(field) for field in _CONFIG_SCHEMA]

    def load_config(self, hermes_home: str | os.PathLike[str]) -> dict[str, Any]:
        return _load_settings(Path(hermes_home))

    def save_config(self, values: dict[str, Any], hermes_home: str | os.PathLike[str]) -> None:
        known = [field["key"] for field in _CONFIG_SCHEMA]
        for key in values:
            if key not in known:
                close = get_close_matches(key, known, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise ValueError(f"{PROVIDER_NAME} has no setting {key!r}{hint}")
        settings = _load_settings(Path(hermes_home))
        if "max_results" in values:
            settings["max_results"] = _validate_max_results(values["max_results"])
        _write_json_atomically(config_path(hermes_home), settings)
        if self._home is not None and Path(hermes_home) == self._home:
            self._max_results = settings.get("max_results", self._max_results)
