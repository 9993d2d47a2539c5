"""``hermes pm resolve [--with NAME]``: a dry run of core + selection (+ candidate); installs nothing."""

from __future__ import annotations

import argparse
import hashlib

from pm.base.errors import EXIT_CONFLICT, PmError
from pm.base.watch import Watch
from pm.cli._common import add_upgrade_options, home_of, options_from, shown_home
from pm.cli._output import emit_json, reporter_for, say, tell_failure, tell_receipt, tell_steps
from pm.cli._resolved import show
from pm.cli._summaries import tell_refusal
from pm.cli.shortcut import MISSES, remember
from pm.ops.resolve import resolve
from pm.ops.transaction import Result
from pm.records.receipt import Receipt


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--with", dest="candidate", metavar="NAME", help="also resolve this plugin, as if enabled")
    add_upgrade_options(parser)


def run(args: argparse.Namespace) -> int:
    watch = Watch()
    done = resolve(home_of(args), options_from(args, watch=watch), reporter_for(args.json or args.quiet),
                   candidate=args.candidate)
    watch.code("packaging", "yaml", "resolvelib")  # what read and decided it (pm's own: its version)
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
    refused = done.code == EXIT_CONFLICT and done.receipt.conflict is not None
    if not entry_argv or inputs is None or written is None or not (done.code == 0 and done.resolution or refused):
        return
    settings = inputs.settings
    if settings.cutoff is not None or settings.find_links or settings.refresh or done.receipt.path is None:
        return
    key = done.stored_under
    if key is None:
        return
    try:
        from pm.index.cache import Cache
        from pm.ops.transaction import cache_dir
        from pm.records.reuse import refusal_key, stored_as, stored_refusal

        cache = Cache(cache_dir())
        if refused:  # a refusal is remembered as its proof was stored: with the pages it read
            key = refusal_key(key, done.receipt.kind, shown_home(args),
                              operator_flags=bool(getattr(args, "constraint", None) or getattr(args, "override", None)))
            found = stored_refusal(cache, key)
            stored = None if found is None or found[1]["conflict"] != written["conflict"] else (found[0], found[2])
        else:
            assert done.resolution is not None
            stored = stored_as(cache, key, done.resolution)
        if stored is not None:
            pages, entry = stored
            seen = {**watch.seen, f"f:{cache.result_file(key)}": hashlib.sha256(entry).hexdigest()}
            said = [] if refused else list(dict.fromkeys(done.receipt.warnings))  # as the full command prints
            remember(entry_argv, "resolve", seen, written, said, pages, offline=settings.offline,
                     cache_root=cache.root, ask_again=not any(_has_credentials(url) for url in settings.index_urls))
    except (*MISSES, PmError):
        pass


def _has_credentials(url: str) -> bool:
    """Whether an index URL carries ``user:password@`` (its pages are asked with them)."""
    from urllib.parse import urlsplit

    return "@" in urlsplit(url).netloc


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
    tell_refusal(receipt.conflict, receipt.candidate, receipt.next_steps)
