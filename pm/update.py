"""``hermes update``: install catalog providers that ``memory.provider`` names but nothing
provides (per home), then sync the union of all homes. Never disables a plugin, never runs
trial resolutions; a union that no longer resolves leaves the previous generation selected and
a receipt that names the colliding plugins.

Also the start-up lazy install the host calls once per process per (home, provider).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .catalog import Catalog, CatalogRefusal, load_catalog
from .config import read_config
from .discover import PluginSources, discover
from .inputs import Inputs, gather
from .install import Installed, InstallError, install
from .lock import LOCK_TIMEOUT, home_lock
from .plugin import inspect
from .receipt import Receipt
from .selection import provides
from .settings import Flags
from .store import Store


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
        if not provides(plugins, provider):
            found.append(Missing(each, provider))
    return found


def install_missing(missing: Missing, catalog: Catalog) -> Installed | None:
    """Install a missing provider from the catalog into that home; None when the catalog lacks it."""
    entry = catalog.find(missing.provider)
    if entry is None:
        return None
    return install(missing.home, entry.name, catalog)


def update(home: Path, flags: Flags, args: argparse.Namespace,
           say: Callable[[str], None] = print) -> tuple[int, Receipt, Inputs]:
    """The update transaction under the home lock: per home, install the catalog provider that
    ``memory.provider`` names but nothing provides (told per home), then sync the union of every
    home. Returns (exit code, finished receipt, the inputs that were synced)."""
    from .cli._common import start_receipt
    from .cli.sync import sync

    store = Store.for_home(home)
    installed_names: list[str] = []
    refused: list[str] = []
    with home_lock(home, store, timeout=getattr(args, "lock_timeout", LOCK_TIMEOUT), notify=say):
        catalog = catalog_for(home)
        for missing in missing_providers(home):
            names, problem = _install_one(missing, catalog, say)
            installed_names += names
            refused += [problem] if problem else []
        inputs = gather(home, flags)
        receipt = start_receipt("update", inputs)
        receipt.extra["installed"] = installed_names
        if refused:  # a configured memory provider that could not be installed: a failure, not ok
            receipt.failure = {"kind": "install", "message": "; ".join(refused), "url": None}
            receipt.finish("failed", 1)
            return 1, receipt, inputs
        code = sync(inputs, receipt, store, args)
    return code, receipt, inputs


def _install_one(missing: Missing, catalog: Catalog, say: Callable[[str], None]) -> tuple[list[str], str | None]:
    """(names installed, the refusal when the catalog entry could not be installed)."""
    where = missing.home
    try:
        installed = install_missing(missing, catalog)
    except (InstallError, CatalogRefusal) as refusal:
        say(f"!!! {where}: memory provider {missing.provider!r} NOT installed: {refusal}")
        return [], f"memory provider {missing.provider!r} for {where}: {refusal}"
    if installed is None:
        say(f"!!! {where}: memory provider {missing.provider!r} is configured but nothing provides it "
            "and the catalog has no such entry; the agent runs WITHOUT its memory")
        return [], None
    say(f"{where}: installed memory provider {installed.name!r} "
        f"({installed.provenance.get('commit') or installed.provenance.get('sha256')})")
    return [installed.name], None


_LAZY_DONE: set[tuple[str, str]] = set()


def lazy_install(home: Path, say: Callable[[str], None] = print) -> list[str]:
    """Start-up hook: when ``security.allow_lazy_installs`` is exactly true and
    ``HERMES_DISABLE_LAZY_INSTALLS`` is unset, install missing catalog providers and admit them
    (the update transaction); else warn loudly with the command to run. Once per process per
    (home, provider). Never a silent fallback. Returns the names installed."""
    allowed = read_config(home).allow_lazy_installs and not os.environ.get("HERMES_DISABLE_LAZY_INSTALLS")
    fresh = [m for m in missing_providers(home) if (str(m.home), m.provider) not in _LAZY_DONE]
    _LAZY_DONE.update((str(m.home), m.provider) for m in fresh)
    if not fresh:
        return []
    if not allowed:
        for missing in fresh:
            say(f"WARNING: memory provider {missing.provider!r} (configured in {missing.home / 'config.yaml'}) "
                f"is not installed; the agent will run WITHOUT its memory. Run: hermes update")
        return []
    args = argparse.Namespace(json=False, home=str(home), candidate=None, lock_timeout=LOCK_TIMEOUT)
    code, receipt, _ = update(home, Flags(), args, say=say)
    if code != 0:
        say(f"WARNING: installing the missing memory provider did not finish (exit {code}); see {receipt.path}")
    return list(receipt.extra.get("installed", []))
