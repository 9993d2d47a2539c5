"""Builders for homes, profiles and plugin roots of every declaration style in docs/design.md.

Each builder writes plain files (YAML, TOML, JSON, Python) exactly as a user or a plugin author
would, and returns the path it created. ``tree_digest`` fingerprints a tree so a test can prove
that an operation left it untouched.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

#: Every ``style`` accepted by :func:`add_plugin`.
STYLES = (
    "pyproject", "manifest", "yml", "json", "tooling", "sidecar", "external", "empty-project",
)
#: Styles whose root declares something (they make a member when enabled).
DECLARING_STYLES = ("pyproject", "manifest", "yml", "json", "empty-project")

_DEFAULT_INIT = '''"""Test plugin: registers nothing, imports nothing."""


def register(ctx):
    """Entry point the host calls after activation."""
    return None
'''
_VENV_MARKER = "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.0\n"


def _write_yaml(path: Path, data: Mapping[str, Any]) -> None:
    path.write_text(yaml.safe_dump(dict(data), sort_keys=False), encoding="utf-8")


def make_home(path: Path, *, config: Mapping[str, Any] | None = None) -> Path:
    """Create a home at ``path``: ``config.yaml`` (``config``, default empty) and ``plugins/``."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "plugins").mkdir(exist_ok=True)
    _write_yaml(path / "config.yaml", config or {})
    return path


def isolated_home(tmp_path: Path, monkeypatch: Any, *, core: Iterable[str], lock: str = "",
                  config: Mapping[str, Any] | None = None, index_url: str | None = None) -> Path:
    """A home at ``tmp_path/home`` that nothing of this machine reaches: pm's index, find-links and
    home variables unset, a cache of its own, no bundled plugins, no colour. Core is
    ``tmp_path/core.toml`` (requirements ``core``) locked by ``tmp_path/lock.txt`` (``lock``), both
    named in the config's ``pm`` section with ``index_url`` when given; ``config`` adds the rest (its
    own ``pm`` settings kept beside those)."""
    for variable in ("HERMES_PM_INDEX_URL", "HERMES_PM_FIND_LINKS", "HERMES_HOME", "HERMES_PM_CONSTRAINTS",
                     "HERMES_PM_OVERRIDES", "HERMES_PM_JSON_API_URL"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "no-bundled"))
    (tmp_path / "core.toml").write_text(f"[project]\nname = 'host'\ndependencies = {json.dumps(list(core))}\n")
    (tmp_path / "lock.txt").write_text(lock)
    pm = {"core": str(tmp_path / "core.toml"), "core_lock": str(tmp_path / "lock.txt")}
    pm |= {"index_url": index_url} if index_url is not None else {}
    return make_home(tmp_path / "home", config={**(config or {}), "pm": {**(config or {}).get("pm", {}), **pm}})


def add_profile(home: Path, name: str, *, config: Mapping[str, Any] | None = None) -> Path:
    """Create the profile ``home/profiles/<name>/`` (itself a home) and return its path."""
    return make_home(home / "profiles" / name, config=config)


def _toml_value(value: object) -> str:
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a valid TOML basic string
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Iterable):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    raise TypeError(f"no TOML form for {value!r}")


def _toml_table(header: str, table: Mapping[str, object]) -> str:
    lines = [f"[{header}]"] + [f"{key} = {_toml_value(value)}" for key, value in table.items()]
    return "\n".join(lines) + "\n"


def _project_table(
    name: str, dependencies: Iterable[str], requires_python: str | None
) -> dict[str, object]:
    table: dict[str, object] = {"name": name, "version": "0.1.0"}
    table["dependencies"] = list(dependencies)
    if requires_python is not None:
        table["requires-python"] = requires_python
    return table


def _check(
    style: str, deps: tuple[str, ...], python_deps: tuple[str, ...], requires_python: str | None
) -> None:
    if style not in STYLES:
        raise ValueError(f"unknown plugin style {style!r}; expected one of {STYLES}")
    if style in ("tooling", "empty-project") and deps:
        raise ValueError(f"style {style!r} declares no dependencies; got {deps!r}")
    if style in ("tooling", "sidecar") and python_deps:
        raise ValueError(f"style {style!r} declares nothing at its root; got {python_deps!r}")
    if requires_python is not None and style not in ("pyproject", "sidecar", "empty-project"):
        raise ValueError(f"style {style!r} has no place for requires_python")


