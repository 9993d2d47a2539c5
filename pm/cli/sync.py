"""``hermes pm sync``: resolve, build and select a generation (a no-op when the fingerprint matches).

``--from FILE`` (a receipt, a ``generation.json`` or a ``pylock.toml``) is a frozen sync: it builds
exactly the files FILE names (``--find-links`` folders may supply them offline, matched by
filename and sha256), after checking that the home's inputs are still those FILE was made for
(refused, exit 1, unless ``--ignore-inputs``). The transaction is :mod:`pm.ops.sync`.
"""

from __future__ import annotations

import argparse
import sys

from pm.base.errors import EXIT_OK, UsageError
from pm.base.watch import Watch
from pm.cli._changes import tell_changes
from pm.cli._common import add_lock_option, add_skip_invalid, add_upgrade_options, home_of, options_from
from pm.cli._output import emit_json, failed_early, paint, reporter_for, say, tell_failure, tell_receipt, tell_steps
from pm.cli._summaries import synced
from pm.cli.resolve import tell_resolved
from pm.cli.shortcut import remember_plain
from pm.ops.sync import ALREADY, sync, sync_from
from pm.records.receipt import Receipt


def configure(parser: argparse.ArgumentParser) -> None:
    add_lock_option(parser)
    add_skip_invalid(parser)
    add_upgrade_options(parser)
    parser.add_argument("--from", dest="from_file", metavar="FILE",
                        help="build exactly the files of FILE (a receipt, generation.json or pylock.toml); "
                             "no resolution")
    parser.add_argument("--ignore-inputs", action="store_true",
                        help="with --from: build even if the plugins, core or target changed since FILE was made")
    parser.add_argument("--allow-unmet", action="store_true",
                        help="with --from and --ignore-inputs: build even if FILE's pins break core's lock or a "
                             "plugin's declared ranges")
    parser.set_defaults(candidate=None)


def run(args: argparse.Namespace) -> int:
    home, reporter, watch = home_of(args), reporter_for(args.json or args.quiet), Watch()
    if getattr(args, "from_file", None):
        if args.upgrade or args.upgrade_package:
            raise UsageError("--upgrade and --upgrade-package resolve; --from builds exactly the files of FILE "
                             "and resolves nothing: use one or the other")
        done = sync_from(home, args.from_file, options_from(args, watch=watch), reporter,
                         ignore_inputs=args.ignore_inputs, allow_unmet=args.allow_unmet)
    else:
        done = sync(home, options_from(args, watch=watch), reporter)
    watch.code("packaging", "yaml")
    tell_changes(args, done.receipt)
    report(done.receipt, json_output=args.json)
    written = done.receipt.written
    if done.code == EXIT_OK and written is not None and written.get("message") == ALREADY:
        remember_plain(args, "sync", watch.seen, written, done.receipt.warnings)  # the next no-op, from memory
    return done.code


def report(receipt: Receipt, *, json_output: bool) -> None:
    """The person's summary on stderr, or the receipt (plus its path) on stdout with ``--json``."""
    if failed_early(receipt, json_output):
        return
    if json_output:
        emit_json(receipt.as_written())
        return
    tell_synced(receipt)
    for warning in receipt.warnings:
        say(f"{paint('warning', 'yellow', sys.stderr)}: {warning}")
    tell_receipt(receipt)


def tell_synced(receipt: Receipt) -> None:
    """What a sync did: the selected generation, or the conflict, refusal or failure."""
    if receipt.exit_code == EXIT_OK and receipt.generation is not None and receipt.written is not None:
        for line in synced(receipt.written):
            say(line)
    elif receipt.failure is not None and receipt.failure["kind"] in ("inputs-changed", "no-inputs", "unmet-requirements"):
        tell_failure(receipt)  # refused: …, then the commands that go on
        tell_steps(receipt.next_steps, header=False)
    elif receipt.failure is not None and "message" in receipt.extra:
        tell_failure(receipt)
        say(receipt.extra["message"])
        if receipt.failure["kind"] == "invalid-declaration":  # fix or disable it, or go on without it
            tell_steps(receipt.next_steps)
    else:
        tell_resolved(receipt)
