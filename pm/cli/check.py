"""``hermes pm check [--with NAME]``: readiness of the selected generation; no network, no install."""

from __future__ import annotations

import argparse

from .. import generations
from ..errors import EXIT_NOT_READY, EXIT_OK
from ..inputs import gather
from ..readiness import Readiness, check
from ._common import flags_from, home_of, start_receipt
from ._output import emit_json, paint, say, table
from .resolve import check_candidate, resolve_with_receipt

HELP = "is every declared requirement installed in the selected generation? (no network, no install)"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--with", dest="candidate", metavar="NAME",
                        help="also judge this plugin; when not ready, dry-run whether preparing it would resolve")


def run(args: argparse.Namespace) -> int:
    home = home_of(args)
    inputs = gather(home, flags_from(args), candidate=args.candidate)
    receipt = start_receipt("check", inputs, args.candidate)
    generation = generations.selected(home)
    readiness = check(inputs, generation)
    receipt.generation = generation.to_receipt(selected=True, restart_required=False) if generation else None
    receipt.extra["readiness"] = {"ready": readiness.ready, "inputs_changed": readiness.inputs_changed,
                                  "problems": list(readiness.problems),
                                  "plugins": [v.to_json() for v in readiness.verdicts]}
    code = EXIT_OK if readiness.ready else EXIT_NOT_READY
    if not readiness.ready:
        receipt.step("hermes pm sync" + (f" --home {home}" if args.home else ""),
                     "build a generation that satisfies every declared requirement")
    would = None
    if args.candidate and not readiness.ready:
        check_candidate(inputs, args.candidate)
        sub = start_receipt("resolve", inputs, args.candidate)
        resolved, _ = resolve_with_receipt(inputs, sub, args)
        would = resolved == EXIT_OK
        receipt.extra["candidate_would_resolve"] = would
    receipt.finish("ok" if readiness.ready else "not-ready", code)
    if args.json:
        emit_json(receipt.to_json("ok" if readiness.ready else "not-ready", code))
    else:
        print(render(readiness))
        if would is not None:
            print(f"preparing {args.candidate!r} would {'resolve' if would else 'NOT resolve (see the conflict above)'}")
        if receipt.path is not None:
            say(f"receipt: {receipt.path}")
    return code


def render(readiness: Readiness) -> str:
    if readiness.generation is None:
        return "not ready: " + "; ".join(readiness.problems)
    head = paint("ready", "green") if readiness.ready else paint("not ready", "red")
    lines = [f"{head}: generation {readiness.generation.id}"]
    lines += [f"  {p}" for p in readiness.problems]
    rows = [[v.name, "ready" if v.ready else "NOT READY", v.reason()] for v in readiness.verdicts]
    lines.append(table(rows, ["origin", "verdict", "reason"]))
    return "\n".join(lines)