def add_plugin(
    plugins_dir: Path,
    name: str,
    *,
    style: str,
    dependencies: Iterable[str] = (),
    python_dependencies: Iterable[str] = (),
    requires_python: str | None = None,
    manifest: Mapping[str, Any] | None = None,
    category: str | None = None,
    init_code: str | None = None,
) -> Path:
    """Create the plugin root ``plugins_dir/[category/]name`` in ``style`` and return it.

    Styles (``dependencies`` go where the style declares them):

    - ``pyproject``: ``pyproject.toml`` with ``[project]`` (``dependencies``, ``requires-python``)
      plus ``plugin.yaml``; ``python_dependencies`` (if any) land in the manifest, where the
      pyproject's ownership must make them ignored.
    - ``manifest`` / ``yml`` / ``json``: ``plugin.yaml`` / ``plugin.yml`` / ``plugin.json`` with
      ``pip_dependencies`` (and ``python_dependencies`` when given).
    - ``tooling``: ``pyproject.toml`` with only ``[tool.ruff]`` and a manifest without
      dependencies: declares nothing.
    - ``sidecar``: a manifest without dependencies; ``runtime/pyproject.toml`` carries
      ``[project]`` dependencies and ``runtime/.venv/pyvenv.cfg`` marks a private venv.
    - ``external``: manifest with ``python_runtime: external`` (and any ``pip_dependencies``).
    - ``empty-project``: ``pyproject.toml`` with ``[project]`` and ``dependencies = []``.

    Every root gets ``__init__.py`` (a ``register(ctx)`` stub, or ``init_code``). The manifest
    holds ``name``, ``version``, ``description``, ``manifest_version: 1``, ``kind: memory`` when
    ``category == "memory"``, then the style's keys, then ``manifest`` (which overrides).
    Raises ``ValueError`` for an unknown style or arguments the style cannot express.
    """
    deps, python_deps = tuple(dependencies), tuple(python_dependencies)
    _check(style, deps, python_deps, requires_python)
    root = plugins_dir / category / name if category else plugins_dir / name
    root.mkdir(parents=True, exist_ok=True)
    data: dict[str, Any] = {"name": name, "version": "0.1.0",
                            "description": f"{name} test plugin", "manifest_version": 1}
    if category == "memory":
        data["kind"] = "memory"
    if style in ("manifest", "yml", "json", "external") and deps:
        data["pip_dependencies"] = list(deps)
    if python_deps:
        data["python_dependencies"] = list(python_deps)
    if style == "external":
        data["python_runtime"] = "external"
    data.update(manifest or {})

    if style in ("pyproject", "empty-project"):
        table = _project_table(name, deps, requires_python)
        (root / "pyproject.toml").write_text(_toml_table("project", table), encoding="utf-8")
    elif style == "tooling":
        ruff = _toml_table("tool.ruff", {"line-length": 100})
        (root / "pyproject.toml").write_text(ruff, encoding="utf-8")
    elif style == "sidecar":
        runtime = root / "runtime"
        (runtime / ".venv").mkdir(parents=True, exist_ok=True)
        table = _project_table(f"{name}-runtime", deps, requires_python)
        (runtime / "pyproject.toml").write_text(_toml_table("project", table), encoding="utf-8")
        (runtime / ".venv" / "pyvenv.cfg").write_text(_VENV_MARKER, encoding="utf-8")

    if style == "json":
        (root / "plugin.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    else:
        _write_yaml(root / ("plugin.yml" if style == "yml" else "plugin.yaml"), data)
    (root / "__init__.py").write_text(_DEFAULT_INIT if init_code is None else init_code,
                                      encoding="utf-8")
    return root


def tree_digest(path: Path) -> dict[str, str]:
    """Fingerprint every entry under ``path`` (not ``path`` itself), keyed by POSIX relative path.

    Files map to the sha256 of their bytes with their mode and modification time, symlinks to
    ``"symlink:<target>"`` (never followed), directories to ``"dir"`` with their mode. Two equal
    digests mean no entry was added, removed, changed, touched or chmod-ed.
    """
    digest: dict[str, str] = {}
    for folder, dirnames, filenames in os.walk(path, followlinks=False):
        base = Path(folder)
        for entry in dirnames + filenames:
            full = base / entry
            key = full.relative_to(path).as_posix()
            st = full.lstat()
            if full.is_symlink():
                digest[key] = f"symlink:{os.readlink(full)}"
            elif full.is_dir():
                digest[key] = f"dir mode={st.st_mode & 0o7777:o}"
            else:
                digest[key] = (f"{hashlib.sha256(full.read_bytes()).hexdigest()} mode={st.st_mode & 0o7777:o} "
                               f"mtime={st.st_mtime_ns}")
    return dict(sorted(digest.items()))
