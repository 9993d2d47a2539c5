"""Memory provider discovery: enumerate, never import.

Four sources, in precedence order — when two sources offer the same provider name, the earlier
one wins and the others are kept, marked ``shadowed_by`` the winner:

1. ``bundled`` — the host's ``plugins/memory/<name>/`` (or ``$HERMES_BUNDLED_PLUGINS``);
2. ``user`` — ``<home>/plugins/<name>/`` (manifest ``kind: memory``) and
   ``<home>/plugins/memory/<name>/``;
3. ``project`` — ``./.hermes/plugins/<name>/``, only with ``HERMES_ENABLE_PROJECT_PLUGINS=1``;
4. ``entry_point`` — installed distributions advertising the entry-point group
   ``hermes_agent.memory_providers`` (entry-point name = provider name).

The three folder sources are pm's own discovery (:mod:`pm.inputs.discover`, :func:`pm.inputs.plugin.inspect`,
:func:`pm.inputs.plugin.apply_precedence`), so the host and ``hermes pm scan`` always agree. Entry points
are located through their distribution's ``RECORD`` (``Distribution.files`` /
``locate_file``), falling back to a plain look at the ``sys.path`` folders:
:func:`importlib.util.find_spec` is never used, because it imports parent packages. Nothing here
imports or executes plugin code; ``cli.py`` and ``config_schema.py`` beside a provider's
``__init__.py`` are found on disk.
"""

from __future__ import annotations

import importlib.metadata as metadata
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from packaging.requirements import Requirement

from pm.inputs.discover import PluginSources, discover, is_plugin_name
from pm.inputs.plugin import Plugin, apply_precedence, inspect
from pm.inputs.selection import ENTRY_POINT_GROUP

__all__ = [
    "ENTRY_POINT_GROUP",
    "SOURCES",
    "EntryPointRef",
    "ProviderInfo",
    "discover_memory_providers",
    "find_memory_provider",
]

SOURCES = ("bundled", "user", "project", "entry_point")


@dataclass(frozen=True)
class EntryPointRef:
    """Where an entry-point provider comes from: ``value`` as written (``pkg.mod[:attr]``) and
    the distribution that advertises it."""

    value: str
    module: str
    attr: str | None
    distribution: str | None
    version: str | None


@dataclass(frozen=True)
class ProviderInfo:
    """One memory provider as found on disk; nothing in it has been imported.

    ``root`` is the provider's folder and ``module_file`` its ``__init__.py`` (for an entry point
    naming a plain module, that module's file; its folder is the root). ``plugin`` is pm's view
    of a folder source (manifest, declaration, problems); ``None`` for an entry point.
    ``problems`` non-empty means the provider cannot be loaded.
    """

    name: str
    source: str
    root: Path
    module_file: Path
    plugin: Plugin | None = None
    entry_point: EntryPointRef | None = None
    shadowed_by: Path | None = None
    problems: tuple[str, ...] = ()
    own_folder: bool = True  # False for an entry point naming a top-level module file

    @property
    def key(self) -> str:
        """The name pm's selection and readiness use (``memory/x`` for a categorised user root)."""
        return self.plugin.key if self.plugin is not None else self.name

    @property
    def requirements(self) -> tuple[Requirement, ...]:
        """The declared requirements pm installs for it (``()`` when none or not pm-managed)."""
        if self.plugin is None or self.plugin.declaration is None:
            return ()
        return self.plugin.declaration.requirements

    @property
    def declaration_file(self) -> Path | None:
        if self.plugin is None or self.plugin.declaration is None:
            return None
        return self.plugin.declaration.file

    @property
    def cli_file(self) -> Path | None:
        """``cli.py`` beside the provider's ``__init__.py``, when it exists."""
        path = self.root / "cli.py"
        return path if self.own_folder and path.is_file() else None

    @property
    def config_schema_file(self) -> Path | None:
        """``config_schema.py`` beside the provider's ``__init__.py``, when it exists."""
        path = self.root / "config_schema.py"
        return path if self.own_folder and path.is_file() else None


