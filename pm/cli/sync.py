"""``hermes pm sync``: resolve, build and select a generation (a no-op when the fingerprint matches).

The no-op path (same fingerprint, selected generation intact) reads the inputs, one ``state.json``,
one ``generation.json`` and one site-packages listing, then writes its receipt: no resolver, no uv.

``--from FILE`` (a receipt, a ``generation.json`` or a ``pylock.toml``) is a frozen sync: it builds
exactly the files FILE names (``--find-links`` folders may supply them offline, matched by
filename and sha256), after checking that the home's inputs are still those FILE was made for
(refused, exit 1, unless ``--ignore-inputs``). See :mod:`pm.frozen`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import generations
from ..errors import EXIT_FAILURE, EXIT_OK, PmError
from ..inputs import Inputs, gather
from ..lock import home_lock
from ..receipt import Receipt
from ..store import Store
from ..uv import Uv
from ._common import add_lock_option, cache_dir, flags_from, home_of, shown_home, start_receipt
from ._output import emit_json, paint, say

if TYPE_CHECKING:
    from ..resolver import Resolution

ALREADY = "already in sync"


def configure(parser: argparse.ArgumentParser) -> None:
    add_lock_option(parser)
    parser.add_argument("--from", dest="from_file", metavar="FILE",
                        help="build exactly the files of FILE (a receipt, generation.json or pylock.toml); "
                             "no resolution")
    parser.add_argument("--ignore-inputs", action="store_true",
                        help="with --from: build even if the plugins, core or target changed since FILE was made")
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
        run_sync = sync_from if getattr(args, "from_file", None) else sync
        code = run_sync(inputs, receipt, store, args)
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
    found = generations.reuse(home, inputs.fingerprint)
    if found.current and found.generation is not None:
        receipt.generation = found.generation.to_receipt(selected=True, restart_required=False)
        receipt.resolution = found.generation.record["resolution"]  # a successful receipt lists every file
        receipt.extra["message"] = ALREADY
        receipt.finish("ok", EXIT_OK)
        return EXIT_OK
    if found.damaged:
        receipt.warnings.append(found.damaged)
    if found.generation is not None:
        return _reselect(inputs, receipt, store, found.generation)
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


def sync_from(inputs: Inputs, receipt: Receipt, store: Store, args: argparse.Namespace) -> int:
    """The frozen sync (``--from FILE``); the caller holds the home lock. Finishes the receipt.

    No resolver and no index: the files are FILE's (URL + sha256), taken from ``--find-links``
    folders when there. The new generation carries the home's fingerprint when the inputs match
    FILE's, else (``--ignore-inputs``) the sha256 of FILE, so a later plain sync resolves anew.
    """
    from ..frozen import Basis, differences, localize, read_frozen
    from ..records import resolution_to_json

    removed = generations.remove_incomplete(inputs.home, store)
    if removed:
        receipt.warnings.append(f"removed unfinished generation(s) left by an interrupted run: {', '.join(removed)}")
    label = args.from_file
    try:
        frozen = read_frozen(Path(label), inputs.target)
        changes = None if frozen.basis is None else (
            [] if frozen.basis.fingerprint == inputs.fingerprint
            else differences(frozen.basis, Basis.from_inputs(inputs), label))
        receipt.extra["frozen"] = {"from": str(Path(label).absolute()), "kind": frozen.kind,
                                   "fingerprint": frozen.basis.fingerprint if frozen.basis else None,
                                   "inputs": "unrecorded" if changes is None else "changed" if changes else "match"}
        if changes != [] and not args.ignore_inputs:
            return _refuse_inputs(changes, receipt, args)
        receipt.warnings += [f"built although the inputs changed (--ignore-inputs): {c}" for c in changes or ()]
        resolution, local = localize(frozen.resolution, inputs.settings.find_links)
        _check_offline(inputs, resolution, label)
    except PmError as failure:
        return _failed(inputs, receipt, store, failure, args)
    receipt.extra["frozen"]["local_files"] = list(local)
    receipt.resolution = resolution_to_json(resolution)
    receipt.warnings += list(resolution.warnings)
    frozen_inputs = replace(inputs, fingerprint=inputs.fingerprint if changes == [] else frozen.sha256)
    current = generations.selected(inputs.home)
    if current is not None and current.fingerprint == frozen_inputs.fingerprint \
            and _files_of(current.record["resolution"]) == _files_of(receipt.resolution) and current.intact():
        receipt.generation = current.to_receipt(selected=True, restart_required=False)
        receipt.extra["message"] = ALREADY
        receipt.finish("ok", EXIT_OK)
        return EXIT_OK
    progress = progress_for(args)
    progress(f"building {len(resolution.pins)} files of {label} ({len(local)} from --find-links folders)")
    return _build_and_select(frozen_inputs, resolution, receipt, store, args, progress)


def _files_of(resolution: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(p["name"], p["version"], p["file"]["sha256"]) for p in resolution["packages"]}


def _check_offline(inputs: Inputs, resolution: Resolution, label: str) -> None:
    if not inputs.settings.offline:
        return
    missing = [p.link.filename for p in resolution.pins if not p.link.url.startswith("file:")]
    if missing:
        raise PmError(f"--offline: {len(missing)} file(s) of {label} are in no --find-links folder: "
                      f"{', '.join(missing)}")


def _refuse_inputs(changes: list[str] | None, receipt: Receipt, args: argparse.Namespace) -> int:
    """Refuse a frozen sync whose inputs changed (``changes``) or were not recorded (None):
    exit 1, outcome refused, with the commands that go on."""
    from ..records import hermes

    label, home = args.from_file, shown_home(args)
    if changes is None:
        kind = "no-inputs"
        message = (f"refused: {label} records no inputs to check (a pylock.toml not written by "
                   "`hermes pm export`); nothing was built")
    else:
        kind = "inputs-changed"
        message = "\n  - ".join([f"refused: the inputs of this home changed since {label} was made:", *changes])
        message += "\nnothing was built"
    receipt.failure = {"kind": kind, "message": message, "url": None, "differences": changes or []}
    receipt.step(hermes("pm", "sync", "--from", label, "--ignore-inputs", home=home),
                 f"build exactly the files of {label} anyway")
    if kind == "inputs-changed":
        receipt.step(hermes("pm", "sync", home=home), "resolve the current inputs instead")
    receipt.finish("refused", EXIT_FAILURE)
    if not getattr(args, "json", False):
        say(f"{paint('refused', 'red', sys.stderr)}: {message.removeprefix('refused: ')}")
        for step in receipt.next_steps:
            say(f"  {step['command']}\n      {step['why']}")
    return EXIT_FAILURE


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
    from ..frozen import FileMismatch

    if isinstance(failure, FileMismatch):
        return "file-mismatch"
    return "hash-mismatch" if isinstance(failure, HashMismatch) else type(failure).__name__


#: Failures that are refusals: the bytes or the inputs are not what a file recorded.
REFUSALS = ("hash-mismatch", "file-mismatch", "inputs-changed", "no-inputs")


def _outcome(code: int, receipt: Receipt) -> str:
    if receipt.failure is not None and receipt.failure.get("kind") in REFUSALS:
        return "refused"
    return {EXIT_OK: "ok", 3: "conflict"}.get(code, "failed")



def report(receipt: Receipt, code: int, args: argparse.Namespace) -> None:
    """The person's summary on stderr, or the receipt (plus its path) on stdout with ``--json``."""
    if args.json:
        emit_json(receipt.as_written())
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
