"""agent.loader: only the configured provider is imported, only once ready, loudly otherwise."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from agent import skills
from agent.discovery import find_memory_provider
from agent.errors import ProviderInvalid, ProviderLoadFailed, ProviderNotFound, ProviderNotReady
from agent.loader import load_into, load_memory_provider
from agent.memory_manager import MemoryManager
from agent.testing import BUNDLED, install_dist, provider_init, set_config, spy_init
from pm.env.generations import Generation
from pm.inputs.catalog import SHIPPED
from pm.testing.homes import add_plugin, add_profile

NEEDS_SHAREDLIB = "sharedlib>=2"


def _charts(home: Path, marker: Path) -> Path:
    """A user memory provider declaring ``sharedlib>=2`` whose import would write ``marker``."""
    return add_plugin(home / "plugins", "charts", style="pyproject", dependencies=[NEEDS_SHAREDLIB],
                      manifest={"kind": "memory"}, init_code=provider_init("charts", marker))


def test_nothing_configured_loads_nothing(new_home: Callable[..., Path]) -> None:
    assert load_memory_provider(new_home()) is None


def test_bundled_provider_without_requirements_loads_without_a_generation(
        new_home: Callable[..., Path]) -> None:
    home = new_home({"memory": {"provider": "sqlite_fts"}})
    first = load_memory_provider(home)
    second = load_memory_provider(home)
    assert first is not None and second is not None
    assert first.provider is not second.provider  # a fresh instance per load
    assert first.module is second.module is sys.modules["hermes_plugins.memory.sqlite_fts"]
    assert first.module.__file__ == str(BUNDLED / "sqlite_fts" / "__init__.py")
    assert (first.readiness.ready, first.readiness.reason) == (True, "declares no requirements")
    assert first.readiness.generation is None


def test_unknown_provider_names_what_exists(new_home: Callable[..., Path]) -> None:
    home = new_home({"memory": {"provider": "mem0"}})
    with pytest.raises(ProviderNotFound) as caught:
        load_memory_provider(home)
    assert str(caught.value) == (
        f"memory provider 'mem0' is not installed (named by memory.provider in {home}/config.yaml); "
        "known memory providers: 'jsonl_journal', 'markdown_notes', 'peer_cards', 'sidecar_echo', 'signed_notes', 'sqlite_fts'; "
        f"the catalog ({SHIPPED}) has no entry 'mem0', so `hermes update` cannot install it: install it from its source "
        "(`hermes plugins install SOURCE`) or choose an installed provider (`hermes memory setup NAME`)")


def test_missing_dependency_is_refused_loudly_without_import(
        clean_env: Path, new_home: Callable[..., Path], monkeypatch: pytest.MonkeyPatch) -> None:
    home = new_home({"memory": {"provider": "charts"}})
    monkeypatch.setenv("HERMES_HOME", str(home))
    root = _charts(home, clean_env / "imported")
    with pytest.raises(ProviderNotReady) as caught:
        load_memory_provider(home)
    error = caught.value
    assert str(error) == (
        "memory provider 'charts' is not ready: requires sharedlib>=2; no generation is selected "
        f"(declared in {root}/pyproject.toml); run `hermes pm sync`")
    assert (error.plugin, error.unmet, error.command) == (
        "charts", ("requires sharedlib>=2; no generation is selected",), "hermes pm sync")
    assert error.exit_code == 4
    assert not (clean_env / "imported").exists()
    assert "hermes_plugins.memory.charts" not in sys.modules


def test_generation_with_a_too_old_version_is_not_ready(
        clean_env: Path, new_home: Callable[..., Path], sync: Callable[..., Generation]) -> None:
    home = new_home({"plugins": {"enabled": ["notes-sync"]}})
    add_plugin(home / "plugins", "notes-sync", style="manifest", dependencies=["sharedlib>=1"])
    generation = sync(home, {"sharedlib": "1.5"})
    set_config(home, memory={"provider": "charts"})
    root = _charts(home, clean_env / "imported")
    with pytest.raises(ProviderNotReady) as caught:
        load_memory_provider(home, generation=generation)
    assert str(caught.value) == (
        f"memory provider 'charts' is not ready: not in generation {generation.id} (enabled since "
        "it was built); requires sharedlib>=2; installed: sharedlib 1.5 "
        f"(declared in {root}/pyproject.toml); run `hermes pm sync --home {home}`")
    assert not (clean_env / "imported").exists()


def test_installed_by_chance_is_not_ready_until_a_sync_includes_it(
        clean_env: Path, new_home: Callable[..., Path], sync: Callable[..., Generation]) -> None:
    """sharedlib 2.1 is there for another plugin; charts was not part of that resolution."""
    home = new_home({"plugins": {"enabled": ["notes-sync"]}})
    add_plugin(home / "plugins", "notes-sync", style="manifest", dependencies=["sharedlib>=2"])
    generation = sync(home, {"sharedlib": "2.1"})
    set_config(home, memory={"provider": "charts"})
    _charts(home, clean_env / "imported")
    with pytest.raises(ProviderNotReady) as caught:
        load_memory_provider(home, generation=generation)
    assert caught.value.unmet == (
        f"not in generation {generation.id} (enabled since it was built)",)
    assert load_memory_provider(home, generation=sync(home, {})) is not None
    assert (clean_env / "imported").exists()


def test_ready_in_the_generation_then_imported(
        clean_env: Path, new_home: Callable[..., Path], sync: Callable[..., Generation]) -> None:
    home = new_home({"memory": {"provider": "charts"}})
    _charts(home, clean_env / "imported")
    generation = sync(home, {"sharedlib": "2.1"})
    loaded = load_memory_provider(home, generation=generation)
    assert loaded is not None and loaded.provider.name == "charts"
    assert loaded.readiness.reason == f"ready in generation {generation.id}"
    assert (clean_env / "imported").read_text() == "imported"


def test_a_disabled_provider_is_refused(new_home: Callable[..., Path]) -> None:
    home = new_home({"memory": {"provider": "sqlite_fts"}, "plugins": {"disabled": ["sqlite_fts"]}})
    with pytest.raises(ProviderInvalid) as caught:
        load_memory_provider(home)
    assert str(caught.value) == (
        f"memory provider 'sqlite_fts' is listed in plugins.disabled of {home}/config.yaml")


@pytest.mark.parametrize(("extra", "message"), [
    ("raise RuntimeError('boom')\n",
     "failed to import from {init}: RuntimeError: boom"),
    ("def register(ctx):\n    pass\n",
     "registered 0 memory providers; expected exactly one"),
    ("def register(ctx):\n    ctx.register_memory_provider(Provider('other'))\n",
     "registered a provider named 'other'; it must be named 'broken'"),
    ("def register(ctx):\n    ctx.register_memory_provider(object())\n",
     "failed in register(ctx): TypeError: register_memory_provider expects a MemoryProvider, "
     "got object"),
])
def test_plugin_contract_violations_fail_loudly(new_home: Callable[..., Path], extra: str,
                                                message: str) -> None:
    home = new_home({"memory": {"provider": "broken"}})
    root = add_plugin(home / "plugins", "broken", style="manifest", manifest={"kind": "memory"},
                      init_code=provider_init("broken") + extra)
    with pytest.raises(ProviderLoadFailed) as caught:
        load_memory_provider(home)
    assert str(caught.value) == "memory provider 'broken' " + message.format(init=root / "__init__.py")


SKILLFUL = """
def register(ctx):
    ctx.register_memory_provider(Provider('skillful'))
    ctx.register_skill('digest', 'skills/digest.md', 'Summarise memory')
