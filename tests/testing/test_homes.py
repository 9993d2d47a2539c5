"""Homes and plugin roots from pm.testing.homes look as docs/design.md describes."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from pm.base import yamlfile as _yaml_reader
from pm.base.files import read_text
from pm.base.tomlfile import load as load_toml
from pm.testing import STYLES, add_plugin, add_profile, make_home, tree_digest

DEPS = ("requests>=2", "rich")


def _yaml(path: Path) -> Any:
    return _yaml_reader.load(read_text(path).text)


def _toml(path: Path) -> dict[str, Any]:
    return load_toml(path, read_text(path).text)


def _base(name: str) -> dict[str, Any]:
    return {"name": name, "version": "0.1.0", "description": f"{name} test plugin",
            "manifest_version": 1}


def test_make_home_and_profile(tmp_path: Path) -> None:
    config = {"plugins": {"enabled": ["b", "a"], "disabled": []}, "memory": {"provider": "a"}}
    home = make_home(tmp_path / "home", config=config)
    assert tree_digest(home).keys() == {"config.yaml", "plugins"}
    assert _yaml(home / "config.yaml") == config
    assert (home / "config.yaml").read_text().startswith("plugins:\n  enabled:\n  - b\n  - a\n")
    profile = add_profile(home, "work", config={"memory": {"provider": "x"}})
    assert profile == home / "profiles" / "work"
    assert _yaml(profile / "config.yaml") == {"memory": {"provider": "x"}}
    assert (profile / "plugins").is_dir()
    assert _yaml(make_home(tmp_path / "bare") / "config.yaml") == {}


def test_pyproject_style(tmp_path: Path) -> None:
    root = add_plugin(tmp_path, "alpha", style="pyproject", dependencies=DEPS,
                      python_dependencies=["ignored>=1"], requires_python=">=3.10")
    assert sorted(tree_digest(root)) == ["__init__.py", "plugin.yaml", "pyproject.toml"]
    assert _toml(root / "pyproject.toml") == {"project": {
        "name": "alpha", "version": "0.1.0", "dependencies": list(DEPS),
        "requires-python": ">=3.10"}}
    assert _yaml(root / "plugin.yaml") == {**_base("alpha"), "python_dependencies": ["ignored>=1"]}


@pytest.mark.parametrize(("style", "filename"), [
    ("manifest", "plugin.yaml"), ("yml", "plugin.yml"), ("json", "plugin.json"),
])
def test_manifest_styles(tmp_path: Path, style: str, filename: str) -> None:
    root = add_plugin(tmp_path, "beta", style=style, dependencies=DEPS,
                      python_dependencies=["numpy"])
    assert sorted(tree_digest(root)) == ["__init__.py", filename]
    load = json.loads if style == "json" else _yaml_reader.load
    assert load(read_text(root / filename).text) == {
        **_base("beta"), "pip_dependencies": list(DEPS), "python_dependencies": ["numpy"]}


def test_styles_that_declare_nothing_at_the_root(tmp_path: Path) -> None:
    tooling = add_plugin(tmp_path, "tool", style="tooling")
    assert _toml(tooling / "pyproject.toml") == {"tool": {"ruff": {"line-length": 100}}}
    assert _yaml(tooling / "plugin.yaml") == _base("tool")

    sidecar = add_plugin(tmp_path, "side", style="sidecar", dependencies=DEPS,
                         requires_python=">=3.12")
    assert sorted(tree_digest(sidecar)) == [
        "__init__.py", "plugin.yaml", "runtime", "runtime/.venv", "runtime/.venv/pyvenv.cfg",
        "runtime/pyproject.toml"]
    assert _yaml(sidecar / "plugin.yaml") == _base("side")
    assert _toml(sidecar / "runtime" / "pyproject.toml")["project"] == {
        "name": "side-runtime", "version": "0.1.0", "dependencies": list(DEPS),
        "requires-python": ">=3.12"}
    assert "home = " in (sidecar / "runtime" / ".venv" / "pyvenv.cfg").read_text()

    external = add_plugin(tmp_path, "ext", style="external", dependencies=["torch"])
    assert _yaml(external / "plugin.yaml") == {
        **_base("ext"), "pip_dependencies": ["torch"], "python_runtime": "external"}


def test_empty_project_style(tmp_path: Path) -> None:
    root = add_plugin(tmp_path, "empty", style="empty-project")
    assert _toml(root / "pyproject.toml") == {"project": {
        "name": "empty", "version": "0.1.0", "dependencies": []}}


def test_memory_category_manifest_overrides_and_init_code(tmp_path: Path) -> None:
    root = add_plugin(tmp_path, "mem", style="manifest", category="memory",
                      manifest={"manifest_version": 2, "requires_hermes": ">=0.1"},
                      init_code="raise RuntimeError('imported')\n")
    assert root == tmp_path / "memory" / "mem"
    assert _yaml(root / "plugin.yaml") == {**_base("mem"), "manifest_version": 2, "kind": "memory",
                                           "requires_hermes": ">=0.1"}
    assert (root / "__init__.py").read_text() == "raise RuntimeError('imported')\n"


@pytest.mark.parametrize("style", STYLES)
def test_every_style_has_a_register_stub(tmp_path: Path, style: str) -> None:
    root = add_plugin(tmp_path, "p", style=style)
    namespace: dict[str, Any] = {}
    exec(compile((root / "__init__.py").read_text(), "__init__.py", "exec"), namespace)
    assert namespace["register"](object()) is None


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"style": "toml"}, "unknown plugin style 'toml'"),
    ({"style": "tooling", "dependencies": ["x"]}, "style 'tooling' declares no dependencies"),
    ({"style": "sidecar", "python_dependencies": ["x"]}, "style 'sidecar' declares nothing"),
    ({"style": "manifest", "requires_python": ">=3"}, "style 'manifest' has no place"),
])
def test_add_plugin_rejects_what_a_style_cannot_express(tmp_path: Path, kwargs: dict[str, Any],
                                                        message: str) -> None:
    with pytest.raises(ValueError, match=message):
        add_plugin(tmp_path, "bad", **kwargs)


def test_tree_digest_detects_any_change(tmp_path: Path) -> None:
    home = make_home(tmp_path / "home")
    root = add_plugin(home / "plugins", "alpha", style="pyproject", dependencies=DEPS)
    (root / "link").symlink_to("pyproject.toml")
    (root / "dirlink").symlink_to(home)
    before = tree_digest(home)
    assert before["plugins/alpha/link"] == "symlink:pyproject.toml"
    assert before["plugins/alpha/dirlink"] == f"symlink:{home}"
    assert before["plugins/alpha"] == f"dir mode={root.stat().st_mode & 0o7777:o}"
    data = (root / "__init__.py").read_bytes()
    st = (root / "__init__.py").stat()
    assert before["plugins/alpha/__init__.py"] == (
        f"{hashlib.sha256(data).hexdigest()} mode={st.st_mode & 0o7777:o} mtime={st.st_mtime_ns}")
    assert not any(key.startswith("plugins/alpha/dirlink/") for key in before)
    assert tree_digest(home) == before

    (root / "__init__.py").write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    changed = tree_digest(home)
    assert {k for k in before if before[k] != changed[k]} == {"plugins/alpha/__init__.py"}
    (root / "__init__.py").write_bytes(data)
    os.utime(root / "__init__.py", ns=(st.st_atime_ns, st.st_mtime_ns))
    assert tree_digest(home) == before
    os.utime(root / "__init__.py")  # touched: same bytes, another time
    assert {k for k, v in tree_digest(home).items() if before[k] != v} == {"plugins/alpha/__init__.py"}
    os.utime(root / "__init__.py", ns=(st.st_atime_ns, st.st_mtime_ns))
    (root / "pyproject.toml").chmod(0o600)  # same bytes, another mode
    assert {k for k, v in tree_digest(home).items() if before[k] != v} == {"plugins/alpha/pyproject.toml"}
    (root / "new").mkdir()
    assert set(tree_digest(home)) - set(before) == {"plugins/alpha/new"}
