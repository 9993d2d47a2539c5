"""``hermes pm check [--with NAME]``: readiness of the selected generation; no network, no install.

Exit 0 when every declared requirement of core and of each member is satisfied by the installed
metadata of the selected generation and the inputs have not changed since it was built; 4 when
not. ``--with NAME`` also judges a plugin that is not (yet) enabled and, when the generation does
not satisfy it, dry-runs whether preparing it would resolve (the only step that may use the index).
"""

from __future__ import annotations

import argparse
from typing import Any

from .. import generations
from ..commands import hermes
from ..errors import EXIT_NOT_READY, EXIT_OK
from ..generations import Generation
from ..ops.transaction import Transaction, transaction
from ..readiness import Readiness, Verdict, check
from ..receipt import Receipt
from ._common import home_of, options_from
from ._output import emit_json, paint, table, tell_failed, tell_receipt
from .resolve import tell_resolved


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--with", dest="candidate", metavar="NAME",
                        help="also judge this plugin; when not ready, dry-run whether preparing it would resolve")


def run(args: argparse.Namespace) -> int:
    options = options_from(args)
    tried: list[Receipt] = []  # the candidate's dry run, when one was needed
    txn = transaction(home_of(args), "check", lambda txn: _check(txn, args.candidate, tried), options,
                      lock=False, candidate=args.candidate, gather_inputs=False)
    receipt = txn.receipt
    if txn.value is None:
        tell_failed(receipt, args.json)
        return receipt.exit_code
    if args.json:
        emit_json(receipt.as_written())
        return receipt.exit_code
    readiness, candidate = txn.value
    for dry_run in tried:
        tell_resolved(dry_run)  # the conflict above the verdict
    print(render(readiness))
    if candidate is not None:
        print(render_candidate(candidate))
    tell_receipt(receipt)
    return receipt.exit_code


def _check(txn: Transaction, name: str | None, tried: list[Receipt]) -> tuple[Readiness, dict[str, Any] | None]:
    """Judge the selected generation (and the candidate ``name``); finishes the receipt."""
    receipt, home = txn.receipt, txn.home
    generation = generations.selected(home)
    readiness = check(txn.gather(), generation)  # the selection as it is; the candidate is judged apart
    receipt.generation = generation.to_receipt(selected=True, restart_required=False) if generation else None
    if generation is not None:  # what the checked environment holds: every file, for declarative builds
        receipt.resolution = generation.record["resolution"]
    receipt.extra["readiness"] = readiness.to_json()
    ready = readiness.ready
    candidate = None
    if name:
        candidate = judge_candidate(txn, name, generation, readiness, tried)
        receipt.extra["readiness"]["candidate"] = candidate
        ready = ready and candidate["ready"]
    if not ready:
        receipt.step(hermes("pm", "sync", home=txn.options.shown_home),
                     "build a generation that satisfies every declared requirement")
    txn.finish("ok" if ready else "not-ready", EXIT_OK if ready else EXIT_NOT_READY)
    return readiness, candidate


def judge_candidate(txn: Transaction, name: str, generation: Generation | None,
                    readiness: Readiness, tried: list[Receipt]) -> dict[str, Any]:
    """The candidate's verdict from installed metadata; when unmet, whether it would resolve."""
    from ..inputs import gather
    from ..ops.resolve import check_candidate, resolve

    verdict = readiness.verdict(name)
    inputs = None
    if verdict is None:
        inputs = gather(txn.home, txn.options.flags, candidate=name)
        check_candidate(inputs, name)
        verdict = check(inputs, generation).verdict(name)
    assert verdict is not None
    satisfied = generation is not None and not verdict.unmet
    data: dict[str, Any] = {"name": verdict.name, "enabled": inputs is None, "ready": satisfied,
                            "unmet": list(verdict.unmet), "would_resolve": None}
    if not satisfied and inputs is not None:
        dry_run = resolve(txn.home, txn.options, candidate=name)
        data["would_resolve"] = dry_run.code == EXIT_OK
        data["resolve_receipt"] = None if dry_run.receipt.path is None else str(dry_run.receipt.path)
        tried.append(dry_run.receipt)
    return data


def render(readiness: Readiness) -> str:
    if readiness.generation is None:
        return f"{paint('not ready', 'red')}: " + "; ".join(readiness.problems)
    head = paint("ready", "green") if readiness.ready else paint("not ready", "red")
    lines = [f"{head}: generation {readiness.generation.id}"]
    lines += [f"  {p}" for p in readiness.problems]
    rows = [[v.name, _shown(v), v.reason()] for v in readiness.verdicts]
    lines.append(table(rows, ["origin", "verdict", "reason"]))
    return "\n".join(lines)


def _shown(verdict: Verdict) -> str:
    return "ready" if verdict.ready else "NOT READY"


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
