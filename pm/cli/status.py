"""``hermes pm status`` and ``hermes pm env``: the selected generation, for people and for the host."""

from __future__ import annotations

import argparse
import json

from .. import generations
from ..errors import EXIT_FAILURE, EXIT_OK
from ..receipt import latest
from ._common import home_of
from ._output import emit_json, say

HELP = "the selected generation, its fingerprint, and the latest receipt"
RESOLVES = False


def run(args: argparse.Namespace) -> int:
    home = home_of(args)
    state = generations.read_state(home)
    current = generations.selected(home)
    receipt = None
    try:
        receipt = json.loads(latest(home).read_text())
    except (OSError, ValueError):
        pass
    data = {
        "home": str(home),
        "selected": current.to_receipt(selected=True, restart_required=False) if current else None,
        "previous": state.get("previous"),
        "generations": generations.all_ids(home),
        "latest_receipt": None if receipt is None else {
            k: receipt.get(k) for k in ("kind", "outcome", "exit_code", "finished_at", "candidate")
        } | {"path": str(latest(home))},
    }
    if args.json:
        emit_json(data)
        return EXIT_OK
    if current is None:
        print(f"{home}: no generation selected (run `hermes pm sync`)")
    else:
        print(f"selected generation: {current.id}\n  path: {current.path}\n  fingerprint: {current.fingerprint}")
        print(f"  packages: {len(current.record['resolution']['packages'])}")
    print(f"generations on disk: {len(data['generations'])}" + (f" (previous: {state['previous']})" if state.get("previous") else ""))
    if receipt is not None:
        print(f"latest receipt: {receipt['kind']} {receipt['outcome']} at {receipt['finished_at']}  ({latest(home)})")
    return EXIT_OK


class Env:
    HELP = "the selected generation's interpreter and site-packages (for the host to activate)"
    RESOLVES = False

    @staticmethod
    def run(args: argparse.Namespace) -> int:
        current = generations.selected(home_of(args))
        if current is None:
            say("error: no generation is selected; run `hermes pm sync`")
            return EXIT_FAILURE
        data = {"id": current.id, "python": str(current.python), "site_packages": str(current.site_packages),
                "fingerprint": current.fingerprint}
        if args.json:
            emit_json(data)
        else:
            print(f"PYTHON={data['python']}\nSITE_PACKAGES={data['site_packages']}\nGENERATION={current.id}")
        return EXIT_OK
