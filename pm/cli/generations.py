"""``hermes pm generations`` and ``hermes pm diff A B``: the environment's history (the data:
:mod:`pm.env.history`).

Both only read (no lock, no inputs, no resolver, no receipt unless they fail): ``state.json``, the
generations folder and each ``generation.json``, and each generation's site-packages listing
(``generations``: whether it is intact). They are not answered by :mod:`pm.cli.shortcut`: reading
those records costs what checking that they are unchanged would.
"""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import Any

from pm.base.errors import EXIT_OK
from pm.base.names import printable
from pm.cli._common import home_of
from pm.cli._output import emit_json, paint, say, table
from pm.env.generations import Generation
from pm.env.history import Changes, Entry, entries, find
from pm.inputs.settings import environment_home


def run(args: argparse.Namespace) -> int:
    home = environment_home(home_of(args))
    listed, incomplete = entries(home)
    if args.json:
        emit_json({"home": str(home), "generations": [e.to_json() for e in listed], "incomplete": incomplete})
        return EXIT_OK
    if not listed:
        say(f"{home}: no generations yet (run `hermes pm sync`)")
    else:
        print(table([_row(e) for e in listed], ["generation", "built", "role", "packages", "changes", "selection"]))
    for entry in listed:
        if entry.problems:
            say(f"! {entry.generation.id} is damaged: {'; '.join(entry.problems)}")
    if incomplete:
        say(f"{len(incomplete)} incomplete generation folder(s) not listed (removed by the next sync or gc): "
            f"{', '.join(incomplete)}")
    return EXIT_OK


def _row(entry: Entry) -> list[str]:
    found = entry.generation
    role = entry.role or ("damaged" if entry.problems else "")
    return [found.id, built(found), role, str(len(found.pins)),
            "-" if entry.changes is None else entry.changes.summary(), selection_of(found)]


def built(generation: Generation) -> str:
    """When ``generation`` was built, to the second, in UTC (``?`` when its record does not say)."""
    try:
        return datetime.fromisoformat(generation.created_at or "").strftime("%Y-%m-%d %H:%M:%S UTC")
    except ValueError:
        return "?"


def selection_of(generation: Generation) -> str:
    """The plugin selection ``generation`` was built from, home by home: ``home: a, b; profile work: c``."""
    saved = generation.selection
    if saved is None:
        return "selection unknown"
    return "; ".join(f"{home.label}: {', '.join(printable(n) for n in home.selects()) or '(none)'}" for home in saved)


class Diff:
    """``hermes pm diff A B``: the package changes from generation A to generation B."""

    @staticmethod
    def configure(parser: argparse.ArgumentParser) -> None:
        for name in ("a", "b"):
            parser.add_argument(name, metavar=name.upper(),
                                help="a generation: its id, a prefix only it has, selected or previous")

    @staticmethod
    def run(args: argparse.Namespace) -> int:
        home = environment_home(home_of(args))
        old, new = find(home, args.a), find(home, args.b)
        changes = Changes.between(old.pins, new.pins)
        if args.json:
            emit_json({"from": _side(old), "to": _side(new), **changes.to_json()})
            return EXIT_OK
        say(f"generation {old.id} -> {new.id}")
        for line in changes.lines():
            print(paint(line, "green" if line.startswith("+") else "red" if line.startswith("-") else "yellow"))
        if changes.empty:
            say("no package changes")
        before, after = selection_of(old), selection_of(new)
        if before != after:
            say(f"selection: {after} (was {before})")
        return EXIT_OK


def _side(generation: Generation) -> dict[str, Any]:
    saved = generation.selection
    return {"id": generation.id, "created_at": generation.created_at, "packages": len(generation.pins),
            "selection": None if saved is None else [h.to_json() for h in saved]}
