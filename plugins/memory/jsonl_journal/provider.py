"""``jsonl_journal``: every completed turn appended to a JSON-lines journal of the profile.

Storage (per profile, under the ``hermes_home`` given to ``initialize``):
``<home>/memory/jsonl_journal/journal.jsonl`` — one object per line: ``ts`` (ISO 8601, UTC),
``session_id``, ``user``, ``assistant``; and ``<home>/memory/jsonl_journal/settings.yaml`` — the
settings, read and written with PyYAML (``yaml.safe_load`` / ``yaml.safe_dump``). A damaged line
is skipped when reading (logged), never fatal; appends are one ``write`` each, under a lock.
"""

from __future__ import annotations

import json
import logging
import os
import re
import tempfile
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import yaml

from agent.context import active_home
from agent.memory_provider import MemoryProvider

__all__ = ["PROVIDER_NAME", "JsonlJournalProvider", "journal_path", "settings_path"]

logger = logging.getLogger(__name__)

PROVIDER_NAME = "jsonl_journal"
_DEFAULTS: dict[str, Any] = {"recall_limit": 3, "max_entry_chars": 2000}
_LIMITS = {"recall_limit": (1, 20), "max_entry_chars": (100, 100_000)}

_SCHEMA: list[dict[str, Any]] = [
    {"key": "recall_limit", "description": "How many journal entries to recall before a turn",
     "type": "integer", "default": 3, "secret": False, "required": False},
    {"key": "max_entry_chars", "description": "Longest text kept per side of a turn",
     "type": "integer", "default": 2000, "secret": False, "required": False},
]
_TOOLS: list[dict[str, Any]] = [
    {"name": "journal_search",
     "description": "Find journal entries (past turns) containing every word of the query.",
     "parameters": {"type": "object", "properties": {
         "query": {"type": "string"}, "limit": {"type": "integer", "minimum": 1, "maximum": 50}},
         "required": ["query"], "additionalProperties": False}},
    {"name": "journal_recent", "description": "The most recent journal entries, newest first.",
     "parameters": {"type": "object", "properties": {
         "count": {"type": "integer", "minimum": 1, "maximum": 50}},
         "additionalProperties": False}},
]


def journal_path(home: str | os.PathLike[str]) -> Path:
    return Path(home) / "memory" / PROVIDER_NAME / "journal.jsonl"


def settings_path(home: str | os.PathLike[str]) -> Path:
    return Path(home) / "memory" / PROVIDER_NAME / "settings.yaml"


def _words(text: str) -> list[str]:
    return [w.lower() for w in re.findall(r"\w+", text) if len(w) > 2]


def _check(key: str, value: Any) -> int:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    low, high = _LIMITS[key]
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{PROVIDER_NAME} setting {key!r}: expected an integer in {low}..{high}, "
                         f"got {value!r}")
    return value


