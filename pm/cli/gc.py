"""``hermes pm gc`` and ``hermes pm rollback``."""

from __future__ import annotations

import argparse

from .. import generations, leases
from ..errors import EXIT_FAILURE, EXIT_OK
from ..lock import home_lock
from ..receipt import Receipt
from ..store import Store
from ._common import home_of
from ._output import emit_json, say
from .sync import intact

HELP = "remove generations that are neither selected, nor the previous one, nor in use"
RESOLVES = False


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lock-timeout", type=float, default=600.0, metavar="SECONDS")


def run(args: argparse.Namespace) -> int:
    home = home_of(args)
    store = Store.for_home(home)
    receipt = Receipt("gc", home)
    with home_lock(home, store, timeout=args.lock_timeout, notify=say):
        state = generations.read_state(home)
        leases.prune(home, store)
        keep = {state.get("selected"), state.get("previous"), *leases.live(home).values()}
        removed = [gid for gid in generations.all_ids(home) if gid not in keep]
        for gid in removed:
            store.remove_tree(generations.root(home) / gid)
        receipt.extra["removed"] = removed
        receipt.extra["kept"] = sorted(k for k in keep if k)
        receipt.finish("ok", EXIT_OK)
    if args.json:
        emit_json({"removed": removed, "kept": receipt.extra["kept"]})
    else:
        say(f"removed {len(removed)} generation(s)" + (f": {', '.join(removed)}" if removed else ""))
    return EXIT_OK


class Rollback:
    HELP = "select the previous generation again (after verifying it)"
    RESOLVES = False

    @staticmethod
    def configure(parser: argparse.ArgumentParser) -> None:
        configure(parser)

    @staticmethod
    def run(args: argparse.Namespace) -> int:
        home = home_of(args)
        store = Store.for_home(home)
        receipt = Receipt("rollback", home)
        with home_lock(home, store, timeout=args.lock_timeout, notify=say):
            target = generations.previous(home)
            if target is None or not intact(target):
                why = "there is no previous generation" if target is None else f"generation {target.id} is damaged"
                receipt.failure = {"kind": "rollback", "message": why, "url": None}
                receipt.finish("failed", EXIT_FAILURE)
                say(f"error: cannot roll back: {why}")
                return EXIT_FAILURE
            generations.select(home, store, target)
            receipt.generation = target.to_receipt(selected=True, restart_required=True)
            receipt.finish("ok", EXIT_OK)
        say(f"generation {target.id} is selected again; running hermes processes keep theirs until restart")
        return EXIT_OK
