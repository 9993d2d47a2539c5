"""The sentences that tell a person how an operation ended, read from its receipt: written once
here, so the CLI (which paints and prints them) and the host's dashboard (which shows them in a
page) say the same thing. Pure: no I/O, no pm imports (the CLI's shortcut path loads this early)."""

from __future__ import annotations

from typing import Any

#: What an admission refused for a conflict leaves as it was.
NOTHING_CHANGED = "config.yaml was not changed; the selected generation is unchanged"


def refusal_lead(conflict: dict[str, Any], candidate: str | None) -> str:
    """Who cannot be added (the candidate is named first in ``conflict["plugins"]``), or that the
    selection as a whole cannot live together."""
    plugins = conflict["plugins"]
    named = plugins[0] if candidate and plugins else None
    return (f"plugin {named!r} cannot be added" if named
            else "the selected plugins cannot live together in one environment")


def failure_said(outcome: str, failure: dict[str, Any] | None) -> tuple[str, str]:
    """``(lead, message)`` of a failed or refused operation: ``refused`` when the outcome is a
    refusal (managed environment, catalog, still enabled …), else ``error``."""
    message = str((failure or {}).get("message", ""))
    lead = "refused" if outcome == "refused" else "error"
    if lead == "refused" and message.startswith("refused: "):
        message = message.removeprefix("refused: ")
    return lead, message
