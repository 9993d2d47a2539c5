"""plugins/memory/jsonl_journal and markdown_notes, end to end: pm builds a generation from their
declarations, the loader admits them on pm's readiness, and MemoryManager drives them."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path

import pytest
import yaml

from agent.errors import ProviderNotReady
from agent.loader import load_into
from agent.memory_cli import main
from agent.memory_manager import MemoryManager
from agent.memory_provider import ProviderInitError
from agent.testing import set_config
from pm.env.generations import Generation

TURNS = [
    ("I adopted a cat named Miso", "Lovely! Miso is a great name for a cat."),
    ("Remind me to buy oat milk", "Noted: oat milk."),
    ("Miso knocked my plant over", "Cats do that; maybe move the plant."),
]


@pytest.fixture
def manager_for() -> Iterator[Callable[[Path], MemoryManager]]:
    made: list[MemoryManager] = []

    def make(home: Path) -> MemoryManager:
        made.append(MemoryManager(home))
        return made[-1]

    yield make
    for manager in made:
        manager.shutdown_all()


def test_jsonl_journal_end_to_end(new_home: Callable[..., Path], sync: Callable[..., Generation],
                                  manager_for: Callable[[Path], MemoryManager],
                                  capsys: pytest.CaptureFixture[str]) -> None:
    home = new_home({"memory": {"provider": "jsonl_journal"}})
    generation = sync(home, {"PyYAML": "6.0.1"})
    assert main(["setup", "jsonl_journal", "--home", str(home), "--set", "recall_limit=2"]) == 0
    capsys.readouterr()
    settings = home / "memory" / "jsonl_journal" / "settings.yaml"
    assert yaml.safe_load(settings.read_text()) == {"max_entry_chars": 2000, "recall_limit": 2}
    manager = manager_for(home)
    loaded = load_into(manager, generation=generation)
    assert loaded is not None and loaded.readiness.reason == f"ready in generation {generation.id}"
    manager.initialize_all(session_id="test-1", platform="cli")
    assert [t["name"] for t in manager.get_tool_schemas()] == ["journal_search", "journal_recent"]
    for user, assistant in TURNS:
        manager.sync_all(user, assistant)
    assert manager.wait_idle(10)
    lines = (home / "memory" / "jsonl_journal" / "journal.jsonl").read_text().splitlines()
    assert [(e["user"], e["session_id"]) for e in map(json.loads, lines)] == [
        (u, "test-1") for u, _ in TURNS]
    found = json.loads(manager.handle_tool_call("journal_search", {"query": "Miso plant"}))
    assert [e["user"] for e in found["entries"]] == ["Miso knocked my plant over"]
    recent = json.loads(manager.handle_tool_call("journal_recent", {"count": 1}))
    assert [e["user"] for e in recent["entries"]] == ["Miso knocked my plant over"]
    recall = manager.prefetch("what did Miso the cat do?")
    assert recall.splitlines()[0] == "## From the journal (jsonl_journal)"
    assert len(recall.splitlines()) == 3  # recall_limit 2, set through `hermes memory setup`
    manager.on_session_end([])
    manager.shutdown_all()


def test_jsonl_journal_skips_a_damaged_line(new_home: Callable[..., Path], sync: Callable[..., Generation],
                                            manager_for: Callable[[Path], MemoryManager]) -> None:
    home = new_home({"memory": {"provider": "jsonl_journal"}})
    generation = sync(home, {"PyYAML": "6.0.1"})
    journal = home / "memory" / "jsonl_journal" / "journal.jsonl"
    journal.parent.mkdir(parents=True)
    journal.write_text('{"user": "kept words", "assistant": "ok"}\n{"user": "tru\n')
    manager = manager_for(home)
    load_into(manager, generation=generation)
    manager.initialize_all(session_id="test-1", platform="cli")
    found = json.loads(manager.handle_tool_call("journal_search", {"query": "kept"}))
    assert found == {"count": 1, "entries": [{"user": "kept words", "assistant": "ok"}]}


def test_jsonl_journal_waits_for_pyyaml(new_home: Callable[..., Path], sync: Callable[..., Generation],
                                        manager_for: Callable[[Path], MemoryManager]) -> None:
    home = new_home()
    generation = sync(home, {})
    set_config(home, memory={"provider": "jsonl_journal"})
    manager = manager_for(home)
    with pytest.raises(ProviderNotReady) as caught:
        load_into(manager, generation=generation)
    assert caught.value.unmet == (f"not in generation {generation.id} (enabled since it was built)",
                                  "requires PyYAML>=6; installed: not installed")
    assert manager.providers == ()


def test_markdown_notes_end_to_end(new_home: Callable[..., Path], sync: Callable[..., Generation],
                                   manager_for: Callable[[Path], MemoryManager]) -> None:
    home = new_home({"memory": {"provider": "markdown_notes"}})
    generation = sync(home, {"packaging": "24.0"})
    manager = manager_for(home)
    loaded = load_into(manager, generation=generation)
    assert loaded is not None and loaded.info.declaration_file == loaded.info.root / "plugin.yaml"
    manager.initialize_all(session_id="test-1", platform="cli")
    added = manager.handle_tool_call("note_add", {"text": "Miso  is the cat's\nname", "topic": "pets"})
    assert json.loads(added) == {"added": True}
    assert json.loads(manager.handle_tool_call("note_add", {"text": "Miso is the cat's name",
                                                            "topic": "pets"})) == {"added": False}
    manager.on_memory_write("add", "user", "Prefers oat milk in tea")
    today = date.today().isoformat()
    assert (home / "memory" / "notes.md").read_text() == (
        "<!-- markdown_notes format 1.0 -->\n# Notes\n\n"
        f"## pets\n- Miso is the cat's name ({today})\n\n"
        f"## user\n- Prefers oat milk in tea ({today})\n")
    found = json.loads(manager.handle_tool_call("note_search", {"query": "what milk for tea?"}))
    assert found == {"notes": [{"topic": "user", "text": "Prefers oat milk in tea", "date": today}]}
    assert manager.prefetch("tell me about Miso") == "## Notes (markdown_notes)\n- [pets] Miso is the cat's name"


def test_markdown_notes_keeps_a_newer_minor_format_and_refuses_a_new_major(
        new_home: Callable[..., Path], sync: Callable[..., Generation],
        manager_for: Callable[[Path], MemoryManager]) -> None:
    home = new_home({"memory": {"provider": "markdown_notes"}})
    generation = sync(home, {"packaging": "24.0"})
    notes = home / "memory" / "notes.md"
    notes.parent.mkdir(parents=True)
    notes.write_text("<!-- markdown_notes format 1.3 -->\n# Notes\n\n## misc\n- hand written\n")
    manager = manager_for(home)
    load_into(manager, generation=generation)
    manager.initialize_all(session_id="test-1", platform="cli")
    manager.handle_tool_call("note_add", {"text": "second", "topic": "misc"})
    assert notes.read_text().splitlines()[:5] == [
        "<!-- markdown_notes format 1.3 -->", "# Notes", "", "## misc", "- hand written"]
    notes.write_text("<!-- markdown_notes format 2.0 -->\n# Notes\n")
    fresh = manager_for(home)
    load_into(fresh, generation=generation)
    with pytest.raises(ProviderInitError) as caught:
        fresh.initialize_all(session_id="test-2", platform="cli")
    assert str(caught.value) == (
        "memory provider 'markdown_notes' failed to initialize: NotesFormatError: "
        f"{notes}: format 2.0 cannot be read by this provider (it reads <2,>=1.0); it was written "
        "by a newer markdown_notes (run `hermes memory status` for details)")


def test_sqlite_fts_setup_again_keeps_its_saved_setting(new_home: Callable[..., Path],
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 32, finding 6, on a bundled provider: its load_config() is what setup offers again."""
    home = new_home({"memory": {"provider": "sqlite_fts"}})
    assert main(["setup", "sqlite_fts", "--home", str(home), "--set", "max_results=7"]) == 0
    assert main(["setup", "sqlite_fts", "--home", str(home)]) == 0
    assert json.loads((home / "memory" / "sqlite_fts.json").read_text()) == {"max_results": 7}
    assert capsys.readouterr().out.splitlines()[-1] == "  settings saved: max_results"
