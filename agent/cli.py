"""The ``hermes`` command: the agent's CLI. ``hermes pm …`` is pm's command group.

Groups are imported only when used: ``hermes pm check`` (which the host may run at start-up) does
not load the plugin installer or the memory commands. And nothing but :mod:`sys` is imported before
pm's shortcut (:mod:`pm.cli.shortcut`) has had its chance to answer ``hermes pm sync``/``check``/
``resolve`` over unchanged inputs: argparse, typing and the parser come after a miss.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing's (see above)
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from typing import Any

#: group -> help, for the groups mounted without importing them.
GROUPS = {
    "pm": "the plugin package manager",
    "plugins": "list, enable, disable, install and remove plugins",
    "update": "install missing catalog memory providers, then sync every home",
    "memory": "memory providers: setup, status",
    "logs": "show a home's errors.log or gateway.log",
    "uninstall": "remove what pm built for a home; keep config.yaml, .env, plugins/ and profiles/",
    "profile": "list or delete profiles",
    "dashboard": "a local web app: plugins, readiness, generations, the latest refusal, provider settings",
}
_PLUGIN_COMMANDS: dict[str, Any] = {}


def build_parser(with_plugin_commands: bool = False, only: str | None = None,
                 group: str | None = None) -> argparse.ArgumentParser:
    """The ``hermes`` parser; with ``group`` (the group about to run), only that group is loaded."""
    import pm.cli
    from pm.cli._parser import Parser, add_version

    parser = Parser(prog="hermes", description="The Hermes agent.")
    add_version(parser)
    groups = parser.add_subparsers(dest="group", required=True, metavar="GROUP")
    wanted = (lambda name: group is None or group == name)
    if wanted("pm"):
        pm_parser = groups.add_parser("pm", help=GROUPS["pm"], description="The plugin package manager.")
        add_version(pm_parser)
        pm.cli.register(pm_parser.add_subparsers(dest="command", required=True, metavar="COMMAND"), only=only)
    else:
        groups.add_parser("pm", help=GROUPS["pm"])
    if wanted("plugins") or wanted("update"):
        from agent import plugins_cli

        plugins_cli.register(groups)
    else:
        groups.add_parser("plugins", help=GROUPS["plugins"])
        groups.add_parser("update", help=GROUPS["update"])
    if wanted("memory"):
        from agent import memory_cli

        memory_parser = groups.add_parser("memory", help=GROUPS["memory"], description="Memory providers.")
        memory_cli.register(memory_parser.add_subparsers(dest="memory_command", required=True, metavar="COMMAND"))
    else:
        groups.add_parser("memory", help=GROUPS["memory"])
    if wanted("logs"):
        from agent import logs

        logs.register(groups)
    else:
        groups.add_parser("logs", help=GROUPS["logs"])
    if wanted("uninstall") or wanted("profile"):
        from agent import removal_cli

        removal_cli.register(groups)
    else:
        groups.add_parser("uninstall", help=GROUPS["uninstall"])
        groups.add_parser("profile", help=GROUPS["profile"])
    if wanted("dashboard"):
        from . import dashboard_cli

        dashboard_cli.register(groups)
    else:
        groups.add_parser("dashboard", help=GROUPS["dashboard"])
    if with_plugin_commands:  # last, so built-in names win; only the active provider's cli.py
        from agent.plugin_cli import discover_plugin_cli_commands, mount_plugin_cli_commands

        _PLUGIN_COMMANDS.update(mount_plugin_cli_commands(groups, discover_plugin_cli_commands()))
    return parser


def _run_pm(args: argparse.Namespace, typed: list[str] | None) -> int:
    """``hermes pm …``; from the console script (``typed``) it ends as ``python -m pm`` does,
    without tearing the interpreter down (:mod:`pm.cli._exit`): ~25 ms of a build's wall time."""
    import pm.cli

    args.entry_argv = typed
    code = pm.cli.dispatch(args)
    if typed is not None:
        from pm.cli._exit import leave

        leave(code)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    typed = ["hermes", *sys.argv[1:]] if argv is None else None  # a person's command line
    if typed is not None and "pm" in typed:
        from pm.cli.shortcut import answer

        code = answer(typed)
        if code is not None:
            return code
    import pm.cli
    from pm.cli._parser import hoist_globals

    argv = hoist_globals(list(sys.argv[1:] if argv is None else argv))
    group = argv[0] if argv and argv[0] in GROUPS else None
    only = pm.cli.invoked(argv[1:]) if group == "pm" else None
    args = build_parser(with_plugin_commands=group is None, only=only, group=group).parse_args(argv)
    if args.group == "pm":
        return _run_pm(args, typed)
    if args.group in ("plugins", "update"):
        from agent import plugins_cli

        args.command = args.group if args.group == "update" else f"plugins-{args.plugins_command}"
        return pm.cli.dispatch(args, run=plugins_cli.run)
    if args.group == "memory":
        from agent import memory_cli

        return int(memory_cli.run(args))
    if args.group in ("uninstall", "profile"):
        from agent import removal_cli

        args.command = "uninstall" if args.group == "uninstall" else f"profile-{args.profile_command}"
        return pm.cli.dispatch(args, run=removal_cli.run)
    if args.group == "dashboard":
        from . import dashboard_cli

        args.command = "dashboard"
        return pm.cli.dispatch(args, run=dashboard_cli.run)
    if args.group == "logs":
        from agent import logs

        return logs.run(args)
    if args.group in _PLUGIN_COMMANDS:
        from agent.plugin_cli import run_plugin_command

        return int(run_plugin_command(_PLUGIN_COMMANDS[args.group], args))
    return 2


if __name__ == "__main__":
    sys.exit(main())
