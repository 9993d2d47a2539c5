"""``signed_notes``: the bundled example of the guide's *minimal* config schema.

``hermes memory setup signed_notes`` asks one thing, the signing key (a secret: it goes to
``.env`` as ``SIGNED_NOTES_KEY``). Every optional setting is documented in README.md and read from
``$HERMES_HOME/signed_notes.json`` instead of being asked. Notes are kept in
``$HERMES_HOME/signed_notes/notes.jsonl``, each line HMAC-SHA256-signed with the key; recall uses
only lines whose signature verifies, so a hand-edited or foreign line is never fed to the model.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import threading
from pathlib import Path
from typing import Any

from agent.memory_provider import MemoryProvider
from agent.secret_scope import get_secret
from utils import read_json_or_empty

NAME = "signed_notes"
KEY_VAR = "SIGNED_NOTES_KEY"
#: The optional settings of ``$HERMES_HOME/signed_notes.json`` (never asked by setup).
DEFAULTS: dict[str, Any] = {"recall_limit": 3, "max_notes": 500}
_TOOLS: list[dict[str, Any]] = [
    {"name": "signed_note_add", "description": "Keep a short note.",
     "parameters": {"type": "object", "properties": {"text": {"type": "string"}},
                    "required": ["text"], "additionalProperties": False}},
    {"name": "signed_note_search", "description": "Find notes sharing words with the query.",
     "parameters": {"type": "object", "properties": {"query": {"type": "string"}},
                    "required": ["query"], "additionalProperties": False}},
]


def _words(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"\w+", text) if len(w) > 2}


class SignedNotesProvider(MemoryProvider):
    """The signed notes of the one profile :meth:`initialize` binds."""

    def __init__(self) -> None:
        self._key = b""
        self._home: Path | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return NAME

    def is_available(self) -> bool:
        """Check if this provider can activate. NO network calls."""
        return bool(get_secret(KEY_VAR))

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self._home = Path(kwargs["hermes_home"])
        self._key = (get_secret(KEY_VAR) or "").encode()

    def get_config_schema(self) -> list[dict[str, Any]]:
        """Minimal: only what the user must give. The rest is in signed_notes.json (README.md)."""
        return [{"key": "api_key", "description": "Signing key for your notes", "secret": True,
                 "required": True, "env_var": KEY_VAR}]

    def settings(self) -> dict[str, Any]:
        assert self._home is not None, "initialize() first"
        return {**DEFAULTS, **read_json_or_empty(self._home / f"{NAME}.json")}

    @property
    def notes_file(self) -> Path:
        assert self._home is not None, "initialize() first"
        return self._home / NAME / "notes.jsonl"

    def _sign(self, text: str) -> str:
        return hmac.new(self._key, text.encode(), hashlib.sha256).hexdigest()

    def add(self, text: str) -> int:
        """Append a signed note, keeping the newest ``max_notes``; returns how many are kept."""
        with self._lock:
            lines = self.notes_file.read_text(encoding="utf-8").splitlines() if self.notes_file.exists() else []
            lines.append(json.dumps({"text": text, "sig": self._sign(text)}))
            lines = lines[-int(self.settings()["max_notes"]):]
            self.notes_file.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.notes_file.with_suffix(".tmp")
            tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
            tmp.replace(self.notes_file)
            return len(lines)

    def verified(self) -> tuple[list[str], int]:
        """The notes whose signature verifies, and how many lines did not."""
        good, bad = [], 0
        lines = self.notes_file.read_text(encoding="utf-8").splitlines() if self.notes_file.exists() else []
        for line in lines:
            try:
                note = json.loads(line)
                ok = hmac.compare_digest(self._sign(str(note["text"])), str(note["sig"]))
            except (ValueError, KeyError, TypeError):
                ok = False
            if ok:
                good.append(str(note["text"]))
            else:
                bad += 1
        return good, bad

    def _search(self, query: str) -> list[str]:
        wanted = _words(query)
        good, _ = self.verified()
        ranked = sorted((n for n in good if wanted & _words(n)), key=lambda n: -len(wanted & _words(n)))
        return ranked[: int(self.settings()["recall_limit"])]

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [dict(t) for t in _TOOLS]

    def handle_tool_call(self, name: str, args: dict[str, Any], **kwargs: Any) -> str:
        if name == "signed_note_add":
            return json.dumps({"kept": self.add(str(args["text"]))})
        if name == "signed_note_search":
            return json.dumps({"notes": self._search(str(args["query"]))})
        return json.dumps({"error": f"signed_notes has no tool {name!r}"})

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        return "\n".join(f"- {note}" for note in self._search(query))

    def system_prompt_block(self) -> str:
        _, bad = self.verified()
        return f"signed_notes: {bad} note line(s) failed verification and are ignored." if bad else ""


def register(ctx: Any) -> None:
    """Called by the memory plugin discovery system."""
    ctx.register_memory_provider(SignedNotesProvider())
