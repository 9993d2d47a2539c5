"""``hermes update``: install catalog providers that ``memory.provider`` names but nothing
provides (per home), then sync the union of all homes. Never disables a plugin, never runs
trial resolutions; a union that no longer resolves leaves the previous generation selected and
a receipt that names the colliding plugins.

Also the start-up lazy install the host calls once per process per (home, provider).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .catalog import Catalog, load_catalog
from .config import read_config
from .discover import PluginSources, discover
from .install import Installed, install
from .plugin import inspect


@dataclass(frozen=True)
class Missing:
    home: Path
    provider: str


def catalog_for(home: Path) -> Catalog:
    configured = read_config(home).pm.get("catalog")
    return load_catalog((home / configured).resolve() if configured else None)


def missing_providers(home: Path) -> list[Missing]:
    """(home, provider) for the home and each profile whose memory.provider nothing provides."""
    homes = [home] + sorted(p.parent for p in (home / "profiles").glob("*/config.yaml"))
    found = []
    for each in homes:
        try:
            provider = read_config(each).memory_provider
        except Exception:  # noqa: BLE001 - a broken profile is reported by selection, not here
            continue
        if provider is None or provider == "builtin":
            continue
        plugins = [inspect(root) for root in discover(PluginSources.for_home(each))]
        if not any(p.is_memory and provider in (p.provider_name, p.key) for p in plugins):
            found.append(Missing(each, provider))
    return found


def install_missing(missing: Missing, catalog: Catalog) -> Installed | None:
    """Install a missing provider from the catalog into that home; None when the catalog lacks it."""
    entry = catalog.find(missing.provider)
    if entry is None:
        return None
    return install(missing.home, entry.name, catalog)


_LAZY_DONE: set[tuple[str, str]] = set()


def lazy_install(home: Path, say=print) -> list[Installed]:  # type: ignore[no-untyped-def]
    """Start-up hook: install missing catalog providers when ``security.allow_lazy_installs`` is
    exactly true and ``HERMES_DISABLE_LAZY_INSTALLS`` is unset; else warn loudly with the command
    to run. Once per process per (home, provider). Never a silent fallback."""
    done = []
    allowed = read_config(home).allow_lazy_installs and not os.environ.get("HERMES_DISABLE_LAZY_INSTALLS")
    for missing in missing_providers(home):
        key = (str(missing.home), missing.provider)
        if key in _LAZY_DONE:
            continue
        _LAZY_DONE.add(key)
        if not allowed:
            say(f"WARNING: memory provider {missing.provider!r} (configured in {missing.home / 'config.yaml'}) "
                f"is not installed; the agent will run WITHOUT its memory. Run: hermes update")
            continue
        installed = install_missing(missing, catalog_for(home))
        if installed is None:
            say(f"WARNING: memory provider {missing.provider!r} is not installed and not in the catalog; "
                "the agent will run WITHOUT its memory")
        else:
            say(f"installed memory provider {installed.name!r} into {installed.root}; run: hermes pm sync")
            done.append(installed)
    return done
