"""honcho-lite: keeps the last turns of a session in <home>/memory/honcho-lite.json."""

import json
from pathlib import Path

from agent.memory_provider import MemoryProvider


class HonchoLite(MemoryProvider):
    def __init__(self) -> None:
        self._file: Path | None = None

    @property
    def name(self) -> str:
        return "honcho-lite"

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id, **kwargs):
        self._file = Path(kwargs["hermes_home"]) / "memory" / "honcho-lite.json"
        self._file.parent.mkdir(parents=True, exist_ok=True)

    def get_tool_schemas(self):
        return []

    def handle_tool_call(self, name, args, **kwargs):
        return json.dumps({"error": f"unknown tool {name}"})

    def get_config_schema(self):
        return []

    def save_config(self, values, hermes_home):
        pass

    def sync_turn(self, user, assistant, *, session_id="", messages=None):
        turns = json.loads(self._file.read_text()) if self._file.exists() else []
        self._file.write_text(json.dumps((turns + [[user, assistant]])[-20:]))


def register(ctx):
    ctx.register_memory_provider(HonchoLite())
