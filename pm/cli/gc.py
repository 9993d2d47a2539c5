"""``hermes pm gc`` and ``hermes pm rollback`` (the operations: :mod:`pm.ops.gc`)."""

from __future__ import annotations

import argparse
from typing import Any

from pm.base.errors import EXIT_OK
from pm.base.names import printable
from pm.cli._changes import tell_changes
from pm.cli._common import add_lock_option, home_of, options_from
from pm.cli._output import emit_json, failed_early, reporter_for, say, tell_failed, tell_receipt
from pm.ops.gc import gc, rollback


def configure(parser: argparse.ArgumentParser) -> None:
    add_lock_option(parser)


def run(args: argparse.Namespace) -> int:
    receipt = gc(home_of(args), options_from(args), reporter_for(args.json or args.quiet)).receipt
    removed, kept = receipt.extra.get("removed", []), receipt.extra.get("kept", {})
    if failed_early(receipt, args.json):
        return receipt.exit_code
    if args.json:
        emit_json(receipt.as_written())
        return receipt.exit_code
    say(f"removed {len(removed)} generation(s)" + (f": {', '.join(removed)}" if removed else ""))
    for gid, why in kept.items():
        say(f"kept {gid} ({why})")
    tell_receipt(receipt)
    return EXIT_OK


class Rollback:
    """``hermes pm rollback [--to ID]``: an earlier generation again, after verifying it, with the
    plugin selection it was built from."""

    @staticmethod
    def configure(parser: argparse.ArgumentParser) -> None:
        configure(parser)
        parser.add_argument("--to", metavar="ID", help="the generation to go back to: its id, a prefix only it has, "
                                                      "or previous (the default); `hermes pm generations` lists them")

    @staticmethod
    def run(args: argparse.Namespace) -> int:
        receipt = rollback(home_of(args), options_from(args), reporter_for(args.json or args.quiet), to=args.to).receipt
        code = receipt.exit_code
        if receipt.failure is not None and receipt.failure["kind"] not in ("rollback", "unknown-generation"):
            tell_failed(receipt, args.json)  # says where the receipt went
            return code
        if args.json:
            emit_json(receipt.as_written())
        elif code == EXIT_OK:
            tell_changes(args)
            tell_restored(receipt.extra.get("rollback", {}).get("configs", []))
            gen = receipt.generation or {"id": "?", "restart_required": True}
            say(f"generation {gen['id']} is selected again; running hermes processes keep theirs until they restart"
                if gen["restart_required"] else f"generation {gen['id']} stays selected")
            for warning in receipt.warnings:
                say(f"warning: {warning}")
        else:
            say(f"error: cannot roll back: {receipt.failure['message'] if receipt.failure else '?'}")
        if not args.json:
            tell_receipt(receipt)  # every command says where its receipt went, as the others do
        return code


def tell_restored(configs: list[dict[str, Any]]) -> None:
    """One line per key a rollback wrote back: ``<config>: plugins.enabled [a, b] (was [a, b, c])``."""
    for config in configs:
        for key, change in config["changed"].items():
            say(f"{config['config']}: {key} {_value(change['to'])} (was {_value(change['from'])})")


def _value(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(printable(v) for v in value) + "]"
    return "unset" if value is None else printable(str(value))
