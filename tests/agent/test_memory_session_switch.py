"""A session switch (/new, /reset): the old session ends, the new one is initialized, same profile."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent.memory_manager import MemoryManager
from agent.memory_provider import MemoryProvider
from agent.session import AgentSession


class Switchy(MemoryProvider):
    def __init__(self) -> None:
        self.events: list[Any] = []

    @property
    def name(self) -> str:
        return "switchy"

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self.events.append(("initialize", session_id, kwargs["hermes_home"]))

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return []

    def sync_turn(self, user, assistant, *, session_id="", messages=None):  # type: ignore[no-untyped-def,override]
        self.events.append(("sync", user, session_id))

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        self.events.append(("end", len(messages)))


def test_switch_session_ends_the_old_one_after_its_syncs_and_starts_the_new_one(tmp_path: Path) -> None:
    session = AgentSession(tmp_path, "old")
    provider = Switchy()
    session.manager = MemoryManager(tmp_path)
    session.manager.add_provider(provider)
    session.manager.initialize_all("old")
    session.sync_turn("u1", "a1")
    session.switch_session("new", [{"role": "user", "content": "u1"}])
    session.sync_turn("u2", "a2")
    assert session.manager.wait_idle(5)
    assert provider.events == [("initialize", "old", str(tmp_path)), ("sync", "u1", "old"), ("end", 1),
                               ("initialize", "new", str(tmp_path)), ("sync", "u2", "new")]
    session.close()
