"""``user_id`` reaches ``initialize`` when the platform knows the user, and is absent otherwise."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent.memory_manager import MemoryManager
from agent.memory_provider import MemoryProvider


class Users(MemoryProvider):
    def __init__(self) -> None:
        self.seen: dict[str, Any] = {}

    @property
    def name(self) -> str:
        return "users"

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self.seen = kwargs

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return []


class Strict(Users):  # names its keywords: extra ones must not break it
    def initialize(self, session_id, *, hermes_home, platform="cli"):  # type: ignore[no-untyped-def,override]
        self.seen = {"hermes_home": hermes_home, "platform": platform}


def test_user_id_is_passed_when_known_and_absent_otherwise(tmp_path: Path) -> None:
    with_user, without = Users(), Users()
    for provider, kwargs in ((with_user, {"user_id": "tg:42"}), (without, {})):
        mgr = MemoryManager(tmp_path / provider.__class__.__name__ / str(len(kwargs)))
        mgr.add_provider(provider)
        mgr.initialize_all("s", platform="telegram", **kwargs)
        mgr.shutdown_all()
    assert with_user.seen["user_id"] == "tg:42" and "user_id" not in without.seen


def test_a_provider_that_does_not_take_user_id_still_initializes(tmp_path: Path) -> None:
    strict = Strict()
    mgr = MemoryManager(tmp_path)
    mgr.add_provider(strict)
    mgr.initialize_all("s", platform="telegram", user_id="tg:42")
    assert strict.seen == {"hermes_home": str(tmp_path), "platform": "telegram"}
    mgr.shutdown_all()
