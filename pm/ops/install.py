"""``hermes plugins install`` and ``remove`` as operations: each one transaction with a receipt,
refusals included (an install the catalog or the checks refuse, a remove of an enabled plugin).
The files under ``<home>/plugins/`` are written by :mod:`pm.env.plugin_install` (staged copy + rename)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pm.base.errors import EXIT_OK
from pm.base.urls import redact_url
from pm.base.watch import UNWATCHED, Watch
from pm.env.plugin_install import install as install_files
from pm.env.plugin_install import remove as remove_files
from pm.env.plugin_install import sweep
from pm.inputs.catalog import Catalog
from pm.inputs.config import read_config
from pm.ops.failures import StillEnabled
from pm.ops.options import SILENT, Options, Reporter
from pm.ops.transaction import Result, Transaction, cache_dir, transaction


def catalog_for(home: Path, *, fetch: bool = True, watch: Watch = UNWATCHED) -> Catalog:
    """The catalog ``home`` names (``pm.catalog``, relative to the home), else the bundled one;
    with ``pm.catalog_url``, the live catalog's entries over it and every kill list unioned
    (:mod:`pm.inputs.catalog_live`; its notes in ``Catalog.notes``). ``fetch=False``: the kept copy only
    (an offline check never reaches the network)."""
    from pm.inputs.catalog import load_catalog  # read only when installing

    config = read_config(home, watch=watch).pm
    configured = config.get("catalog")
    base = load_catalog((home / configured).resolve() if configured else None, watch=watch)
    url = config.get("catalog_url")
    if not url:
        return base
    from pm.inputs.catalog_live import combined, live_catalog

    live, notes = live_catalog(str(url), cache_dir(), fetch=fetch, watch=watch)
    return combined(base, live, notes)


def catalog_has(catalog: Catalog, name: str) -> bool:
    """Whether ``name`` is a catalog entry's (a catalog name wins over the ``owner/repo`` form)."""
    from pm.inputs.catalog import catalog_name

    return any(catalog_name(e.name) == catalog_name(name) for e in catalog.entries)


def scanning(txn: Transaction, home: Path, retry: tuple[str, ...]) -> Callable[[str, Path], None]:
    """The install scan as a check of a fetched tree (:mod:`pm.env.plugin_scan`), unless ``home``'s
    ``plugins.scan_on_install`` is false: the verdict and findings go to the receipt's ``scan``;
    ``dangerous`` raises, ``caution`` needs consent (:mod:`pm.ops.consent`, ``retry`` with ``--yes``)."""
    def check(name: str, root: Path) -> None:
        if not read_config(home, watch=txn.watch).scan_on_install:
            txn.draft.record(scan={"verdict": "off", "analyzer": "none", "findings": []})
            return
        from pm.env.plugin_scan import Dangerous, scan_tree
        from pm.ops.consent import Cargo, consent_to

        scan = scan_tree(root)
        txn.draft.record(scan=scan.to_json())
        if scan.verdict == "dangerous":
            raise Dangerous(name, scan)
        if scan.verdict == "caution":
            cautions = tuple(f.said() for f in scan.of("caution"))
            consent_to(txn, Cargo(cautions=cautions), f"installing plugin {name!r}", retry)

    return check


def swept(txn: Transaction, home: Path) -> None:
    """Sweep what an interrupted install or remove left under ``home``'s ``plugins/`` (the lock is
    held), and say so in the receipt."""
    if leftovers := sweep(home):
        txn.draft.warnings.append("removed what an interrupted install or remove left in "
                                    f"{home / 'plugins'}: {', '.join(leftovers)}")


def install(home: Path, source: str, options: Options | None = None, reporter: Reporter = SILENT, *,
            force: bool = False, ref: str | None = None) -> Result:
    """Install SOURCE (a catalog name, a local folder, ``git+URL@COMMIT``, or ``owner/repo[/subdir]``
    or a git URL with ``ref``, pinned to its commit: :mod:`pm.env.git_source`) into ``home``'s
    ``plugins/``; the receipt's ``installed`` names it. Refusals are receipts too."""
    asked = Path(home).expanduser().absolute()

    def work(txn: Transaction) -> None:
        from pm.env.git_source import pinned_source

        swept(txn, asked)
        catalog = catalog_for(txn.home)
        txn.draft.warnings += list(catalog.notes)
        spec = source if catalog_has(catalog, source) and ref is None else pinned_source(source, ref)
        retry = ("plugins", "install", source, *(("--ref", ref) if ref is not None else ()))
        installed = install_files(asked, spec, catalog, force=force, check=scanning(txn, asked, retry))
        what = "already installed" if installed.unchanged else "replaced" if installed.replaced else "installed"
        txn.draft.record(installed=installed.name, root=str(installed.root), provenance=installed.provenance)
        txn.finish("ok", EXIT_OK, f"{what} plugin {installed.name!r} at {installed.root}")

    txn = transaction(home, "install", work, options, reporter, candidate=redact_url(source), command="plugins-install",
                      gather_inputs=False)
    return Result(txn.receipt)


def remove(home: Path, name: str, options: Options | None = None, reporter: Reporter = SILENT) -> Result:
    """Remove the installed plugin ``name`` from ``home``'s ``plugins/``; refused while enabled."""
    asked = Path(home).expanduser().absolute()

    def work(txn: Transaction) -> None:
        swept(txn, asked)
        selected = txn.gather().find(name)
        if selected is not None and (selected.status.enabled or selected.enabled_but_invalid):
            raise StillEnabled(name)
        path = remove_files(asked, name)
        txn.draft.record(removed=str(path))
        txn.finish("ok", EXIT_OK, f"removed {path}")

    txn = transaction(home, "remove", work, options, reporter, candidate=name, command="plugins-remove",
                      gather_inputs=False)
    return Result(txn.receipt, txn.inputs)
