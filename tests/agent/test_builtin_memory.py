"""The built-in MEMORY.md / USER.md store: previous_content under its lock, notify after success."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from agent.builtin_memory import BuiltinMemoryError, BuiltinMemoryProvider, BuiltinMemoryStore, MemoryOp
from agent.memory_manager import MemoryManager
from agent.memory_provider import MemoryProvider


def test_batch_previous_content_reflects_earlier_operations_and_notifies_in_order(tmp_path: Path) -> None:
    told: list[tuple[str, str, str, dict[str, Any]]] = []
    store = BuiltinMemoryStore(tmp_path, lambda *a: told.append(a))
    store.apply([MemoryOp("add", "memory", "Cat is Miso"), MemoryOp("add", "user", "Lives in Lisbon")])
    told.clear()
    store.apply([MemoryOp("replace", "memory", "Cat is Miso, 3 years old", old_text="Miso"),
                 MemoryOp("replace", "memory", "Cat Miso is 4", old_text="3 years"),
                 MemoryOp("remove", "user", old_text="Lisbon")])
    assert told == [
        ("replace", "memory", "Cat is Miso, 3 years old", {"previous_content": "Cat is Miso"}),
        ("replace", "memory", "Cat Miso is 4", {"previous_content": "Cat is Miso, 3 years old"}),
        ("remove", "user", "Lives in Lisbon", {"previous_content": "Lives in Lisbon"}),
    ]
    assert store.entries("memory") == ["Cat Miso is 4"] and store.entries("user") == []
    assert (tmp_path / "memories" / "MEMORY.md").read_text() == "Cat Miso is 4\n"


def test_a_failing_batch_writes_and_announces_nothing(tmp_path: Path) -> None:
    told: list[Any] = []
    store = BuiltinMemoryStore(tmp_path, lambda *a: told.append(a))
    store.apply([MemoryOp("add", "memory", "a cat"), MemoryOp("add", "memory", "a car")])
    told.clear()
    before = (tmp_path / "memories" / "MEMORY.md").read_bytes()
    with pytest.raises(BuiltinMemoryError) as err:
        store.apply([MemoryOp("remove", "memory", old_text="a cat"), MemoryOp("remove", "memory", old_text="a cat")])
    assert str(err.value) == "memory operation 2 (remove on memory): no entry contains 'a cat'"
    assert err.value.index == 1
    assert (tmp_path / "memories" / "MEMORY.md").read_bytes() == before and told == []
    with pytest.raises(BuiltinMemoryError, match="2 different entries contain 'a c'"):
        store.apply([MemoryOp("replace", "memory", "x", old_text="a c")])


def test_previous_content_is_chosen_under_the_lock(tmp_path: Path) -> None:
    store = BuiltinMemoryStore(tmp_path)
    store.apply([MemoryOp("add", "memory", "counter 0")])
    seen: list[str] = []
    store.notify = lambda action, target, content, meta: seen.append(meta["previous_content"])

    def bump(i: int) -> None:
        store.apply([MemoryOp("replace", "memory", f"counter {i}", old_text="counter")])

    threads = [threading.Thread(target=bump, args=(i,)) for i in range(1, 9)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    # every replace saw the entry as the previous replace left it: a chain, no value seen twice
    assert len(seen) == 8 and len(set(seen)) == 8 and "counter 0" in seen


class Mirror(MemoryProvider):
    def __init__(self) -> None:
        self.writes: list[Any] = []

    @property
    def name(self) -> str:
        return "mirror"

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        pass

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return []

    def on_memory_write(self, action, target, content, metadata=None):  # type: ignore[no-untyped-def,override]
        self.writes.append((action, target, content, metadata))


class OldMirror(Mirror):
    def on_memory_write(self, action, target, content):  # type: ignore[no-untyped-def,override]
        self.writes.append((action, target, content))


@pytest.mark.parametrize("cls", [Mirror, OldMirror])
def test_the_memory_tool_reaches_the_external_provider_with_metadata(tmp_path: Path, cls: type) -> None:
    mgr = MemoryManager(tmp_path)
    mirror = cls()
    mgr.add_provider(BuiltinMemoryProvider(notify=mgr.on_memory_write))
    mgr.add_provider(mirror)
    mgr.initialize_all("s")
    assert json.loads(mgr.handle_tool_call("memory", {"action": "add", "target": "user", "content": "Ana"}))["ok"]
    mgr.handle_tool_call("memory", {"action": "replace", "target": "user", "old_text": "An", "content": "Ana B."})
    bad = json.loads(mgr.handle_tool_call("memory", {"action": "remove", "target": "user", "old_text": "zzz"}))
    assert bad == {"error": "memory operation 1 (remove on user): no entry contains 'zzz'"}
    if cls is Mirror:
        assert mirror.writes == [("add", "user", "Ana", {}),
                                 ("replace", "user", "Ana B.", {"previous_content": "Ana"})]
    else:
        assert mirror.writes == [("add", "user", "Ana"), ("replace", "user", "Ana B.")]
    assert "## USER.md\n- Ana B." in mgr.system_prompt_block()
    mgr.shutdown_all()
