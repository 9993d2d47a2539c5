"""``hermes pm sync``: resolve, build and select a generation (a no-op when the fingerprint matches).

The no-op path (same fingerprint, selected generation intact) reads the inputs, one ``state.json``,
one ``generation.json`` and one site-packages listing, then writes its receipt: no resolver, no uv.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import generations
from ..errors import EXIT_FAILURE, EXIT_OK, PmError
from ..inputs import Inputs, gather
from ..lock import home_lock
from ..receipt import Receipt
from ..store import Store
from ..uv import Uv
from ._common import cache_dir, flags_from, home_of, start_receipt
from ._output import emit_json, paint, say

if TYPE_CHECKING:
    from ..resolver import Resolution

HELP = "resolve, build and select a generation (no-op when nothing changed)"
ALREADY = "already in sync"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lock-timeout", type=float, default=600.0, metavar="SECONDS",
                        help="give up waiting for another pm process after SECONDS (default 600)")
    parser.set_defaults(candidate=None)


def progress_for(args: argparse.Namespace) -> Callable[[str], None]:
    """Progress lines on stderr for long steps: only on a terminal, never with ``--json``."""
    if getattr(args, "json", False) or not sys.stderr.isatty():
        return lambda message: None
    return lambda message: say(paint(f"… {message}", "dim", sys.stderr))


def run(args: argparse.Namespace) -> int:
    home = home_of(args)
    store = Store.for_home(home)
    with home_lock(home, store, timeout=args.lock_timeout, notify=say):
        inputs = gather(home, flags_from(args))
        receipt = start_receipt("sync", inputs)
        code = sync(inputs, receipt, store, args)
    report(receipt, code, args)
    return code


def sync(inputs: Inputs, receipt: Receipt, store: Store, args: argparse.Namespace) -> int:
    """The sync transaction; the caller holds the home lock. Finishes the receipt.

    Selection changes only at the very end (one atomic replace of ``state.json``); any failure
    before it leaves the previous selection in force and removes the unfinished generation.
    """
    home = inputs.home
    removed = generations.remove_incomplete(home, store)
    if removed:
        receipt.warnings.append(f"removed unfinished generation(s) left by an interrupted run: {', '.join(removed)}")
    current = generations.selected(home)
    if current is not None and current.fingerprint == inputs.fingerprint:
        damage = current.problems()
        if not damage:
            receipt.generation = current.to_receipt(selected=True, restart_required=False)
            receipt.extra["message"] = ALREADY
            receipt.finish("ok", EXIT_OK)
            return EXIT_OK
        receipt.warnings.append(f"generation {current.id} is damaged ({'; '.join(damage)}); building a new one")
    built = generations.find_built(home, inputs.fingerprint, exclude=current.id if current else None)
    if built is not None:
        return _reselect(inputs, receipt, store, built)
    progress = progress_for(args)
    progress("resolving")
    code, resolution = _resolve(inputs, receipt, args)
    if resolution is None:
        return code
    return _build_and_select(inputs, resolution, receipt, store, args, progress)


def _build_and_select(inputs: Inputs, resolution: Resolution, receipt: Receipt, store: Store,
                      args: argparse.Namespace, progress: Callable[[str], None]) -> int:
    from ..build import build, pause_point  # uv and the build load only when there is work

    try:
        generation = build(inputs, resolution, Uv(cache_dir() / "uv"), store, progress)
        progress(f"selecting generation {generation.id}")
        pause_point("select", inputs.home, store)
        generations.select(inputs.home, store, generation)
    except PmError as failure:
        return _failed(inputs, receipt, store, failure, args)
    receipt.generation = generation.to_receipt(selected=True, restart_required=True)
    receipt.extra["message"] = f"built and selected generation {generation.id}"
    receipt.finish("ok", EXIT_OK)
    return EXIT_OK


def _reselect(inputs: Inputs, receipt: Receipt, store: Store, built: generations.Generation) -> int:
    """Select a complete generation that was already built for these inputs (no resolve, no uv)."""
    generations.select(inputs.home, store, built)
    receipt.resolution = built.record["resolution"]
    receipt.generation = built.to_receipt(selected=True, restart_required=True)
    receipt.extra["message"] = f"selected generation {built.id}, already built for these inputs"
    receipt.finish("ok", EXIT_OK)
    return EXIT_OK


def _resolve(inputs: Inputs, receipt: Receipt, args: argparse.Namespace) -> tuple[int, Resolution | None]:
    from .resolve import resolve_with_receipt  # the resolver loads only when there is work

    return resolve_with_receipt(inputs, receipt, args, finish_ok=False)


def _failed(inputs: Inputs, receipt: Receipt, store: Store, failure: PmError, args: argparse.Namespace) -> int:
    try:
        generations.remove_incomplete(inputs.home, store)
    except PmError as cleanup:
        receipt.warnings.append(f"could not remove the unfinished generation: {cleanup}")
    current = generations.read_state(inputs.home).get("selected")
    receipt.failure = {"kind": _kind(failure), "message": str(failure), "url": None}
    receipt.extra["message"] = ("nothing was selected; " +
                                (f"generation {current} stays selected" if current else "no generation is selected"))
    receipt.finish(_outcome(EXIT_FAILURE, receipt), EXIT_FAILURE)
    if not getattr(args, "json", False):
        say(f"{paint('error', 'red', sys.stderr)}: {failure}")
        say(receipt.extra["message"])
    return EXIT_FAILURE


def _kind(failure: PmError) -> str:
    from ..build import HashMismatch

    return "hash-mismatch" if isinstance(failure, HashMismatch) else type(failure).__name__


def _outcome(code: int, receipt: Receipt) -> str:
    if receipt.failure is not None and receipt.failure.get("kind") == "hash-mismatch":
        return "refused"
    return {EXIT_OK: "ok", 3: "conflict"}.get(code, "failed")


def written(receipt: Receipt, code: int) -> dict[str, Any]:
    """The receipt as written to disk (or, when it could not be written, as it would have been)."""
    if receipt.path is not None:
        try:
            return dict(json.loads(receipt.path.read_text()))
        except (OSError, ValueError):
            pass
    return receipt.to_json(_outcome(code, receipt), code)


def report(receipt: Receipt, code: int, args: argparse.Namespace) -> None:
    """The person's summary on stderr, or the receipt (plus its path) on stdout with ``--json``."""
    if args.json:
        emit_json(written(receipt, code) | {"receipt_path": str(receipt.path)})
        return
    if code == EXIT_OK and receipt.generation is not None:
        gen = receipt.generation
        say(receipt.extra.get("message", ""))
        say(f"generation {gen['id']} is selected: {gen['path']}")
        if gen["restart_required"]:
            say("running hermes processes keep their generation until they restart")
    for warning in receipt.warnings:
        say(f"{paint('warning', 'yellow', sys.stderr)}: {warning}")
    if receipt.path is not None:
        say(f"receipt: {receipt.path}")
