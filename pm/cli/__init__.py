"""``hermes pm <command>`` / ``python -m pm <command>``: ``main(argv) -> int``, one exit path for errors."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from ..errors import EXIT_FAILURE, PmError
from ..inputs import gather
from ..settings import Flags, resolve_home
from . import scan
from ._output import say

COMMANDS = {"scan": (scan.run, "plugin roots, declarations, members and why not, requirements with origins")}


def add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--home", help="the HERMES_HOME to use (default: $HERMES_HOME or ~/.hermes)")
    parser.add_argument("--json", action="store_true", help="structured output on stdout")


def add_resolution_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("resolution options")
    group.add_argument("--python", help="target interpreter (default: the running one)")
    group.add_argument("--core", help="the host's pyproject.toml (default: the installed hermes-pm)")
    group.add_argument("--core-lock", help="core's lock: a pylock.toml or name==version lines")
    group.add_argument("--index-url", help="simple index URL (env HERMES_PM_INDEX_URL, config pm.index_url)")
    group.add_argument("--find-links", action="append", default=[], metavar="DIR", help="a folder of wheels (repeatable)")
    group.add_argument("--no-index", action="store_true", help="use only --find-links folders")
    group.add_argument("--offline", action="store_true", help="never touch the network; use the cache")


def flags_from(args: argparse.Namespace) -> Flags:
    return Flags(
        home=args.home,
        python=getattr(args, "python", None),
        core=getattr(args, "core", None),
        core_lock=getattr(args, "core_lock", None),
        index_url=getattr(args, "index_url", None),
        find_links=tuple(getattr(args, "find_links", None) or ()),
        no_index=getattr(args, "no_index", False),
        offline=getattr(args, "offline", False),
    )


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Mount every pm command on ``subparsers`` (used by ``hermes pm`` and ``python -m pm``)."""
    for name, (_, help_text) in COMMANDS.items():
        parser = subparsers.add_parser(name, help=help_text, description=help_text)
        add_common(parser)
        add_resolution_options(parser)


def build_parser(prog: str = "hermes pm") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="The plugin package manager of the Hermes agent.")
    register(parser.add_subparsers(dest="command", required=True, metavar="COMMAND"))
    return parser


def dispatch(args: argparse.Namespace) -> int:
    """Run a parsed pm command; every deliberate failure becomes a message and an exit code here."""
    run, _ = COMMANDS[args.command]
    try:
        inputs = gather(resolve_home(args.home), flags_from(args))
        return run(inputs, args)
    except PmError as exc:
        say(f"error: {exc}")
        return exc.exit_code
    except KeyboardInterrupt:
        say("interrupted")
        return EXIT_FAILURE
    except BrokenPipeError:  # e.g. `hermes pm scan --json | head`
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        return EXIT_FAILURE


def main(argv: Sequence[str] | None = None, prog: str = "hermes pm") -> int:
    args = build_parser(prog).parse_args(list(sys.argv[1:] if argv is None else argv))
    return dispatch(args)
