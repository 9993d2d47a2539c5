"""Discovery: enumerate plugin roots from their sources, reading nothing but their files' text.

Sources, in docs/design.md's order: ``bundled`` (the host's ``plugins/memory/``, or
``$HERMES_BUNDLED_PLUGINS``), ``user`` (``<home>/plugins/<name>/`` and
``<home>/plugins/<category>/<name>/`` when the category folder has no manifest or pyproject of
its own), ``project`` (``./.hermes/plugins/<name>/``, only with ``HERMES_ENABLE_PROJECT_PLUGINS=1``).
Discovery never imports or executes plugin code. Entry-point plugins are installed packages and
are the host's business (``agent/``), not pm's.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pm.base.files import is_within
from pm.base.watch import UNWATCHED, Watch
from pm.inputs.manifest import MANIFEST_NAMES

SOURCES = ("bundled", "user", "project")
_REPO_BUNDLED = Path(__file__).resolve().parents[2] / "plugins" / "memory"
#: Where a built wheel carries the bundled providers (setup.py copies them there).
_PACKAGED_BUNDLED = Path(__file__).resolve().parents[1] / "data" / "plugins" / "memory"


def default_bundled(*, watch: Watch = UNWATCHED) -> Path | None:
    """The host's bundled providers: the checkout's ``plugins/memory/`` (a source tree or an
    editable install), else the copy an installed wheel carries, else none."""
    for folder in (_REPO_BUNDLED, _PACKAGED_BUNDLED):
        watch.folder(folder)  # absent too: one that appears takes the place of a later one
        if folder.is_dir():
            return folder
    return None


@dataclass(frozen=True)
class PluginRoot:
    """One directory that is a plugin, as found; nothing in it has been parsed yet."""

    key: str  # "name", or "category/name" for a user plugin inside a category folder
    path: Path
    source: str  # one of SOURCES
    plugins_dir: Path
    escapes: bool = False  # a symlink leads outside ``plugins_dir``: refused

    @property
    def leaf(self) -> str:
        return self.key.rsplit("/", 1)[-1]

    @property
    def category(self) -> str | None:
        return self.key.rsplit("/", 1)[0] if "/" in self.key else None


@dataclass(frozen=True)
class PluginSources:
    """Where plugins come from for one home."""

    home: Path
    bundled: Path | None
    project: Path | None = None

    @classmethod
    def for_home(cls, home: Path, env: Mapping[str, str] | None = None, cwd: Path | None = None, *,
                 watch: Watch = UNWATCHED) -> "PluginSources":
        env = os.environ if env is None else env
        bundled_env = env.get("HERMES_BUNDLED_PLUGINS")
        bundled = Path(bundled_env) if bundled_env else default_bundled(watch=watch)
        project = None
        if env.get("HERMES_ENABLE_PROJECT_PLUGINS") == "1":
            project = (cwd or Path.cwd()) / ".hermes" / "plugins"
        return cls(home=home, bundled=bundled, project=project)


def is_plugin_name(name: str) -> bool:
    """Names starting with ``.`` or ``_`` are never plugins (staging folders, sidecars, caches)."""
    return bool(name) and not name.startswith((".", "_"))


def looks_like_root(path: Path, *, watch: Watch = UNWATCHED) -> bool:
    """A folder is a plugin root when it holds a manifest or a pyproject.toml."""
    watch.folder(path)
    return any((path / name).is_file() for name in (*MANIFEST_NAMES, "pyproject.toml"))


def discover(sources: PluginSources, *, watch: Watch = UNWATCHED) -> list[PluginRoot]:
    """Every plugin root of every source, in source order then name order."""
    roots: list[PluginRoot] = []
    if sources.bundled is not None:
        roots += _scan_folder(sources.bundled, "bundled", categories=False, watch=watch)
    roots += _scan_folder(sources.home / "plugins", "user", categories=True, watch=watch)
    if sources.project is not None:
        roots += _scan_folder(sources.project, "project", categories=False, watch=watch)
    return roots


def _scan_folder(folder: Path, source: str, *, categories: bool, watch: Watch = UNWATCHED) -> list[PluginRoot]:
    watch.folder(folder)
    if not folder.is_dir():
        return []
    roots: list[PluginRoot] = []
    for entry in _subfolders(folder, watch=watch):
        escapes = not is_within(entry, folder, watch=watch)
        if escapes or looks_like_root(entry, watch=watch) or not categories:
            roots.append(PluginRoot(entry.name, entry, source, folder, escapes=escapes))
            continue
        for inner in _subfolders(entry, watch=watch):
            escapes = not is_within(inner, folder, watch=watch)
            if escapes or looks_like_root(inner, watch=watch):
                roots.append(PluginRoot(f"{entry.name}/{inner.name}", inner, source, folder, escapes=escapes))
    return roots


def _subfolders(folder: Path, *, watch: Watch = UNWATCHED) -> list[Path]:
    watch.folder(folder)
    try:
        entries = sorted(folder.iterdir(), key=lambda p: p.name)
    except OSError:
        return []
    return [p for p in entries if is_plugin_name(p.name) and p.is_dir()]
