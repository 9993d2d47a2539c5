"""The ``hermes`` command: the agent's CLI. ``hermes pm …`` is pm's command group."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import pm.cli

from . import memory_cli, plugins_cli
from .plugin_cli import PluginCliCommand, discover_plugin_cli_commands, mount_plugin_cli_commands, run_plugin_command

_PLUGIN_COMMANDS: dict[str, PluginCliCommand] = {}


def build_parser(with_plugin_commands: bool = False) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hermes", description="The Hermes agent.")
    groups = parser.add_subparsers(dest="group", required=True, metavar="GROUP")
    pm_parser = groups.add_parser("pm", help="the plugin package manager", description="The plugin package manager.")
    pm.cli.register(pm_parser.add_subparsers(dest="command", required=True, metavar="COMMAND"))
    plugins_cli.register(groups)
    memory_parser = groups.add_parser("memory", help="memory providers: setup, status", description="Memory providers.")
    memory_cli.register(memory_parser.add_subparsers(dest="memory_command", required=True, metavar="COMMAND"))
    if with_plugin_commands:  # last, so built-in names win; only the active provider's cli.py
        _PLUGIN_COMMANDS.update(mount_plugin_cli_commands(groups, discover_plugin_cli_commands()))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    builtin = {"pm", "plugins", "update", "memory"}
    args = build_parser(with_plugin_commands=not argv or argv[0] not in builtin).parse_args(argv)
    if args.group == "pm":
        return pm.cli.dispatch(args)
    if args.group in ("plugins", "update"):
        args.command = args.group if args.group == "update" else f"plugins-{args.plugins_command}"
        return pm.cli.dispatch(args, run=plugins_cli.run)
    if args.group == "memory":
        return memory_cli.run(args)
    if args.group in _PLUGIN_COMMANDS:
        return run_plugin_command(_PLUGIN_COMMANDS[args.group], args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