def discover_memory_providers(
    home: Path, *, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> list[ProviderInfo]:
    """Every memory provider of every source for ``home``, in precedence order (bundled, user,
    project, entry points; by name within a source), shadowed ones included and marked.
    ``env`` (default ``os.environ``) and ``cwd`` decide the bundled and project folders."""
    sources = PluginSources.for_home(Path(home), env=env, cwd=cwd)
    plugins = apply_precedence([inspect(root) for root in discover(sources)])
    found = [_from_plugin(p) for p in plugins if p.is_memory]
    winners = {info.name: info.root for info in found if info.shadowed_by is None}
    for info in _entry_point_providers():
        winner = winners.get(info.name)
        if winner is None:
            winners[info.name] = info.root
            found.append(info)
        else:
            found.append(replace(info, shadowed_by=winner))
    return found


def find_memory_provider(
    home: Path, name: str, *, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> ProviderInfo | None:
    """The provider that ``name`` means for ``home`` (the precedence winner), or ``None``.
    ``name`` is a provider name or a user key such as ``memory/name``."""
    for info in discover_memory_providers(home, env=env, cwd=cwd):
        if info.shadowed_by is None and name in (info.name, info.key):
            return info
    return None


def _from_plugin(plugin: Plugin) -> ProviderInfo:
    root = plugin.root.path
    problems = plugin.problems
    if not problems and not (root / "__init__.py").is_file():
        problems = (f"{root}: has no __init__.py (a memory provider is a Python package)",)
    return ProviderInfo(name=plugin.provider_name, source=plugin.root.source, root=root,
                        module_file=root / "__init__.py", plugin=plugin,
                        shadowed_by=plugin.shadowed_by, problems=problems)


# -- entry points ----------------------------------------------------------------------------------


def _entry_point_providers() -> list[ProviderInfo]:
    """Providers advertised in :data:`ENTRY_POINT_GROUP`; the first of a repeated name wins."""
    seen: set[str] = set()
    found: list[ProviderInfo] = []
    for ep in sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        if ep.name in seen:
            continue
        seen.add(ep.name)
        found.append(_from_entry_point(ep))
    return found


def _from_entry_point(ep: metadata.EntryPoint) -> ProviderInfo:
    dist = getattr(ep, "dist", None)
    ref = EntryPointRef(value=ep.value, module=ep.module, attr=ep.attr or None,
                        distribution=dist.metadata["Name"] if dist is not None else None,
                        version=dist.version if dist is not None else None)
    if not is_plugin_name(ep.name) or "/" in ep.name or ".." in ep.name:
        bad = f"entry point {ep.name!r} = {ep.value!r}: not a usable provider name"
        return ProviderInfo(ep.name, "entry_point", Path(), Path(), entry_point=ref,
                            problems=(bad,))
    module_file = _locate_module(ep.module, dist)
    if module_file is None:
        where = f" of distribution {ref.distribution!r}" if ref.distribution else ""
        problem = (f"entry point {ep.name!r} = {ep.value!r}{where}: "
                   f"module {ep.module!r} not found on disk")
        return ProviderInfo(ep.name, "entry_point", Path(), Path(), entry_point=ref,
                            problems=(problem,))
    own_folder = module_file.name == "__init__.py" or "." in ep.module
    return ProviderInfo(ep.name, "entry_point", module_file.parent, module_file, entry_point=ref,
                        own_folder=own_folder)


def _candidates(module: str) -> tuple[str, str]:
    rel = module.replace(".", "/")
    return f"{rel}/__init__.py", f"{rel}.py"


def _locate_module(module: str, dist: metadata.Distribution | None) -> Path | None:
    """The file of ``module`` (a package's ``__init__.py`` or a ``.py``), found from the
    distribution's RECORD, else by looking into each ``sys.path`` folder. Imports nothing."""
    wanted = _candidates(module)
    if dist is not None:
        for entry in dist.files or ():
            if entry.as_posix() in wanted:
                path = Path(str(dist.locate_file(entry)))
                if path.is_file():
                    return path.resolve()
    for folder in sys.path:
        base = Path(folder or ".")
        for rel in wanted:
            path = base / rel
            if path.is_file():
                return path.resolve()
    return None
