"""The ``hermes`` command: the agent's CLI. ``hermes pm …`` is pm's command group."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import pm.cli

from . import plugins_cli


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hermes", description="The Hermes agent.")
    groups = parser.add_subparsers(dest="group", required=True, metavar="GROUP")
    pm_parser = groups.add_parser("pm", help="the plugin package manager", description="The plugin package manager.")
    pm.cli.register(pm_parser.add_subparsers(dest="command", required=True, metavar="COMMAND"))
    plugins_cli.register(groups)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    if args.group == "pm":
        return pm.cli.dispatch(args)
    if args.group in ("plugins", "update"):
        args.command = args.group if args.group == "update" else f"plugins-{args.plugins_command}"
        return pm.cli.dispatch(args, run=plugins_cli.run)
    return 2


if __name__ == "__main__":
    sys.exit(main())
