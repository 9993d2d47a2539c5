"""gc and rollback: the only operations that drop generations or select an earlier one.

``gc`` keeps the selected generation, the previous one, and every generation a live process holds
a lease on; it removes the rest, including folders an interrupted build left incomplete (and
the venv it was filling at ``generations/.building``), and lapsed leases; it holds the home lock
and writes only under ``<home>/pm``. ``rollback`` (:mod:`pm.ops.rollback`) selects an earlier
generation again, after verifying it, with the plugin selection it was built from.
"""

from __future__ import annotations

from pathlib import Path

from pm.base.errors import EXIT_OK
from pm.base.store import Store
from pm.env import generations, leases
from pm.ops.options import SILENT, Options, Reporter
from pm.ops.transaction import Result, Transaction, transaction


def gc(home: Path, options: Options | None = None, reporter: Reporter = SILENT) -> Result:
    """``hermes pm gc``: the receipt lists ``removed``, ``kept`` (id -> why) and ``lapsed_leases``."""
    def work(txn: Transaction) -> None:
        removed, kept, lapsed = collect(txn.home, txn.store)
        txn.draft.record(removed=removed, kept=kept, lapsed_leases=lapsed)
        txn.finish("ok", EXIT_OK)

    txn = transaction(home, "gc", work, options, reporter, command="gc", gather_inputs=False, needs_config=False)
    return Result(txn.receipt)


def rollback(home: Path, options: Options | None = None, reporter: Reporter = SILENT, *,
             to: str | None = None) -> Result:
    """``hermes pm rollback [--to ID]``: the generation and the plugin selection it was built from
    (:mod:`pm.ops.rollback`)."""
    from pm.ops.rollback import rollback as undo

    return undo(home, options, reporter, to=to)


def keep_reasons(home: Path) -> dict[str, str]:
    """generation id -> why gc keeps it (selected, previous, in use by pid N)."""
    state = generations.read_state(home)
    keep: dict[str, str] = {}
    for pid, gid in sorted(leases.live(home).items()):
        keep[gid] = f"in use by pid {pid}"
    for role in ("previous", "selected"):
        if isinstance(state.get(role), str):
            keep[state[role]] = role
    return keep


def collect(home: Path, store: Store) -> tuple[list[str], dict[str, str], list[int]]:
    """Remove what gc may remove; returns (removed ids, kept id -> reason, lapsed lease pids).
    The caller holds the home lock."""
    lapsed = leases.prune(home, store)
    keep = keep_reasons(home)
    on_disk = generations.all_ids(home)
    removed = [gid for gid in on_disk if gid not in keep]
    for gid in removed:
        store.remove_tree(generations.root(home) / gid)
    store.remove_tree(generations.building(home))  # a venv an interrupted build was filling
    return removed, {gid: why for gid, why in keep.items() if gid in on_disk}, lapsed
