"""``hermes pm resolve [--with NAME]``: a dry run of core + selection (+ candidate); installs nothing."""

from __future__ import annotations

import argparse
import hashlib
import sys

from .._watch import Watch, note_code, watching
from ..errors import EXIT_CONFLICT
from ..ops.resolve import resolve
from ..ops.transaction import Result
from ..receipt import Receipt
from ._common import home_of, options_from
from ._output import emit_json, paint, reporter_for, say, say_error, tell_failure, tell_receipt, tell_steps
from ._resolved import show
from .shortcut import MISSES, remember


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--with", dest="candidate", metavar="NAME", help="also resolve this plugin, as if enabled")


def run(args: argparse.Namespace) -> int:
    with watching() as watch:
        done = resolve(home_of(args), options_from(args), reporter_for(args.json or args.quiet),
                       candidate=args.candidate)
        note_code("packaging", "yaml", "resolvelib")  # what read and decided it (pm's own: its version)
    if args.json:
        emit_json(done.receipt.as_written())
    else:
        tell_resolved(done.receipt)
        if done.resolution is not None and done.receipt.written is not None:
            show(done.receipt.written, list(dict.fromkeys(done.receipt.warnings)))  # the inputs' too, as sync
        tell_receipt(done.receipt)
    _remember(args, done, watch)
    return done.code


def _remember(args: argparse.Namespace, done: Result, watch: Watch) -> None:
    """Store the shortcut of an ``ok`` answer (:mod:`pm.cli.shortcut`) when one is safe: started
    from a command line pm knows, no exclude-newer cutoff (a relative one moves with the clock), no
    find-links (their files are not watched), and the stored resolution it came from is this one
    (then the full command would reuse it while that entry and its pages stay as they are).
    Never fails the command: the answer is printed already, and a shortcut only saves time."""
    entry_argv = getattr(args, "entry_argv", None)
    inputs, written = done.inputs, done.receipt.written
    if not entry_argv or done.resolution is None or inputs is None or written is None or done.code != 0:
        return
    settings = inputs.settings
    if settings.cutoff is not None or settings.find_links or settings.refresh or done.receipt.path is None:
        return
    key = done.stored_under
    if key is None:
        return
    try:
        from ..index.cache import Cache
        from ..ops.transaction import cache_dir
        from ..reuse import stored_as

        cache = Cache(cache_dir())
        stored = stored_as(cache, key, done.resolution)
        if stored is not None:
            pages, entry = stored
            seen = {**watch.seen, f"f:{cache.result_file(key)}": hashlib.sha256(entry).hexdigest()}
            remember(entry_argv, "resolve", seen, written, list(dict.fromkeys(done.receipt.warnings)), pages,
                     offline=settings.offline, cache_root=cache.root)
    except MISSES:
        pass


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
        elif receipt.failure["kind"] == "not-offered":
            say("this is not a conflict between plugins: the host's own pins are not where pm looked; "
                "nothing was changed")
        tell_steps(receipt.next_steps)


def tell_conflict(receipt: Receipt) -> None:
    assert receipt.conflict is not None
    plugins = receipt.conflict["plugins"]
    candidate = plugins[0] if receipt.candidate and plugins else None  # the candidate is named first
    lead = (f"plugin {candidate!r} cannot be added" if candidate
            else "the selected plugins cannot live together in one environment")
    say_error(f"{paint('conflict', 'red', sys.stderr)}: {lead}")
    say_error(f"  {receipt.conflict['message']}")
    tell_steps(receipt.next_steps)
