"""``hermes pm <command>`` / ``python -m pm <command>``: ``main(argv) -> int``, one exit path for errors.

Each command is a module (or a class in one) with ``run(args) -> int`` and maybe ``configure(parser)``;
:data:`TABLE` names them, with their help, in one place.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

from pm.base.errors import EXIT_FAILURE, PmError
from pm.cli._common import add_common, add_resolution_options
from pm.cli._output import say, tell_failed
from pm.cli._parser import Parser, add_version, hoist_globals
from pm.inputs.settings import resolve_home
from pm.ops.receipts import write
from pm.ops.transaction import fail
from pm.records.receipt import Draft

#: name -> (module under pm.cli, attribute in it or "", help, takes resolution options).
#: Command modules are imported only when that command runs (or for --help), so a no-op
#: ``check`` or ``sync`` does not pay for the resolver and the index client.
TABLE: dict[str, tuple[str, str, str, bool]] = {
    "scan": ("scan", "", "plugin roots, declarations, members and why not, requirements with origins", True),
    "resolve": ("resolve", "", "dry run: can core and the selected plugins (and a candidate) live together? "
                "installs nothing", True),
    "sync": ("sync", "", "resolve, build and select a generation (no-op when nothing changed)", True),
    "check": ("check", "", "is every declared requirement installed in the selected generation? "
              "(no network, no install)", True),
    "status": ("status", "", "the selected generation, its fingerprint, and the latest receipt", False),
    "env": ("status", "Env", "the selected generation's interpreter and site-packages (for the host to activate)",
            False),
    "why": ("why", "", "which plugins (or core) pull a package in, and at which version", True),
    "outdated": ("outdated", "", "per pin: the version an upgrade would take, the newest release, and who holds "
                 "it back", True),
    "audit": ("audit", "", "the selected generation's pins that have published advisories, with the fix and whether "
              "it fits", True),
    "export": ("export", "", "the resolution as a PEP 751 pylock.toml, hashed requirement pins, or Nix data", True),
    "gc": ("gc", "", "remove generations that are neither selected, nor the previous one, nor in use", False),
    "rollback": ("gc", "Rollback", "select the previous generation (or --to ID) again, after verifying it, with the "
                 "plugin selection it was built from", False),
    "generations": ("generations", "", "every generation: when it was built, the plugin selection it was built from, "
                    "its packages and what changed from the one before", False),
    "diff": ("generations", "Diff", "the package changes between two generations (ids, unique prefixes, selected or "
             "previous)", False),
    "catalog": ("catalog", "", "the catalog's acceptance gate: every entry with core, alone and together, on every "
                "target (catalog check)", False),
}
#: The receipt ``kind`` of the commands whose name is not their kind (others: the command's name).
_KINDS = {"plugins-enable": "admit", "plugins-disable": "disable", "plugins-install": "install",
          "plugins-remove": "remove", "plugins-list": "list", "profile-list": "list",
          "catalog": "catalog-check", "plugins-update": "update", "plugins-info": "list", "plugins-search": "list",
          "plugins-validate": "list", "plugins-doctor": "list"}  # (its only subcommand; a catalog that cannot be read fails before its draft)


def command(name: str) -> Any:
    """The object with ``run(args)`` (and maybe ``configure(parser)``) for command ``name``."""
    module_name, attribute, _, _ = TABLE[name]
    module = importlib.import_module(f"{__package__}.{module_name}")
    return getattr(module, attribute) if attribute else module


def register(subparsers: "argparse._SubParsersAction[Any]", only: str | None = None) -> None:
    """Mount every pm command on ``subparsers`` (used by ``hermes pm`` and ``python -m pm``).

    With ``only`` (the command about to run), only that command's module is imported and its own
    options added; the others are listed with their help.
    """
    for name, (_, _, help_text, resolves) in TABLE.items():
        parser = subparsers.add_parser(name, help=help_text, description=help_text)
        if only is not None and name != only:
            continue
        add_common(parser)
        if resolves:
            add_resolution_options(parser)
        configure = getattr(command(name), "configure", None)
        if configure is not None:
            configure(parser)


def build_parser(prog: str = "hermes pm", only: str | None = None) -> argparse.ArgumentParser:
    parser = Parser(prog=prog, description="The plugin package manager of the Hermes agent.")
    add_version(parser)
    register(parser.add_subparsers(dest="command", required=True, metavar="COMMAND"), only=only)
    return parser


def invoked(argv: Sequence[str]) -> str | None:
    """The pm command ``argv`` names (its first word), when it is one."""
    return argv[0] if argv and argv[0] in TABLE else None


def dispatch(args: argparse.Namespace, run: Any = None) -> int:
    """Run a parsed command (a pm command, or ``run`` for the host's groups that call pm's
    operations). The operations record their own failures in their receipts; a deliberate failure
    that escapes one (a mistyped ``--home``, a broken config before a read-only command) becomes a
    message, a receipt and an exit code here."""
    from pm.cli._changes import pins_before, tell_changes
    from pm.cli._output import configure

    configure(quiet=bool(getattr(args, "quiet", False)), verbose=int(getattr(args, "verbose", 0) or 0))
    try:
        args.pins_before = pins_before(args)
        code = int((run or command(args.command).run)(args))
        tell_changes(args)  # unless the command told them first, before its summary
        return code
    except PmError as exc:
        _failure_receipt(args, exc)
        return exc.exit_code
    except KeyboardInterrupt:
        say("interrupted")
        return EXIT_FAILURE
    except BrokenPipeError:  # e.g. `hermes pm scan --json | head`
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        return EXIT_FAILURE


def _failure_receipt(args: argparse.Namespace, exc: PmError) -> None:
    """A failure outside an operation's transaction still leaves a receipt (invariant 9)."""
    receipt = fail(Draft(_KINDS.get(args.command, args.command), resolve_home(args.home)), exc)
    tell_failed(write(receipt), getattr(args, "json", False))  # scripts reading --json get it as data too


def main(argv: Sequence[str] | None = None, prog: str = "hermes pm", *, entry: str | None = None) -> int:
    """Run ``argv``; ``entry`` names the program a user typed (``python -m pm``), so that
    :mod:`pm.cli.shortcut` can answer the same command line next time."""
    raw = list(sys.argv[1:] if argv is None else argv)
    argv = hoist_globals(raw)
    args = build_parser(prog, only=invoked(argv)).parse_args(argv)
    args.entry_argv = [entry, *raw] if entry else None
    return dispatch(args)
