"""``hermes pm <command>`` / ``python -m pm <command>``: ``main(argv) -> int``, one exit path for errors.

Each command is a module with ``HELP``, ``configure(parser)`` and ``run(args) -> int``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from .. import managed
from ..errors import EXIT_FAILURE, PmError
from ..receipt import Receipt
from . import check, export, gc, resolve, scan, status, sync, why
from ._common import add_common, add_resolution_options, home_of
from ._output import paint, say

COMMANDS: dict[str, Any] = {
    "scan": scan, "resolve": resolve, "sync": sync, "check": check, "status": status, "env": status.Env,
    "why": why, "export": export, "gc": gc, "rollback": gc.Rollback,
}
#: The receipt ``kind`` of the host's commands that dispatch runs (others: the command's name).
_KINDS = {"plugins-enable": "admit", "plugins-disable": "disable", "plugins-install": "install",
          "plugins-remove": "remove", "plugins-list": "list"}


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Mount every pm command on ``subparsers`` (used by ``hermes pm`` and ``python -m pm``)."""
    for name, module in COMMANDS.items():
        parser = subparsers.add_parser(name, help=module.HELP, description=module.HELP)
        add_common(parser)
        if getattr(module, "RESOLVES", True):
            add_resolution_options(parser)
        configure = getattr(module, "configure", None)
        if configure is not None:
            configure(parser)


def build_parser(prog: str = "hermes pm") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="The plugin package manager of the Hermes agent.")
    register(parser.add_subparsers(dest="command", required=True, metavar="COMMAND"))
    return parser


def dispatch(args: argparse.Namespace, run: Any = None) -> int:
    """Run a parsed command (a pm command, or ``run`` for the host's groups that reuse pm's
    transactions); every deliberate failure becomes a message and an exit code here.

    A command that would change the environment (:data:`pm.managed.MUTATING`) refuses at once,
    before any lock or read, when the environment is managed by someone else."""
    try:
        managed.check(home_of(args), args.command)
        return int((run or COMMANDS[args.command].run)(args))
    except managed.Managed as refusal:
        say(f"{paint('refused', 'red', sys.stderr)}: {refusal}")
        written = managed.refusal_receipt(home_of(args), _KINDS.get(args.command, args.command), refusal)
        if written is not None:
            say(f"receipt: {written.path}")
        return refusal.exit_code
    except PmError as exc:
        say(f"{paint('error', 'red', sys.stderr)}: {exc}")
        _failure_receipt(args, exc)
        return exc.exit_code
    except KeyboardInterrupt:
        say("interrupted")
        return EXIT_FAILURE
    except BrokenPipeError:  # e.g. `hermes pm scan --json | head`
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        return EXIT_FAILURE


def _failure_receipt(args: argparse.Namespace, exc: PmError) -> None:
    """A failure before the command could start its own receipt still leaves one (invariant 9)."""
    home = home_of(args)
    if not home.is_dir():
        return
    receipt = Receipt(_KINDS.get(args.command, args.command), home)
    receipt.failure = {"kind": type(exc).__name__, "message": str(exc), "url": getattr(exc, "url", None)}
    problems = getattr(exc, "problems", ())
    if problems:
        receipt.failure["problems"] = [str(p) for p in problems]
    receipt.finish("failed", exc.exit_code)
    if receipt.path is not None:
        say(f"receipt: {receipt.path}")


def main(argv: Sequence[str] | None = None, prog: str = "hermes pm") -> int:
    args = build_parser(prog).parse_args(list(sys.argv[1:] if argv is None else argv))
    return dispatch(args)
