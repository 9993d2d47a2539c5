"""``hermes pm check [--with NAME]``: readiness of the selected generation; no network, no install.

Exit 0 when every declared requirement of core and of each member is satisfied by the installed
metadata of the selected generation and the inputs have not changed since it was built; 4 when
not. ``--with NAME`` also judges a plugin that is not (yet) enabled and, when the generation does
not satisfy it, dry-runs whether preparing it would resolve (the only step that may use the index).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .. import generations
from ..errors import EXIT_NOT_READY, EXIT_OK
from ..generations import Generation
from ..inputs import gather
from ..readiness import Readiness, Verdict, check
from ._common import flags_from, home_of, start_receipt
from ._output import emit_json, paint, say, table


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--with", dest="candidate", metavar="NAME",
                        help="also judge this plugin; when not ready, dry-run whether preparing it would resolve")


def run(args: argparse.Namespace) -> int:
    home = home_of(args)
    inputs = gather(home, flags_from(args))
    generation = generations.selected(home)
    readiness = check(inputs, generation)
    receipt = start_receipt("check", inputs, args.candidate)
    receipt.generation = generation.to_receipt(selected=True, restart_required=False) if generation else None
    if generation is not None:  # what the checked environment holds: every file, for declarative builds
        receipt.resolution = generation.record["resolution"]
    receipt.extra["readiness"] = readiness.to_json()
    ready = readiness.ready
    candidate = None
    if args.candidate:
        candidate = judge_candidate(home, args, generation, readiness)
        receipt.extra["readiness"]["candidate"] = candidate
        ready = ready and candidate["ready"]
    code = EXIT_OK if ready else EXIT_NOT_READY
    if not ready:
        receipt.step("hermes pm sync" + (f" --home {home}" if args.home else ""),
                     "build a generation that satisfies every declared requirement")
    receipt.finish("ok" if ready else "not-ready", code)
    if args.json:
        emit_json(receipt.as_written())
        return code
    print(render(readiness))
    if candidate is not None:
        print(render_candidate(candidate))
    if receipt.path is not None:
        say(f"receipt: {receipt.path}")
    return code


def judge_candidate(home: Path, args: argparse.Namespace, generation: Generation | None,
                    readiness: Readiness) -> dict[str, Any]:
    """The candidate's verdict from installed metadata; when unmet, whether it would resolve."""
    from .resolve import check_candidate, resolve_with_receipt

    name = args.candidate
    verdict = readiness.verdict(name)
    if verdict is None:
        inputs = gather(home, flags_from(args), candidate=name)
        check_candidate(inputs, name)
        verdict = check(inputs, generation).verdict(name)
    else:
        inputs = None
    assert verdict is not None
    satisfied = generation is not None and not verdict.unmet
    data: dict[str, Any] = {"name": verdict.name, "enabled": inputs is None, "ready": satisfied,
                            "unmet": list(verdict.unmet), "would_resolve": None}
    if not satisfied and inputs is not None:
        sub = start_receipt("resolve", inputs, name)
        resolved, _ = resolve_with_receipt(inputs, sub, args)
        data["would_resolve"] = resolved == EXIT_OK
        data["resolve_receipt"] = None if sub.path is None else str(sub.path)
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
