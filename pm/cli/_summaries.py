"""What ``hermes pm sync`` and ``hermes pm check`` print when they end well, and what a refusal
prints, read from their finished receipts: the one rendering for an answer found now or given by :mod:`pm.cli.shortcut`
(which loads this before the rest of pm: only :mod:`pm.cli._output` and the sentences of
:mod:`pm.ops.messages` are imported here)."""

from __future__ import annotations

import sys
from typing import Any

from pm.cli._output import paint, say_error, table, tell_steps
from pm.ops.messages import refusal_lead


def tell_refusal(conflict: dict[str, Any], candidate: str | None, next_steps: list[dict[str, Any]]) -> None:
    """A conflict for a person (stderr): who cannot be added, why, and the next steps."""
    say_error(f"{paint('conflict', 'red', sys.stderr)}: {refusal_lead(conflict, candidate)}")
    say_error(f"  {conflict['message']}")
    tell_steps(next_steps)


def synced(data: dict[str, Any]) -> list[str]:
    """The lines (for stderr) of a sync that selected a generation: what it did and which
    generation is selected (one line, with its path), and whether running processes must restart."""
    gen = data["generation"]
    message = str(data.get("message", ""))
    lines = [f"{message} ({gen['path']})" if gen["id"] in message else f"{message}: generation {gen['id']} ({gen['path']})"]
    if gen["restart_required"]:
        lines.append("running hermes processes keep their generation until they restart")
    return lines


def readiness(data: dict[str, Any]) -> str:
    """The verdict and the table of a finished check receipt (its ``readiness`` and ``generation``)."""
    judged = data["readiness"]
    if data.get("generation") is None:
        return f"{paint('not ready', 'red')}: " + "; ".join(judged["problems"])
    head = paint("ready", "green") if judged["ready"] else paint("not ready", "red")
    lines = [f"{head}: generation {data['generation']['id']}"]
    lines += [f"  {p}" for p in judged["problems"]]
    rows = [[v["name"], "ready" if v["ready"] else "NOT READY", v["detail"]] for v in judged["plugins"]]
    lines.append(table(rows, ["origin", "verdict", "reason"]))
    return "\n".join(lines)
