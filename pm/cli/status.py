"""``hermes pm status`` and ``hermes pm env``: the selected generation, for people and for the host.

Both only read (no lock, no inputs, no resolver): ``env`` is what the host runs at boot to find
the interpreter and site-packages to activate.
"""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path
from typing import Any

from pm.base.errors import EXIT_FAILURE, EXIT_OK
from pm.cli._common import home_of
from pm.cli._output import emit_json, say
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


def run(args: argparse.Namespace) -> int:
    data = status(home_of(args))
    if args.json:
        emit_json(data)
        return EXIT_OK
    print(render(data))
    return EXIT_OK


def render(data: dict[str, Any]) -> str:
    current = data["selected"]
    lines = []
    if current is None:
        lines.append(f"{data['home']}: no generation selected (run `hermes pm sync`)")
    else:
        lines += [f"selected generation: {current['id']}", f"  path: {current['path']}",
                  f"  python: {current['python']}", f"  fingerprint: {current['fingerprint']}",
                  f"  packages: {data['packages']}"]
    listed = data["generations"]
    incomplete = sum(1 for g in listed if not g["complete"])
    line = f"generations on disk: {len(listed)}"
    if data["previous"]:
        line += f" (previous: {data['previous']})"
    if incomplete:
        line += f"; {incomplete} incomplete (removed by the next sync or gc)"
    lines.append(line)
    for g in listed:
        if g["leased_by"]:
            lines.append(f"  {g['id']} in use by pid {', '.join(map(str, g['leased_by']))}")
    receipt = data["latest_receipt"]
    if receipt is not None:
        lines.append(f"latest receipt: {receipt['kind']} {receipt['outcome']} at {receipt['finished_at']}  "
                     f"({receipt['path']})")
    return "\n".join(lines)


class Env:
    """``hermes pm env``: the selected generation's interpreter and site-packages, for the host."""

    @staticmethod
    def run(args: argparse.Namespace) -> int:
        current = generations.selected(home_of(args))
        if current is None:
            say("error: no generation is selected; run `hermes pm sync`")
            return EXIT_FAILURE
        if not current.python.exists():
            say(f"error: generation {current.id} is damaged: its interpreter {current.python} is missing; "
                "run `hermes pm sync`")
            return EXIT_FAILURE
        data = {"id": current.id, "python": str(current.python), "site_packages": str(current.site_packages),
                "fingerprint": current.fingerprint}
        if args.json:
            emit_json(data)
        else:
            for key in ("python", "site_packages"):  # shell-quoted: `eval "$(hermes pm env)"` works
                print(f"{key.upper()}={shlex.quote(data[key])}")
            print(f"GENERATION={shlex.quote(current.id)}")
        return EXIT_OK