"""


def test_skills_are_qualified_and_only_offered_while_active(new_home: Callable[..., Path]) -> None:
    home = new_home({"memory": {"provider": "skillful"}})
    root = add_plugin(home / "plugins", "skillful", style="manifest", manifest={"kind": "memory"},
                      init_code=provider_init("nobody").split("\n\ndef register")[0] + SKILLFUL)
    (root / "skills").mkdir()
    (root / "skills" / "digest.md").write_text("# Digest\n")
    loaded = load_memory_provider(home)
    assert loaded is not None
    skill = loaded.skills["skillful:digest"]
    assert (skill.path, skill.description) == (root / "skills" / "digest.md", "Summarise memory")
    assert sorted(skills.skills_of(home)) == ["skillful:digest"]
    set_config(home, memory={"provider": "sqlite_fts"})
    load_memory_provider(home)
    assert skills.skills_of(home) == {}
    setup_load = load_memory_provider(home, name="skillful")  # as `hermes memory setup` does
    assert setup_load is not None and list(setup_load.skills) == ["skillful:digest"]
    assert skills.skills_of(home) == {}  # not the active provider: its skills are not offered


@pytest.mark.parametrize(("call", "message"), [
    ("ctx.register_skill('x', '../../etc/passwd')", "skill 'escaper:x': ../../etc/passwd is outside the plugin root {root}"),
    ("ctx.register_skill('a:b', 'x.md')", "invalid skill name 'a:b': use letters, digits, '_', '-', '.'"),
    ("ctx.register_skill('x', 'missing.md')", "skill 'escaper:x': {root}/missing.md does not exist"),
])
def test_bad_skills_fail_the_load(new_home: Callable[..., Path], call: str, message: str) -> None:
    home = new_home({"memory": {"provider": "escaper"}})
    root = add_plugin(home / "plugins", "escaper", style="manifest", manifest={"kind": "memory"},
                      init_code=provider_init("escaper") + f"    {call}\n")
    with pytest.raises(ProviderLoadFailed) as caught:
        load_memory_provider(home)
    assert str(caught.value) == ("memory provider 'escaper' failed in register(ctx): ValueError: "
                                 + message.format(root=root.resolve()))


SINGLETON = """
_ONE = Provider('lonely')


