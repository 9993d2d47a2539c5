"""``hermes pm sync``: resolve, build and select a generation (a no-op when the fingerprint matches)."""

from __future__ import annotations

import argparse
import sys

from .. import generations
from ..build import build
from ..errors import EXIT_FAILURE, EXIT_OK, PmError
from ..inputs import Inputs, gather
from ..lock import home_lock
from ..receipt import Receipt
from ..store import Store
from ..uv import Uv
from ._common import cache_dir, flags_from, home_of, start_receipt
from ._output import emit_json, paint, say
from .resolve import resolve_with_receipt

HELP = "resolve, build and select a generation (no-op when nothing changed)"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lock-timeout", type=float, default=600.0, metavar="SECONDS",
                        help="give up waiting for another pm process after SECONDS (default 600)")
    parser.set_defaults(candidate=None)


def progress_for(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    if args.json or not sys.stderr.isatty():
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
    """The sync transaction; the caller holds the home lock. Finishes the receipt."""
    home = inputs.home
    removed = generations.remove_incomplete(home, store)
    if removed:
        receipt.warnings.append(f"removed unfinished generation(s) left by an interrupted run: {', '.join(removed)}")
    current = generations.selected(home)
    if current is not None and current.fingerprint == inputs.fingerprint and intact(current):
        receipt.generation = current.to_receipt(selected=True, restart_required=False)
        receipt.extra["message"] = "already in sync"
        receipt.finish("ok", EXIT_OK)
        return EXIT_OK
    progress = progress_for(args)
    progress("resolving")
    code, resolution = resolve_with_receipt(inputs, receipt, args, finish_ok=False)
    if resolution is None:
        return code
    uv = Uv(cache_dir() / "uv")
    try:
        generation = build(inputs, resolution, uv, store, progress)
    except PmError as failure:
        receipt.failure = {"kind": type(failure).__name__, "message": str(failure), "url": None}
        receipt.finish("failed", EXIT_FAILURE)
        generations.remove_incomplete(home, store)
        say(f"{paint('error', 'red', sys.stderr)}: {failure}")
        say("the previously selected generation stays selected")
        return EXIT_FAILURE
    generations.select(home, store, generation)
    receipt.generation = generation.to_receipt(selected=True, restart_required=True)
    receipt.extra["message"] = f"built and selected generation {generation.id}"
    receipt.finish("ok", EXIT_OK)
    return EXIT_OK


def intact(generation: generations.Generation) -> bool:
    """Cheap check that a generation still holds its pins (dist-info names only)."""
    installed = generations.installed_versions(generation.site_packages)
    pins = generation.record["resolution"]["packages"]
    return all(str(installed.get(p["name"])) == p["version"] for p in pins)


def report(receipt: Receipt, code: int, args: argparse.Namespace) -> None:
    if args.json:
        emit_json(receipt.to_json({0: "ok", 3: "conflict"}.get(code, "failed"), code) | {"receipt_path": str(receipt.path)})
        return
    if code == EXIT_OK and receipt.generation is not None:
        gen = receipt.generation
        say(receipt.extra.get("message", ""))
        say(f"generation {gen['id']} is selected: {gen['path']}")
        if gen["restart_required"]:
            say("running hermes processes keep their generation until they restart")
    if receipt.path is not None:
        say(f"receipt: {receipt.path}")


