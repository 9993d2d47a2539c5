"""What ``hermes pm resolve`` prints of a resolution, read from its finished receipt: the one
rendering for a resolution found now, reused from the cache, or answered by :mod:`pm.cli.shortcut`."""

from __future__ import annotations

import sys
from typing import Any

from pm.cli import _lean
from pm.cli._output import paint, say, table, terminal_safe


def render(data: dict[str, Any], *, elapsed: str | None = None) -> str:
    """The head line and the package table of a finished receipt that holds a resolution (with
    ``elapsed`` in place of its duration: the shortcut's placeholder)."""
    packages = data["resolution"]["packages"]
    members = len({p["name"] for p in data["inputs"]["plugins"] if p["status"] == "member"})
    target = data["target"]
    head = (f"resolved {len(packages)} packages for core + {members} plugin(s) "
            f"(Python {target['python']}, {target['platform']}) in {_lean.elapsed(data.get('seconds', 0.0)) if elapsed is None else elapsed}"
            + (" (inputs unchanged: answered from the last resolve)" if data.get("shortcut") else ""))
    rows = [[p["name"], p["version"], ", ".join(dict.fromkeys(_who(o) for o in p["required_by"]))]
            for p in packages]
    # plugin names come from folder names: escaped, so that none can drive the terminal
    return terminal_safe(head + "\n" + table(rows, ["package", "version", "required by"]) + _moves(data))


def _moves(data: dict[str, Any]) -> str:
    """The pins of the selected generation this resolution moves, each with why (none: "")."""
    from pm.records.changes import reasons

    moved = [c for c in data.get("changes") or () if c.get("from") and c.get("to")]
    lines = [f"  {c['package']} {c['from']} -> {c['to']}" + (f"  ({why})" if (why := reasons(c)) else "")
             for c in moved]
    return "\nmoves from the selected generation:\n" + "\n".join(lines) if lines else ""


def show(data: dict[str, Any], warnings: list[str]) -> None:
    """A resolution for a person: the table on stdout, the resolver's ``warnings`` on stderr."""
    print(render(data))
    for warning in warnings:
        say(f"{paint('warning', 'yellow', sys.stderr)}: {warning}")


def _who(origin: dict[str, Any]) -> str:
    return "core" if origin["kind"] == "core" else str(origin.get("plugin") or "")
