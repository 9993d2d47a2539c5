"""``hermes update``: install catalog providers that ``memory.provider`` names but nothing
provides (per home), then sync the union of all homes. Never disables a plugin, never runs
trial resolutions; a union that no longer resolves leaves the previous generation selected and
a receipt that names the colliding plugins.

Also the start-up lazy install the host calls once per process per (home, provider).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

from pm.base.commands import hermes
from pm.base.errors import PmError
from pm.base.names import BUILTIN_PROVIDER
from pm.env.plugin_install import Check, Installed, InstallError, removed_installed
from pm.env.plugin_install import install as install_files
from pm.inputs.catalog import Catalog, CatalogRefusal
from pm.inputs.config import read_config
from pm.inputs.discover import PluginSources, discover
from pm.inputs.plugin import inspect
from pm.inputs.selection import profile_homes, provides
from pm.ops.consent import cargo_of, consent_to, pins_before
from pm.ops.install import catalog_for, scanning, swept
from pm.ops.invalid import refuse_invalid
from pm.ops.options import SILENT, Options, Reporter
from pm.ops.repin import Ask, repin_all
from pm.ops.repin import tell as tell_repins
from pm.ops.sync import sync_in
from pm.ops.transaction import Result, Transaction, transaction
from pm.resolver.preferences import EVERYTHING


class ProvidersNotInstalled(InstallError):
    """Configured memory providers the catalog could not install (each ``refusals`` line names the
    provider, the home and why); the update stops before its sync."""

    def __init__(self, refusals: list[str]) -> None:
        self.refusals = tuple(refusals)
        super().__init__("; ".join(refusals))


class ProvidersMissing(PmError):
    """Configured memory providers that nothing provides after the update's installs: the catalog
    has no entry of that name (or what it installed provides another). ``missing`` holds (config
    file, provider, what to do instead); the update stops before its sync, exit 1."""

    kind = "missing-provider"

    def __init__(self, missing: list[tuple[Path, str, str]]) -> None:
        self.missing = tuple(missing)
        told = "; ".join(f"memory provider {provider!r} (memory.provider in {config}) is still not installed: {what}"
                         for config, provider, what in missing)
        super().__init__(f"{told}; nothing was rebuilt (the agent runs without its memory until then)")


@dataclass(frozen=True)
class Missing:
    home: Path
    provider: str


def missing_providers(home: Path) -> list[Missing]:
    """(home, provider) for the home and each profile whose memory.provider nothing provides."""
    homes = [home] + profile_homes(home)[0]
    found = []
    for each in homes:
        try:
            provider = read_config(each).memory_provider
        except Exception:  # noqa: BLE001 - a broken profile is reported by selection, not here
            continue
        if provider is None or provider == BUILTIN_PROVIDER:
            continue
        plugins = [inspect(root) for root in discover(PluginSources.for_home(each))]
        if not provides(plugins, provider):
            found.append(Missing(each, provider))
    return found


def install_missing(missing: Missing, catalog: Catalog, check: Check | None = None) -> Installed | None:
    """Install a missing provider from the catalog into that home (``check``: the install scan);
    None when the catalog lacks it."""
    entry = catalog.find(missing.provider)
    if entry is None:
        return None
    return install_files(missing.home, entry.name, catalog, check=check)


def update(home: Path, options: Options | None = None, reporter: Reporter = SILENT, *,
           accept: frozenset[str] = frozenset(), ask: Ask | None = None, upgrade: bool = True,
           only: str | None = None) -> Result:
    """The update transaction under the home lock: per home, install the catalog provider that
    ``memory.provider`` names but nothing provides (told per home), move catalog plugins to their
    entries' new pins (:mod:`.repin`: admission, and consent — ``accept`` or ``ask`` — when a pin
    widens what it brings), then sync the union of every home — as an upgrade (``--upgrade``: no
    pin is preferred; ``upgrade=False`` for the start-up install, which moves nothing it need
    not). The receipt's ``installed`` lists what was installed, ``repinned`` what moved. ``only``
    (``hermes plugins update NAME``): that catalog plugin's re-pin alone, by the same rules (no
    provider installs), then a sync that is no upgrade: the other pins stay where they can."""
    def work(txn: Transaction) -> None:
        catalog = catalog_for(txn.home)
        installed: list[str] = []
        refused: list[str] = []
        if only is not None:
            refuse_not_from_catalog(txn.home, only, catalog)
        for missing in missing_providers(txn.home) if only is None else ():
            swept(txn, missing.home)
            names, problem = _install_one(missing, catalog, reporter, scanning(txn, missing.home, ("update",)))
            installed += names
            refused += [problem] if problem else []
        txn.gather()
        txn.draft.record(installed=installed)
        keep = tuple(str(k) for k in (read_config(txn.home).pm.get("keep_removed") or []))
        txn.draft.warnings += [*catalog.notes, *removed_installed(txn.home, catalog, keep)]  # the kill list
        if refused:  # a configured memory provider that could not be installed: refused, as install is
            raise ProvidersNotInstalled(refused)
        _refuse_still_missing(txn)  # update never ends ok with memory.provider naming nothing
        refuse_invalid(txn)  # before the re-pins and the rebuild: either would leave that plugin out
        repins = repin_all(txn, catalog, accept, ask, only)  # through admission, with consent when they widen
        if any(r.outcome == "moved" for r in repins):
            warnings = list(txn.draft.warnings)
            txn.gather()  # the moved plugins' new declarations are the inputs now
            txn.draft.warnings += [w for w in warnings if w not in txn.draft.warnings]
        tell_repins(txn.draft, repins, txn.options.shown_home)
        before = pins_before(txn)
        sync_in(txn, lambda resolution: consent_to(txn, cargo_of(before, resolution), "the update", ("update",)))

    options = options or Options()
    if upgrade and only is None:
        options = replace(options, upgrade=EVERYTHING)
    txn = transaction(home, "update", work, options, reporter, command="update", gather_inputs=False, candidate=only)
    return Result(txn.receipt, txn.inputs)


def refuse_not_from_catalog(home: Path, name: str, catalog: Catalog) -> None:
    """``hermes plugins update NAME`` of a plugin ``home`` did not install from ``catalog``: refused
    (:class:`InstallError`), naming what it is instead."""
    from pm.env.plugin_install import installed_records

    record = installed_records(home).get(name)
    if record is None or record.get("source") != "catalog":
        how = "not installed by pm" if record is None else f"installed from a {record.get('source')} source"
        raise InstallError(f"plugin {name!r} is {how}, not from the catalog ({catalog.file}): only a catalog "
                           "plugin has a pin to update (`hermes plugins install` replaces another)")
    if next((e for e in catalog.entries if e.name == name), None) is None:
        raise InstallError(f"plugin {name!r} is no longer in the catalog ({catalog.file}): it has no pin to move to")


def _refuse_still_missing(txn: Transaction) -> None:
    """Raise :class:`ProvidersMissing`, with the steps that can help, when a home's
    ``memory.provider`` still names nothing after the installs."""
    from pm.ops.providers import provider_remedy

    missing = [h for h in txn.gathered.selection.homes if h.missing_provider is not None]
    if not missing:
        return
    shown = txn.options.shown_home
    told = []
    for home in missing:
        assert home.missing_provider is not None
        remedy = provider_remedy(txn.home, home.missing_provider, shown_home=shown, watch=txn.watch)
        told.append((home.config.file, home.missing_provider, remedy.why))
    txn.draft.step(hermes("plugins", "install", "SOURCE", home=shown),
                   "install the provider from its own source (a folder, or git+URL@COMMIT)")
    txn.draft.step(hermes("memory", "setup", "NAME", home=shown),
                   "or set up an installed memory provider instead (it records memory.provider)")
    raise ProvidersMissing(told)


def _install_one(missing: Missing, catalog: Catalog, reporter: Reporter,
                 check: Check | None = None) -> tuple[list[str], str | None]:
    """(names installed, the refusal when the catalog entry could not be installed)."""
    where = missing.home
    try:
        installed = install_missing(missing, catalog, check)
    except (InstallError, CatalogRefusal) as refusal:
        reporter.notice(f"!!! {where}: memory provider {missing.provider!r} NOT installed: {refusal}")
        return [], f"memory provider {missing.provider!r} for {where}: {refusal}"
    if installed is None:
        reporter.notice(f"!!! {where}: memory provider {missing.provider!r} is configured but nothing provides it "
                        "and the catalog has no such entry; the agent runs WITHOUT its memory")
        return [], None
    reporter.notice(f"{where}: installed memory provider {installed.name!r} "
                    f"({installed.provenance.get('commit') or installed.provenance.get('sha256')})")
    return [installed.name], None


_LAZY_DONE: set[tuple[str, str]] = set()


def lazy_install(home: Path, reporter: Reporter = SILENT) -> list[str]:
    """Start-up hook: when ``security.allow_lazy_installs`` is exactly true and
    ``HERMES_DISABLE_LAZY_INSTALLS`` is unset, install missing catalog providers and admit them
    (the update transaction); else warn loudly with the command to run. Once per process per
    (home, provider). Never a silent fallback. Returns the names installed."""
    allowed = read_config(home).allow_lazy_installs and not os.environ.get("HERMES_DISABLE_LAZY_INSTALLS")
    fresh = [m for m in missing_providers(home) if (str(m.home), m.provider) not in _LAZY_DONE]
    _LAZY_DONE.update((str(m.home), m.provider) for m in fresh)
    if not fresh:
        return []
    from pm.ops.providers import provider_remedy

    remedies = {m: provider_remedy(home, m.provider) for m in fresh}
    if not allowed or not any(r.command for r in remedies.values()):
        for missing, remedy in remedies.items():
            reporter.notice(f"WARNING: memory provider {missing.provider!r} (configured in "
                            f"{missing.home / 'config.yaml'}) is not installed; the agent will run WITHOUT its "
                            "memory. " + (f"Run: {remedy.command}" if remedy.command else remedy.why[:1].upper() + remedy.why[1:]))
        return []
    done = update(home, Options(), reporter, upgrade=False)
    if done.code != 0:
        reporter.notice(f"WARNING: installing the missing memory provider did not finish (exit {done.code}); "
                        f"see {done.receipt.path}")
    return list(done.receipt.extra.get("installed", []))