def register(ctx):
    ctx.register_memory_provider(_ONE)
"""


def test_an_instance_shared_between_profiles_is_refused(
        clean_env: Path, new_home: Callable[..., Path], monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """Both profiles load the one bundled root; its register() hands out a module singleton."""
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(clean_env / "bundled"))
    add_plugin(clean_env / "bundled", "lonely", style="manifest",
               init_code=provider_init("nobody").split("\n\ndef register")[0] + SINGLETON)
    home = new_home({"memory": {"provider": "lonely"}})
    work = add_profile(home, "work", config={"memory": {"provider": "lonely"}})
    first, second = MemoryManager(home), MemoryManager(work)
    try:
        assert load_into(first) is not None
        with caplog.at_level(logging.WARNING), pytest.raises(ProviderLoadFailed) as caught:
            load_into(second)
        assert str(caught.value).startswith(
            f"memory provider 'lonely' was refused by the memory manager of {work}")
        assert [r.event for r in caplog.records if hasattr(r, "event")] == [  # type: ignore[attr-defined]
            "memory_provider_instance_shared"]
        assert second.providers == ()
    finally:
        first.shutdown_all()
        second.shutdown_all()


def test_fresh_instances_for_two_profiles(new_home: Callable[..., Path]) -> None:
    home = new_home({"memory": {"provider": "sqlite_fts"}})
    work = add_profile(home, "work", config={"memory": {"provider": "sqlite_fts"}})
    managers = [MemoryManager(home), MemoryManager(work)]
    try:
        loaded = [load_into(m) for m in managers]
        assert loaded[0] is not None and loaded[1] is not None
        assert loaded[0].provider is not loaded[1].provider
        for manager in managers:
            manager.initialize_all(session_id="test-1", platform="cli")
            manager.handle_tool_call("memory_store", {"content": f"lives in {manager.home.name}"})
        assert (home / "memory" / "sqlite_fts.db").is_file()
        assert (work / "memory" / "sqlite_fts.db").is_file()
    finally:
        for manager in managers:
            manager.shutdown_all()


def test_entry_point_provider_is_imported_the_ordinary_way(
        clean_env: Path, new_home: Callable[..., Path], monkeypatch: pytest.MonkeyPatch) -> None:
    site = clean_env / "site"
    install_dist(site, "acme-recall", "3.0", {
        "acme_recall/__init__.py": provider_init("recall", clean_env / "imported"),
        "acme_recall/cli.py": spy_init(clean_env / "cli-imported"),
    }, entry_points={"recall": "acme_recall:register"})
    monkeypatch.syspath_prepend(str(site))
    home = new_home({"memory": {"provider": "recall"}})
    info = find_memory_provider(home, "recall")
    assert info is not None and info.source == "entry_point"
    loaded = load_memory_provider(home)
    assert loaded is not None and loaded.provider.name == "recall"
    assert loaded.module is sys.modules["acme_recall"]
    assert loaded.readiness.reason == ("installed distribution acme-recall 3.0 "
                                       "(entry point; not managed by pm)")
    assert (clean_env / "imported").exists() and not (clean_env / "cli-imported").exists()
