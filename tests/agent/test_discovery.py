"""agent.discovery: four sources, their precedence and gating, and never an import."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from agent.discovery import discover_memory_providers, find_memory_provider
from agent.testing import install_dist, spy_init
from pm.testing.homes import add_plugin


def _memory(plugins_dir: Path, name: str, init: str) -> Path:
    return add_plugin(plugins_dir, name, style="manifest", manifest={"kind": "memory"}, init_code=init)


@pytest.fixture
def world(clean_env: Path, new_home: Callable[..., Path], monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A provider called ``alpha`` in all four sources, plus one provider only each source has.
    Every ``__init__.py`` and ``cli.py`` writes a marker into ``marks/`` if it is ever executed."""
    marks = clean_env / "marks"
    marks.mkdir()
    bundled = clean_env / "bundled"
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(bundled))
    home = new_home()
    project = clean_env / ".hermes" / "plugins"
    for source, folder, only in (("bundled", bundled, "bee"), ("user", home / "plugins", "cat"),
                                 ("project", project, "dog")):
        for name in ("alpha", only):
            root = _memory(folder, name, spy_init(marks / f"{source}-{name}"))
            (root / "cli.py").write_text(spy_init(marks / f"{source}-{name}-cli"))
    add_plugin(home / "plugins", "tool", style="manifest", init_code=spy_init(marks / "user-tool"))
    add_plugin(home / "plugins", "fox", style="manifest", category="memory",
               init_code=spy_init(marks / "user-fox"))
    site = clean_env / "site"
    install_dist(site, "acme-memory", "1.2", {
        "acme_memory/__init__.py": spy_init(marks / "ep-acme"),
        "acme_memory/cli.py": spy_init(marks / "ep-acme-cli"),
        "acme_memory/config_schema.py": spy_init(marks / "ep-acme-schema"),
        "acme_memory/engine.py": spy_init(marks / "ep-acme-engine"),
    }, entry_points={"alpha": "acme_memory", "elk": "acme_memory", "gnu": "acme_memory.engine:build"})
    monkeypatch.syspath_prepend(str(site))
    return {"home": home, "bundled": bundled, "project": project, "site": site, "marks": marks}


def _rows(home: Path) -> list[tuple[str, str, str | None]]:
    return [(i.name, i.source, i.shadowed_by.parent.name if i.shadowed_by else None)
            for i in discover_memory_providers(home)]


def test_precedence_is_bundled_user_project_entry_points(world: dict[str, Path],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HERMES_ENABLE_PROJECT_PLUGINS", "1")
    assert _rows(world["home"]) == [
        ("alpha", "bundled", None),
        ("bee", "bundled", None),
        ("alpha", "user", "bundled"),
        ("cat", "user", None),
        ("fox", "user", None),
        ("alpha", "project", "bundled"),
        ("dog", "project", None),
        ("alpha", "entry_point", "bundled"),
        ("elk", "entry_point", None),
        ("gnu", "entry_point", None),
    ]
    assert find_memory_provider(world["home"], "alpha").root == world["bundled"] / "alpha"  # type: ignore[union-attr]
    assert find_memory_provider(world["home"], "dog").source == "project"  # type: ignore[union-attr]
    assert find_memory_provider(world["home"], "memory/fox").name == "fox"  # type: ignore[union-attr]
    assert find_memory_provider(world["home"], "tool") is None  # not a memory provider
    assert sorted(p.name for p in world["marks"].iterdir()) == []


def test_project_plugins_need_the_switch(world: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    for value in (None, "0", "true"):
        if value is None:
            monkeypatch.delenv("HERMES_ENABLE_PROJECT_PLUGINS", raising=False)
        else:
            monkeypatch.setenv("HERMES_ENABLE_PROJECT_PLUGINS", value)
        assert [r for r in _rows(world["home"]) if r[1] == "project"] == []
        assert find_memory_provider(world["home"], "dog") is None


def test_a_user_provider_wins_over_an_entry_point(world: dict[str, Path],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(world["bundled"] / "nothing-here"))
    assert _rows(world["home"])[0] == ("alpha", "user", None)
    assert ("alpha", "entry_point", "plugins") in _rows(world["home"])


def test_entry_point_package_is_located_on_disk_without_importing(world: dict[str, Path]) -> None:
    info = find_memory_provider(world["home"], "elk")
    assert info is not None and info.entry_point is not None
    package = world["site"] / "acme_memory"
    assert (info.root, info.module_file) == (package, package / "__init__.py")
    assert (info.cli_file, info.config_schema_file) == (package / "cli.py", package / "config_schema.py")
    assert (info.entry_point.distribution, info.entry_point.version) == ("acme-memory", "1.2")
    assert (info.entry_point.module, info.entry_point.attr) == ("acme_memory", None)
    gnu = find_memory_provider(world["home"], "gnu")
    assert gnu is not None and gnu.entry_point is not None
    assert (gnu.module_file, gnu.entry_point.attr) == (package / "engine.py", "build")
    assert gnu.cli_file == package / "cli.py"  # the module's package folder is the root
    assert not any(name.startswith("acme_memory") for name in sys.modules)
    assert list(world["marks"].iterdir()) == []


def test_entry_point_without_record_is_found_on_sys_path(clean_env: Path, new_home: Callable[..., Path],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    site = clean_env / "site2"
    install_dist(site, "acme-norecord", "0.1", {"acme_norecord/__init__.py": "raise SystemExit"},
                 entry_points={"norecord": "acme_norecord"}, record=False)
    monkeypatch.syspath_prepend(str(site))
    info = find_memory_provider(new_home(), "norecord")
    assert info is not None and info.problems == ()
    assert info.module_file == site / "acme_norecord" / "__init__.py"


def test_entry_point_naming_a_missing_module_is_reported(clean_env: Path, new_home: Callable[..., Path],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    site = clean_env / "site3"
    install_dist(site, "acme-ghost", "0.1", {}, entry_points={"ghost": "acme_ghost.core:register"})
    monkeypatch.syspath_prepend(str(site))
    info = find_memory_provider(new_home(), "ghost")
    assert info is not None
    assert info.problems == ("entry point 'ghost' = 'acme_ghost.core:register' of distribution "
                             "'acme-ghost': module 'acme_ghost.core' not found on disk",)


def test_folder_without_init_is_a_problem(clean_env: Path, new_home: Callable[..., Path]) -> None:
    home = new_home()
    root = _memory(home / "plugins", "hollow", "")
    (root / "__init__.py").unlink()
    info = find_memory_provider(home, "hollow")
    assert info is not None
    assert info.problems == (f"{root}: has no __init__.py (a memory provider is a Python package)",)


def test_the_repository_bundles_four_providers(clean_env: Path, new_home: Callable[..., Path]) -> None:
    found = {i.name: i for i in discover_memory_providers(new_home()) if i.source == "bundled"}
    assert sorted(found) == ["jsonl_journal", "markdown_notes", "peer_cards", "sidecar_echo", "signed_notes", "sqlite_fts"]
    assert [str(r) for r in found["jsonl_journal"].requirements] == ["PyYAML>=6"]
    assert found["jsonl_journal"].declaration_file == found["jsonl_journal"].root / "pyproject.toml"
    assert [str(r) for r in found["markdown_notes"].requirements] == ["packaging>=22"]
    assert found["markdown_notes"].declaration_file == found["markdown_notes"].root / "plugin.yaml"
    assert found["sidecar_echo"].requirements == () and found["sidecar_echo"].declaration_file is None
    assert found["sqlite_fts"].requirements == ()