def read_settings(home: Path) -> dict[str, Any]:
    """The settings of ``home`` (defaults for what is missing or invalid, logged)."""
    settings = dict(_DEFAULTS)
    try:
        data = yaml.safe_load(settings_path(home).read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        return settings
    except (OSError, yaml.YAMLError) as exc:
        logger.warning("%s: ignoring unreadable %s: %s", PROVIDER_NAME, settings_path(home), exc)
        return settings
    for key in _DEFAULTS:
        if isinstance(data, dict) and key in data:
            try:
                settings[key] = _check(key, data[key])
            except ValueError as exc:
                logger.warning("%s (using %r)", exc, _DEFAULTS[key])
    return settings


class JsonlJournalProvider(MemoryProvider):
    """The JSONL journal of one profile. One instance serves one profile."""

    def __init__(self) -> None:
        self._home: Path | None = None
        self._session_id = ""
        self._settings = dict(_DEFAULTS)
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return PROVIDER_NAME

    def is_available(self) -> bool:
        return True  # local files only; PyYAML is checked by pm before this module is imported

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        home = kwargs.get("hermes_home")
        self._home = Path(home) if home else active_home()
        self._session_id = session_id
        self._settings = read_settings(self._home)
        journal_path(self._home).parent.mkdir(parents=True, exist_ok=True)

    def _journal(self) -> Path:
        if self._home is None:
            raise RuntimeError(f"{PROVIDER_NAME} is not initialized (call initialize first)")
        return journal_path(self._home)

    def entries(self) -> list[dict[str, Any]]:
        """Every readable entry, oldest first."""
        try:
            lines = self._journal().read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        found = []
        for number, line in enumerate(lines, 1):
            try:
                entry = json.loads(line)
            except ValueError:
                logger.warning("%s: skipping damaged line %d of %s", PROVIDER_NAME, number,
                               self._journal())
                continue
            if isinstance(entry, dict):
                found.append(entry)
        return found

    def _matching(self, query: str, *, every: bool) -> list[dict[str, Any]]:
        wanted = set(_words(query))
        if not wanted:
            return []
        scored = []
        for index, entry in enumerate(self.entries()):
            have = set(_words(f"{entry.get('user', '')} {entry.get('assistant', '')}"))
            hits = len(wanted & have)
            if hits and (not every or hits == len(wanted)):
                scored.append((hits, index, entry))
        scored.sort(key=lambda item: (-item[0], -item[1]))
        return [entry for _, _, entry in scored]

    # -- tools -----------------------------------------------------------------------------------

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [dict(tool) for tool in _TOOLS]

    def handle_tool_call(self, name: str, args: dict[str, Any], **kwargs: Any) -> str:
        if name == "journal_search":
            query = args.get("query")
            if not isinstance(query, str) or not query.strip():
                return json.dumps({"error": "journal_search: 'query' must be a non-empty string"})
            found = self._matching(query, every=True)[: int(args.get("limit", 10))]
            return json.dumps({"count": len(found), "entries": found})
        if name == "journal_recent":
            count = int(args.get("count", 5))
            return json.dumps({"entries": list(reversed(self.entries()))[:count]})
        return json.dumps({"error": f"{PROVIDER_NAME} has no tool {name!r}"})

    # -- hooks -----------------------------------------------------------------------------------

    def system_prompt_block(self) -> str:
        return ("Journal (jsonl_journal): every finished turn is journaled; call journal_search "
                "or journal_recent to look back.")

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        if self._home is None:
            return ""
        found = self._matching(query, every=False)[: self._settings["recall_limit"]]
        if not found:
            return ""
        lines = ["## From the journal (jsonl_journal)"]
        lines += [f"- [{e.get('ts', '?')}] User: {e.get('user', '')} / "
                  f"Assistant: {e.get('assistant', '')}" for e in found]
        return "\n".join(lines)

    def sync_turn(self, user: str, assistant: str, *, session_id: str = "",
                  messages: list[dict[str, Any]] | None = None) -> None:
        limit = self._settings["max_entry_chars"]
        entry = {"ts": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                 "session_id": session_id or self._session_id,
                 "user": (user or "")[:limit], "assistant": (assistant or "")[:limit]}
        line = json.dumps(entry, ensure_ascii=False) + "\n"
        with self._lock, open(self._journal(), "a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())

    # -- settings --------------------------------------------------------------------------------

    def get_config_schema(self) -> list[dict[str, Any]]:
        return [dict(field) for field in _SCHEMA]

    def load_config(self, hermes_home: str | os.PathLike[str]) -> dict[str, Any]:
        return read_settings(Path(hermes_home))

    def save_config(self, values: dict[str, Any], hermes_home: str | os.PathLike[str]) -> None:
        unknown = sorted(set(values) - set(_DEFAULTS))
        if unknown:
            raise ValueError(f"{PROVIDER_NAME} has no setting {unknown[0]!r} "
                             f"(known: {', '.join(_DEFAULTS)})")
        home = Path(hermes_home)
        settings = read_settings(home)
        settings.update({key: _check(key, value) for key, value in values.items()})
        path = settings_path(home)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".settings.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            yaml.safe_dump(settings, handle, sort_keys=True)
        os.replace(tmp, path)
        if self._home == home:
            self._settings = settings
