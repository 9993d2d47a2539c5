"""``hermes pm scan``: every plugin root, its status and reason, requirements with origins.
Parses, runs :func:`pm.ops.scan.scan` and prints its report (``--json``) or a table."""

from __future__ import annotations

import argparse

from pm.base.names import printable
from pm.cli._common import home_of, options_from
from pm.cli._output import emit_json, paint, table, tell_failed
from pm.inputs.collect import Inputs
from pm.inputs.selection import Status
from pm.ops.scan import report, scan


def run(args: argparse.Namespace) -> int:
    result = scan(home_of(args), options_from(args))
    if result.inputs is None:  # the primary config is unreadable
        tell_failed(result.receipt, args.json)
        return result.code
    if args.json:
        emit_json(report(result.inputs))
    else:
        print(render(result.inputs))
    return result.code


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
