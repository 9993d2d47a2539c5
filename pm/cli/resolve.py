"""``hermes pm resolve [--with NAME]``: a dry run of core + selection (+ candidate); installs nothing."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ..errors import EXIT_CONFLICT
from ..ops.resolve import resolve
from ..receipt import Receipt
from ._common import home_of, options_from
from ._output import emit_json, paint, reporter_for, say, table, tell_failure, tell_receipt, tell_steps

if TYPE_CHECKING:
    from ..inputs import Inputs
    from ..resolver import Resolution


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--with", dest="candidate", metavar="NAME", help="also resolve this plugin, as if enabled")


def run(args: argparse.Namespace) -> int:
    done = resolve(home_of(args), options_from(args), reporter_for(args.json or args.quiet), candidate=args.candidate)
    if args.json:
        emit_json(done.receipt.as_written())
        return done.code
    tell_resolved(done.receipt)
    if done.resolution is not None and done.inputs is not None:
        print(render(done.inputs, done.resolution, done.receipt.extra.get("seconds", 0.0)))
        for warning in done.resolution.warnings:
            say(f"warning: {warning}")
    tell_receipt(done.receipt)
    return done.code


def tell_resolved(receipt: Receipt) -> None:
    """A conflict or a failure of the resolve step, for a person (nothing when it resolved)."""
    if receipt.exit_code == EXIT_CONFLICT and receipt.conflict is not None:
        tell_conflict(receipt)
    elif receipt.failure is not None:
        tell_failure(receipt)
        if receipt.failure["kind"] == "index":
            say("this is a failure to fetch, not a verdict on your plugins: nothing was changed")
        elif receipt.failure["kind"] == "missing-project":
            say("this is not a conflict between plugins: a required project does not exist where pm looked; "
                "nothing was changed")
            tell_steps(receipt.next_steps)


def tell_conflict(receipt: Receipt) -> None:
    assert receipt.conflict is not None
    plugins = receipt.conflict["plugins"]
    candidate = plugins[0] if receipt.candidate and plugins else None  # the candidate is named first
    lead = (f"plugin {candidate!r} cannot be added" if candidate
            else "the selected plugins cannot live together in one environment")
    say(f"{paint('conflict', 'red', sys.stderr)}: {lead}")
    say(f"  {receipt.conflict['message']}")
    tell_steps(receipt.next_steps)


def render(inputs: Inputs, resolution: Resolution, seconds: float) -> str:
    members = len(inputs.union.members)
    head = (f"resolved {len(resolution.pins)} packages for core + {members} plugin(s) "
            f"(Python {inputs.target.python_full_version}, {inputs.target.platform}) in {seconds:.2f}s")
    rows = []
    for pin in resolution.pins:
        who = ", ".join(dict.fromkeys("core" if o.is_core else o.plugin or "" for o in pin.required_by))
        rows.append([pin.name, str(pin.version), who])
    return head + "\n" + table(rows, ["package", "version", "required by"])
