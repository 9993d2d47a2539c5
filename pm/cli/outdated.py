"""``hermes pm outdated [--all] [--json]``: per pin of the selected generation, the version an upgrade
would take, the newest release for the target, and who holds it back (the operation:
:mod:`pm.ops.outdated`; this only renders its report). By default only the pins where something is
newer or an upgrade would move them, as ``pip list --outdated`` and ``uv pip list --outdated``
show; ``--all`` shows every pin. ``--json`` prints the receipt, the report in its ``outdated``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pm.cli._common import home_of, options_from
from pm.cli._output import emit_json, paint, reporter_for, say, table, tell_receipt, terminal_safe
from pm.cli.resolve import tell_resolved
from pm.ops.outdated import PinStatus, outdated


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--all", action="store_true", help="every pin, not only those with something newer")
    parser.set_defaults(candidate=None)


def run(args: argparse.Namespace) -> int:
    done = outdated(home_of(args), options_from(args), reporter_for(args.json or args.quiet))
    if args.json:
        emit_json(done.receipt.as_written())
        return done.code
    if done.report is None:
        tell_resolved(done.receipt)
        return done.code
    shown = done.report.pins if args.all else done.report.shown
    if shown:
        print(render(shown, done.receipt.home, dict(done.report.advisories)))
    for warning in dict.fromkeys(done.receipt.warnings):
        say(f"{paint('warning', 'yellow', sys.stderr)}: {warning}")
    say(str(done.receipt.extra["message"]))
    tell_receipt(done.receipt)
    return done.code


def render(pins: tuple[PinStatus, ...], home: Path, advisories: dict[str, tuple[str, ...]] | None = None) -> str:
    """The table: one row per pin, each further holder on a line of its own under the first; an
    ``advisories`` column (the ids an earlier ``hermes pm audit`` cached) when a shown pin has one."""
    badges = {name: ", ".join(ids) for name, ids in (advisories or {}).items() if any(p.name == name for p in pins)}
    rows: list[list[str]] = []
    for pin in pins:
        said = pin.held_by(home)
        badge = [badges.get(pin.name, "")] if badges else []
        rows.append([pin.name, str(pin.pinned), "-" if pin.upgrade is None else str(pin.upgrade),
                     "-" if pin.newest is None else str(pin.newest), *badge, said[0] if said else ""])
        rows += [["", "", "", "", *([""] if badges else []), more] for more in said[1:]]
    headers = ["package", "pinned", "upgrade", "newest", *(["advisories"] if badges else []), "held back by"]
    # requirement texts and plugin names come from other people's files: escaped for the terminal
    return terminal_safe(table(rows, headers))
