"""``scan``: what pm reads for a home — plugin roots, their status and reason, core, the union
with origins — as a transaction (a receipt, no lock, nothing built) and a report for ``--json``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pm.base.errors import EXIT_OK
from pm.inputs.collect import Inputs, plugin_to_json
from pm.ops.options import SILENT, Options, Reporter
from pm.ops.transaction import Result, transaction


def scan(home: Path, options: Options | None = None, reporter: Reporter = SILENT) -> Result:
    """Gather the home's inputs and finish the receipt; ``inputs`` is None when the primary config
    is unreadable (the receipt says why)."""
    txn = transaction(home, "scan", lambda txn: txn.finish("ok", EXIT_OK), options, reporter, lock=False)
    return Result(txn.receipt, txn.inputs)


def report(inputs: Inputs) -> dict[str, Any]:
    """What ``scan --json`` prints: the home, target, fingerprint, core, every plugin root with its
    status, the union with origins, the homes and the notices."""
    data = inputs.to_receipt()
    return {
        "home": str(inputs.home),
        "target": inputs.target.to_receipt(),
        "fingerprint": inputs.fingerprint,
        "core": {
            "source": inputs.core.source,
            "lock_source": inputs.core.lock_source,
            "requirements": data["core"],
            "lock": data["core_lock"],
        },
        "plugins": [plugin_to_json(s) for s in inputs.selection.plugins],
        "union": [
            {"requirement": str(t.requirement), "origin": t.origin.to_json()} for t in inputs.union.requirements
        ],
        "homes": data["homes"],
        "notices": data["notices"],
    }
