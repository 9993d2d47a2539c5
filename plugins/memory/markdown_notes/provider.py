"""``markdown_notes``: the model's notes, in ``<home>/memory/notes.md`` (see :mod:`.notes`).

The model adds notes with ``note_add`` and finds them with ``note_search``; writes to the host's
built-in memory are mirrored as notes under their target (``memory`` or ``user``); ``prefetch``
recalls notes sharing words with the prompt. Settings: ``<home>/memory/markdown_notes.json``.
Every write re-reads the file (the user may edit it) and replaces it atomically, under a lock.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import threading
from datetime import date
from pathlib import Path
from typing import Any

from agent.context import active_home
from agent.memory_provider import MemoryProvider

from .notes import Note, Notebook, parse, render

__all__ = ["PROVIDER_NAME", "MarkdownNotesProvider", "notes_path"]

PROVIDER_NAME = "markdown_notes"
_SCHEMA = [{"key": "recall_limit", "description": "How many notes to recall before a turn",
            "type": "integer", "default": 5, "secret": False, "required": False}]
_TOOLS: list[dict[str, Any]] = [
    {"name": "note_add", "description": "Keep a short note, optionally under a topic.",
     "parameters": {"type": "object", "properties": {
         "text": {"type": "string"}, "topic": {"type": "string"}},
         "required": ["text"], "additionalProperties": False}},
    {"name": "note_search", "description": "Find notes sharing words with the query.",
     "parameters": {"type": "object", "properties": {"query": {"type": "string"}},
                    "required": ["query"], "additionalProperties": False}},
]


def notes_path(home: str | os.PathLike[str]) -> Path:
    return Path(home) / "memory" / "notes.md"


def settings_path(home: str | os.PathLike[str]) -> Path:
    return Path(home) / "memory" / f"{PROVIDER_NAME}.json"


def _words(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"\w+", text) if len(w) > 2}


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


class MarkdownNotesProvider(MemoryProvider):
    """The Markdown notes of one profile."""

    def __init__(self) -> None:
        self._home: Path | None = None
        self._recall_limit = 5
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return PROVIDER_NAME

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        home = kwargs.get("hermes_home")
        self._home = Path(home) if home else active_home()
        self._read()  # refuse an unreadable format now, loudly, not at the first write
        try:
            data = json.loads(settings_path(self._home).read_text(encoding="utf-8"))
            self._recall_limit = int(data.get("recall_limit", 5))
        except (FileNotFoundError, ValueError, AttributeError):
            self._recall_limit = 5

    def _path(self) -> Path:
        if self._home is None:
            raise RuntimeError(f"{PROVIDER_NAME} is not initialized (call initialize first)")
        return notes_path(self._home)

    def _read(self) -> Notebook:
        try:
            text = self._path().read_text(encoding="utf-8")
        except FileNotFoundError:
            return Notebook()
        return parse(text, source=str(self._path()))

    def add(self, topic: str, text: str) -> bool:
        """Add a note (one line) under ``topic``; ``False`` when it is already there."""
        text = " ".join(text.split())
        with self._lock:
            book = self._read()
            added = book.add(topic.strip() or "general", Note(text, date.today().isoformat()))
            if added:
                _atomic_write(self._path(), render(book))
        return added

    def search(self, query: str) -> list[tuple[str, Note]]:
        wanted = _words(query)
        notes = enumerate(self._read().all())
        scored = [(len(wanted & _words(n.text)), i, t, n) for i, (t, n) in notes]
        scored = [s for s in scored if s[0]]
        scored.sort(key=lambda s: (-s[0], -s[1]))
        return [(topic, note) for _, _, topic, note in scored]

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [dict(tool) for tool in _TOOLS]

    def handle_tool_call(self, name: str, args: dict[str, Any], **kwargs: Any) -> str:
        if name == "note_add":
            text = args.get("text")
            if not isinstance(text, str) or not text.strip():
                return json.dumps({"error": "note_add: 'text' must be a non-empty string"})
            return json.dumps({"added": self.add(str(args.get("topic") or "general"), text)})
        if name == "note_search":
            found = self.search(str(args.get("query", "")))
            return json.dumps({"notes": [{"topic": t, "text": n.text, "date": n.date}
                                         for t, n in found]})
        return json.dumps({"error": f"{PROVIDER_NAME} has no tool {name!r}"})

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        if self._home is None:
            return ""
        found = self.search(query)[: self._recall_limit]
        if not found:
            return ""
        return "\n".join(["## Notes (markdown_notes)"] + [f"- [{t}] {n.text}" for t, n in found])

    def on_memory_write(self, action: str, target: str, content: str) -> None:
        if action in ("add", "replace") and content.strip():
            self.add(target, content)

    def get_config_schema(self) -> list[dict[str, Any]]:
        return [dict(field) for field in _SCHEMA]

    def load_config(self, hermes_home: str | os.PathLike[str]) -> dict[str, Any]:
        try:
            data = json.loads(settings_path(hermes_home).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def save_config(self, values: dict[str, Any], hermes_home: str | os.PathLike[str]) -> None:
        for key, value in values.items():
            if key != "recall_limit":
                raise ValueError(f"{PROVIDER_NAME} has no setting {key!r} (known: recall_limit)")
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 50:
                raise ValueError(f"{PROVIDER_NAME} setting 'recall_limit': expected an integer "
                                 f"in 1..50, got {value!r}")
        _atomic_write(settings_path(hermes_home), json.dumps(values, sort_keys=True) + "\n")
        if self._home == Path(hermes_home) and "recall_limit" in values:
            self._recall_limit = values["recall_limit"]
