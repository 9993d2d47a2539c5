"""What ``hermes pm resolve`` prints of a resolution, read from its finished receipt: the one
rendering for a resolution found now, reused from the cache, or answered by :mod:`pm.cli.shortcut`."""

from __future__ import annotations

import sys
from typing import Any

from pm.cli._output import paint, say, table, terminal_safe


def render(data: dict[str, Any]) -> str:
    """The head line and the package table of a finished receipt that holds a resolution."""
    packages = data["resolution"]["packages"]
    members = len({p["name"] for p in data["inputs"]["plugins"] if p["status"] == "member"})
    target = data["target"]
    head = (f"resolved {len(packages)} packages for core + {members} plugin(s) "
            f"(Python {target['python']}, {target['platform']}) in {_elapsed(data.get('seconds', 0.0))}"
            + (" (inputs unchanged: answered from the last resolve)" if data.get("shortcut") else ""))
    rows = [[p["name"], p["version"], ", ".join(dict.fromkeys(_who(o) for o in p["required_by"]))]
            for p in packages]
    # plugin names come from folder names: escaped, so that none can drive the terminal
    return terminal_safe(head + "\n" + table(rows, ["package", "version", "required by"]))


def _elapsed(seconds: float) -> str:
    """``1.23s``, or ``4 ms`` under a tenth of a second (a shortcut's answer is not "0.00s")."""
    return f"{seconds * 1000:.0f} ms" if seconds < 0.1 else f"{seconds:.2f}s"


def show(data: dict[str, Any], warnings: list[str]) -> None:
    """A resolution for a person: the table on stdout, the resolver's ``warnings`` on stderr."""
    print(render(data))
    for warning in warnings:
        say(f"{paint('warning', 'yellow', sys.stderr)}: {warning}")


def _who(origin: dict[str, Any]) -> str:
    return "core" if origin["kind"] == "core" else str(origin.get("plugin") or "")
