"""gc and rollback: the only operations that drop or reselect generations.

``gc`` keeps the selected generation, the previous one, and every generation a live process holds
a lease on; it removes the rest, including folders an interrupted build left incomplete (and
the venv it was filling at ``generations/.building``), and lapsed leases. ``rollback`` selects the previous generation after verifying it is intact.
Both hold the home lock and write only under ``<home>/pm``.
"""

from __future__ import annotations

from pathlib import Path

from pm.base.commands import hermes
from pm.base.errors import EXIT_FAILURE, EXIT_OK, PmError
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


def rollback(home: Path, options: Options | None = None, reporter: Reporter = SILENT) -> Result:
    """``hermes pm rollback``: select the previous generation again if it is intact; otherwise
    refuse (failure kind ``rollback``) and change nothing."""
    txn = transaction(home, "rollback", _rollback, options, reporter, command="rollback", gather_inputs=False, needs_config=False)
    return Result(txn.receipt)


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


def _rollback(txn: Transaction) -> int:
    """Select the previous generation if it is intact; otherwise refuse and change nothing.
    The transaction holds the home lock; finishes the receipt."""
    home, store, draft = txn.home, txn.store, txn.draft
    state = generations.read_state(home)
    target = generations.previous(home)
    if target is None:
        gone = state.get("previous")
        why = f"the previous generation {gone} is missing or incomplete" if gone else "there is no previous generation"
    else:
        damage = target.problems()
        why = f"the previous generation {target.id} is damaged: {'; '.join(damage)}" if damage else ""
    if target is None or why:
        draft.failure = {"kind": "rollback", "message": why, "url": None}
        draft.step(hermes("pm", "sync", home=txn.options.shown_home),
                     "build a fresh generation for the current inputs instead")
        txn.finish("refused", EXIT_FAILURE)
        return EXIT_FAILURE
    generations.select(home, store, target)
    draft.generation = target.to_receipt(selected=True, restart_required=True)
    draft.record(message=f"generation {target.id} is selected again (was {state.get('selected')})")
    draft.warnings += _unmet_after_rollback(home, target)
    txn.finish("ok", EXIT_OK)
    return EXIT_OK


def _unmet_after_rollback(home: Path, target: generations.Generation) -> list[str]:
    """What the current selection declares that the rolled-back generation does not hold."""
    from pm.env.readiness import check
    from pm.inputs.collect import gather
    from pm.inputs.settings import Flags

    try:
        readiness = check(gather(home, Flags()), target)
    except PmError:
        return []
    return [f"after rollback, {v.name} is not ready: {v.reason()} (run `hermes pm sync`, or disable it)"
            for v in readiness.verdicts if not v.ready]
