"""Importing a plugin folder as a package, the one way the host runs plugin code.

A folder provider ``<root>/__init__.py`` is imported as the package
``hermes_plugins.memory.<name>`` (a suffix of its root's digest is added when another root already
holds that name in this process), with ``submodule_search_locations=[root]`` so its relative
imports work. :func:`package_stub` creates that package *without executing* ``__init__.py``, so
``cli.py`` can be imported alone (``<package>.cli``) during argument parsing;
:func:`import_package` executes the stub later, in place. Entry-point providers are installed
packages and are imported the ordinary way. Callers gate every call here on readiness
(:mod:`agent.gate`); nothing in this module checks it.

Importing plugin code writes no bytecode inside the plugins tree (invariant 2: only install and
remove change ``<home>/plugins/**``): before a folder provider's code first runs,
:data:`sys.dont_write_bytecode` is set for the rest of the process — a plugin may import its
own modules lazily, long after :func:`import_package` returned, so restoring it would not do.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import re
import sys
from types import ModuleType

from agent.discovery import ProviderInfo

__all__ = ["PACKAGE_PREFIX", "import_package", "import_submodule", "package_name", "package_stub"]

PACKAGE_PREFIX = "hermes_plugins.memory"
_STUB = "__hermes_stub__"


def _ensure_parents() -> None:
    parts = PACKAGE_PREFIX.split(".")
    for i in range(1, len(parts) + 1):
        name = ".".join(parts[:i])
        if name not in sys.modules:
            module = ModuleType(name, "namespace of plugin packages loaded by the host")
            module.__path__ = []  # a namespace: holds plugin packages only
            sys.modules[name] = module


def _no_bytecode() -> None:
    """From now on this process writes no ``__pycache__`` (see the module docstring)."""
    sys.dont_write_bytecode = True


def package_name(info: ProviderInfo) -> str:
    """The module name ``info``'s package gets in this process (stable for one root)."""
    if info.entry_point is not None:
        return info.entry_point.module
    base = f"{PACKAGE_PREFIX}.{re.sub(r'[^0-9A-Za-z_]', '_', info.name)}"
    held = sys.modules.get(base)
    if held is None or getattr(held, "__file__", None) == str(info.module_file):
        return base
    return f"{base}_{hashlib.sha256(str(info.root).encode()).hexdigest()[:8]}"


def package_stub(info: ProviderInfo) -> ModuleType:
    """The package module of a folder provider, created but not executed (or the executed one,
    if already imported). Registered in :data:`sys.modules` so submodules can be imported."""
    name = package_name(info)
    module = sys.modules.get(name)
    if module is not None:
        return module
    _ensure_parents()
    spec = importlib.util.spec_from_file_location(
        name, info.module_file, submodule_search_locations=[str(info.root)])
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot make an import spec for {info.module_file}")
    module = importlib.util.module_from_spec(spec)
    setattr(module, _STUB, True)
    sys.modules[name] = module
    return module


def import_package(info: ProviderInfo) -> ModuleType:
    """Import (execute once per process) ``info``'s package and return it. On failure the half
    imported module is removed and the exception propagates."""
    if info.entry_point is not None:
        return importlib.import_module(info.entry_point.module)
    module = package_stub(info)
    if not getattr(module, _STUB, False):
        return module
    _no_bytecode()
    spec = module.__spec__
    assert spec is not None and spec.loader is not None
    try:
        delattr(module, _STUB)
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(spec.name, None)
        raise
    return module


def import_submodule(info: ProviderInfo, name: str) -> ModuleType:
    """Import ``<package>.<name>`` (e.g. ``cli``) without executing the package's
    ``__init__.py`` when it has not run yet (folder providers). Entry-point packages are
    imported the ordinary way, parents first."""
    if info.entry_point is None:
        package_stub(info)
        _no_bytecode()
    package = package_name(info)
    if info.entry_point is not None and info.module_file.name != "__init__.py":
        package = package.rpartition(".")[0]  # the entry point names a module: use its package
    return importlib.import_module(f"{package}.{name}")
