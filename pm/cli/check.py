"""``hermes pm check [--with NAME]``: readiness of the selected generation; no network, no install
(the operation: :mod:`pm.ops.check`). Exit 0 ready, 4 not ready."""

from __future__ import annotations

import argparse
from typing import Any

from pm.base.watch import Watch
from pm.cli._common import home_of, options_from
from pm.cli._output import emit_json, reporter_for, tell_failed, tell_receipt
from pm.cli._summaries import readiness
from pm.cli.resolve import tell_resolved
from pm.cli.shortcut import remember_plain
from pm.ops.check import check


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--with", dest="candidate", metavar="NAME",
                        help="also judge this plugin; when not ready, dry-run whether preparing it would resolve")


def run(args: argparse.Namespace) -> int:
    watch = Watch()
    done = check(home_of(args), options_from(args, watch=watch), reporter_for(args.json or args.quiet),
                 candidate=args.candidate)
    watch.code("packaging", "yaml")
    receipt = done.receipt
    if done.readiness is not None and args.candidate is None:  # --with may resolve: never from memory
        remember_plain(args, "check", watch.seen, receipt.written, [])
    if done.readiness is None:
        tell_failed(receipt, args.json)
        return done.code
    if args.json:
        emit_json(receipt.as_written())
        return done.code
    if done.dry_run is not None:
        tell_resolved(done.dry_run)  # the conflict above the verdict
    assert receipt.written is not None
    print(readiness(receipt.written))
    if done.candidate is not None:
        print(render_candidate(done.candidate))
    tell_receipt(receipt)
    return done.code


def render_candidate(candidate: dict[str, Any]) -> str:
    name = candidate["name"]
    if candidate["ready"]:
        where = "" if candidate["enabled"] else " (not enabled yet)"
        return f"plugin {name!r}{where}: every requirement is installed in the selected generation"
    line = f"plugin {name!r}: not ready: " + ("; ".join(candidate["unmet"]) or "no generation is selected")
    if candidate["would_resolve"] is True:
        line += f"\npreparing {name!r} would resolve: run `hermes plugins enable {name}`"
    elif candidate["would_resolve"] is False:
        line += f"\npreparing {name!r} would NOT resolve (see the conflict above)"
    return line
