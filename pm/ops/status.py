"""What ``hermes pm status`` shows, as data: the selected generation, every generation on disk
with its role and leases, and the latest receipt. Only reads (no lock, no inputs, no resolver);
the CLI (:mod:`pm.cli.status`) and the host's dashboard render it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pm.env import generations, leases
from pm.records.receipt import latest


def status(home: Path) -> dict[str, Any]:
    """Everything ``status`` shows, as data."""
    state = generations.read_state(home)
    current = generations.selected(home)
    in_use = leases.live(home)
    receipt = None
    try:
        receipt = json.loads(latest(home).read_text())
    except (OSError, ValueError):
        pass
    return {
        "home": str(home),
        "selected": current.to_receipt(selected=True, restart_required=False) if current else None,
        "packages": len(current.pins) if current else 0,
        "previous": state.get("previous"),
        "generations": [
            {"id": gid, "complete": generations.is_complete(home, gid),
             "role": "selected" if gid == state.get("selected") else "previous" if gid == state.get("previous") else None,
             "leased_by": sorted(pid for pid, g in in_use.items() if g == gid)}
            for gid in generations.all_ids(home)
        ],
        "latest_receipt": None if not isinstance(receipt, dict) else {
            k: receipt.get(k) for k in ("kind", "outcome", "exit_code", "finished_at", "candidate")
        } | {"path": str(latest(home))},
    }
