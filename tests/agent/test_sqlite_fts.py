"""plugins/memory/sqlite_fts end to end through MemoryManager, loaded from its folder by path."""

from __future__ import annotations

import importlib.util
import json
import sqlite3
import sys
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from agent.memory_manager import MemoryManager
from agent.memory_provider import MemoryProvider
from pm.base import yamlfile as _yaml
from pm.base.files import read_text

PLUGIN_ROOT = Path(__file__).resolve().parents[2] / "plugins" / "memory" / "sqlite_fts"
MODULE_NAME = "_hermes_test_plugin_sqlite_fts"


def load_plugin() -> ModuleType:
    """Import the plugin folder as a package, the way a host loader does."""
    if MODULE_NAME in sys.modules:
        return sys.modules[MODULE_NAME]
    spec = importlib.util.spec_from_file_location(
        MODULE_NAME, PLUGIN_ROOT / "__init__.py", submodule_search_locations=[str(PLUGIN_ROOT)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[MODULE_NAME] = module
    spec.loader.exec_module(module)
    return module


class Ctx:
    """The part of the plugin context a memory plugin's ``register`` uses."""

    def __init__(self) -> None:
        self.providers: list[MemoryProvider] = []

    def register_memory_provider(self, provider: MemoryProvider) -> None:
        self.providers.append(provider)


def fresh_provider() -> MemoryProvider:
    ctx = Ctx()
    load_plugin().register(ctx)
    [provider] = ctx.providers
    return provider


def stored(home: Path) -> list[str]:
    with sqlite3.connect(home / "memory" / "sqlite_fts.db") as conn:
        return [row[0] for row in conn.execute("SELECT content FROM memories ORDER BY rowid")]


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("HERMES_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "user"))


def test_manifest_declares_an_empty_dependency_list() -> None:
    manifest = _yaml.load(read_text(PLUGIN_ROOT / "plugin.yaml").text)
    assert manifest["name"] == "sqlite_fts"
    assert manifest["kind"] == "memory"
    assert manifest["manifest_version"] == 2
    assert manifest["pip_dependencies"] == []
    assert manifest["description"]
    assert not (PLUGIN_ROOT / "pyproject.toml").exists()


def test_register_hands_over_a_fresh_instance_per_load() -> None:
    first, second = fresh_provider(), fresh_provider()
    assert first is not second
    assert first.name == "sqlite_fts"
    assert first.is_available() is True


def test_seed_usage_end_to_end(tmp_path: Path) -> None:
    home = tmp_path / "home"
    p = fresh_provider()
    mgr = MemoryManager(hermes_home=home)
    assert mgr.add_provider(p)
    mgr.initialize_all(session_id="test-1", platform="cli")
    assert [s["name"] for s in mgr.get_tool_schemas()] == ["memory_search", "memory_store"]
    assert "memory_search" in mgr.system_prompt_block()

    fact = {"content": "The deploy key lives in Vault."}
    assert json.loads(mgr.handle_tool_call("memory_store", fact)) == {"stored": True, "id": 1}
    assert json.loads(mgr.handle_tool_call("memory_store", fact)) == {"stored": False, "id": 1}

    mgr.sync_all("What is the capital of Australia?", "Canberra.", session_id="test-1")
    mgr.on_session_end([])
    found = json.loads(mgr.handle_tool_call("memory_search", {"query": "australia capital"}))
    assert found["count"] == 1
    assert found["results"][0]["content"] == (
        "User: What is the capital of Australia?\nAssistant: Canberra."
    )
    assert found["results"][0]["kind"] == "turn"
    assert found["results"][0]["session_id"] == "test-1"

    recall = mgr.prefetch("where is the deploy key?")
    assert recall == "## Relevant memories (sqlite_fts)\n- The deploy key lives in Vault."
    assert mgr.prefetch("the of and") == ""  # stopwords only: nothing relevant

    mgr.shutdown_all()
    assert stored(home) == [
        "The deploy key lives in Vault.",
        "User: What is the capital of Australia?\nAssistant: Canberra.",
    ]


def test_memories_persist_across_sessions(tmp_path: Path) -> None:
    for session, action in (("s1", "store"), ("s2", "search")):
        mgr = MemoryManager(hermes_home=tmp_path)
        mgr.add_provider(fresh_provider())
        mgr.initialize_all(session_id=session, platform="cli")
        if action == "store":
            mgr.handle_tool_call("memory_store", {"content": "favourite editor is helix"})
        else:
            found = json.loads(mgr.handle_tool_call("memory_search", {"query": "editor"}))
            assert [r["session_id"] for r in found["results"]] == ["s1"]
        mgr.shutdown_all()


def test_tool_arguments_are_validated_and_fts_syntax_is_not_interpreted(tmp_path: Path) -> None:
    mgr = MemoryManager(hermes_home=tmp_path)
    mgr.add_provider(fresh_provider())
    mgr.initialize_all(session_id="s", platform="cli")
    mgr.handle_tool_call("memory_store", {"content": 'quote " and NEAR(x y) AND (z'})
    for query in ['"', "AND", "NEAR(x y)", "z*", "a:b", "(z"]:
        result = json.loads(mgr.handle_tool_call("memory_search", {"query": query}))
        assert "error" not in result, (query, result)
    assert json.loads(mgr.handle_tool_call("memory_search", {"query": "  "})) == {
        "error": "memory_search: 'query' must be a non-empty string"
    }
    assert json.loads(mgr.handle_tool_call("memory_search", {"query": "z", "limit": 0})) == {
        "error": "memory_search: 'limit': sqlite_fts setting 'max_results': 0 is outside 1..50"
    }
    assert json.loads(mgr.handle_tool_call("memory_store", {})) == {
        "error": "memory_store: 'content' must be a non-empty string"
    }
    mgr.shutdown_all()


def test_on_memory_write_mirrors_builtin_writes(tmp_path: Path) -> None:
    mgr = MemoryManager(hermes_home=tmp_path)
    mgr.add_provider(fresh_provider())
    mgr.initialize_all(session_id="s", platform="cli")
    mgr.on_memory_write("add", "user", "prefers metric units")
    mgr.on_memory_write("remove", "user", "something old")
    found = json.loads(mgr.handle_tool_call("memory_search", {"query": "metric units"}))
    assert [(r["content"], r["kind"]) for r in found["results"]] == [
        ("prefers metric units", "builtin:user")
    ]
    assert stored(tmp_path) == ["prefers metric units"]
    mgr.shutdown_all()


def test_config_schema_and_save_config(tmp_path: Path) -> None:
    p = fresh_provider()
    [field] = p.get_config_schema()
    assert field["key"] == "max_results" and field["secret"] is False
    p.save_config({"max_results": "2"}, tmp_path)
    assert json.loads((tmp_path / "memory" / "sqlite_fts.json").read_text()) == {
        "max_results": 2
    }
    with pytest.raises(ValueError) as info:
        p.save_config({"max_result": 3}, tmp_path)
    assert str(info.value) == "sqlite_fts has no setting 'max_result' (did you mean 'max_results'?)"
    with pytest.raises(ValueError) as info:
        p.save_config({"max_results": 500}, tmp_path)
    assert str(info.value) == "sqlite_fts setting 'max_results': 500 is outside 1..50"

    mgr = MemoryManager(hermes_home=tmp_path)
    mgr.add_provider(p)
    mgr.initialize_all(session_id="s", platform="cli")
    for i in range(4):
        mgr.handle_tool_call("memory_store", {"content": f"note {i} about tea"})
    found = json.loads(mgr.handle_tool_call("memory_search", {"query": "tea"}))
    assert found["count"] == 2  # the saved max_results applies
    mgr.shutdown_all()


def test_two_profiles_in_two_threads_never_write_into_each_others_home(tmp_path: Path) -> None:
    homes = {"alpha": tmp_path / "alpha", "beta": tmp_path / "beta"}
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def run(label: str) -> None:
        try:
            mgr = MemoryManager(hermes_home=homes[label])
            assert mgr.add_provider(fresh_provider())
            barrier.wait(5)
            mgr.initialize_all(session_id=label, platform="cli")
            for i in range(15):
                mgr.handle_tool_call("memory_store", {"content": f"{label} fact {i}"})
                mgr.sync_all(f"{label} question {i}", f"{label} answer {i}")
            mgr.on_session_end([])
            mgr.shutdown_all()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(label,)) for label in homes]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert errors == []
    for label, home in homes.items():
        contents = stored(home)
        assert len(contents) == 30
        assert all(c.startswith(label) or c.startswith(f"User: {label}") for c in contents)
    assert not (tmp_path / "user" / ".hermes").exists()  # nothing fell back to the default home


def test_tools_before_initialize_report_an_error_instead_of_crashing(tmp_path: Path) -> None:
    mgr = MemoryManager(hermes_home=tmp_path)
    mgr.add_provider(fresh_provider())
    result: dict[str, Any] = json.loads(mgr.handle_tool_call("memory_search", {"query": "x"}))
    assert result == {"error": "memory provider 'sqlite_fts' failed on tool 'memory_search'"}
    assert not (tmp_path / "memory").exists()
