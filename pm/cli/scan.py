"""``hermes pm scan``: every plugin root, its status and reason, requirements with origins."""

from __future__ import annotations

import argparse
from typing import Any

from pm.base.names import printable
from pm.cli._common import home_of, options_from
from pm.cli._output import emit_json, paint, table, tell_failed
from pm.inputs.collect import Inputs, plugin_to_json
from pm.inputs.selection import Status
from pm.ops.transaction import transaction


def report(inputs: Inputs) -> dict[str, Any]:
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


def run(args: argparse.Namespace) -> int:
    txn = transaction(home_of(args), "scan", lambda txn: txn.finish("ok", 0), options_from(args), lock=False)
    if txn.inputs is None:  # the primary config is unreadable
        tell_failed(txn.receipt, args.json)
        return txn.receipt.exit_code
    inputs = txn.inputs
    if args.json:
        emit_json(report(inputs))
        return 0
    print(render(inputs))
    return 0


def render(inputs: Inputs) -> str:
    profiles = [h.name for h in inputs.selection.homes if h.name]
    lines = [
        f"home:        {inputs.home}" + (f"  (profiles: {', '.join(profiles)})" if profiles else ""),
        f"target:      Python {inputs.target.python_full_version} on {inputs.target.platform}",
        f"core:        {len(inputs.core.requirements)} requirements from {inputs.core.source}"
        + (f"; {len(inputs.core.lock)} locked ({inputs.core.lock_source})" if inputs.core.lock_source else ""),
        f"fingerprint: {inputs.fingerprint}",
        "",
    ]
    rows = []
    for status in inputs.selection.plugins:
        colour = {Status.MEMBER: "green", Status.INVALID: "red", Status.SHADOWED: "yellow"}.get(status.status, "dim")
        rows.append([printable(status.plugin.key), status.plugin.root.source, paint(status.status, colour),
                     printable(status.reason)])
    lines.append(table(rows, ["plugin", "source", "status", "reason"]) if rows else "no plugin roots found")
    lines += ["", f"union ({len(inputs.union.requirements)} requirements):"]
    lines += [printable(f"  {t.requirement}  <- {t.origin}") for t in inputs.union.requirements]
    for status in inputs.selection.plugins:
        declaration = status.plugin.declaration
        for excluded in declaration.excluded if declaration else ():
            lines.append(printable(f"  not installed: {excluded.requirement} <- plugin {status.plugin.key!r}: "
                                   f"{excluded.reason}"))
    notes = list(inputs.selection.notices) + [w for s in inputs.selection.plugins for w in s.plugin.warnings]
    if notes:
        lines += ["", "notices:"] + [f"  {paint('!', 'yellow')} {printable(n)}" for n in notes]
    return "\n".join(lines)
