"""pm.inputs.plugin: a root's files read into a Plugin (never raising), and precedence between roots."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pm.inputs.discover import PluginRoot
from pm.inputs.plugin import apply_precedence, inspect


def _root(folder: Path, name: str, source: str = "user") -> PluginRoot:
    return PluginRoot(name, folder / name, source, folder)


def test_a_manifest_declaration_is_read(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "plugin.yaml").write_text("name: a\npip_dependencies: ['x>=1']\n")
    plugin = inspect(_root(tmp_path, "a"))
    assert plugin.problems == () and plugin.declaration is not None
    assert [str(r) for r in plugin.declaration.requirements] == ["x>=1"]


def test_a_bad_manifest_makes_the_plugin_invalid_instead_of_raising(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "plugin.yaml").write_text("name: [unclosed\n")
    plugin = inspect(_root(tmp_path, "a"))
    assert plugin.problems and plugin.declaration is None


def test_precedence_keeps_every_root_and_marks_the_shadowed(tmp_path: Path) -> None:
    """A general plugin: the later source (project over user) wins; the other is kept, marked."""
    for folder in ("user", "project"):
        (tmp_path / folder / "a").mkdir(parents=True)
        (tmp_path / folder / "a" / "plugin.yaml").write_text("name: a\n")
    user, project = (inspect(_root(tmp_path / f, "a", f)) for f in ("user", "project"))
    assert apply_precedence([user, project]) == [
        replace(user, shadowed_by=project.root.path), project]
