"""``hermes plugins list|enable|disable|install|remove`` and ``hermes update``.

Thin: parse into Options, call an operation of :mod:`pm.ops` (:mod:`~pm.ops.admit`,
:mod:`~pm.ops.install`, :mod:`~pm.ops.update`), render its receipt.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from pm.base.errors import EXIT_CONFLICT, EXIT_OK
from pm.base.names import printable
from pm.cli._changes import tell_changes
from pm.cli._common import (
    add_common,
    add_lock_option,
    add_resolution_options,
    add_skip_invalid,
    add_upgrade_options,
    add_yes,
    flags_from,
    home_of,
    options_from,
)
from pm.cli._output import emit_json, failed_early, paint, reporter_for, say, table, tell_failed, tell_receipt
from pm.cli.resolve import tell_resolved
from pm.cli.sync import report
from pm.env import generations
from pm.env.readiness import check
from pm.inputs.collect import gather
from pm.inputs.settings import environment_home
from pm.ops.admit import disable, enable
from pm.ops.install import install, remove
from pm.ops.messages import NOTHING_CHANGED
from pm.ops.update import update
from pm.records.receipt import Receipt


def register(groups: "argparse._SubParsersAction[Any]") -> None:
    plugins = groups.add_parser("plugins", help="list, enable, disable, install and remove plugins")
    commands = plugins.add_subparsers(dest="plugins_command", required=True, metavar="COMMAND")
    for name, help_text, needs_name in (
        ("list", "every plugin with its source, status and readiness", False),
        ("enable", "admit a plugin: refused (exit 3) when its requirements collide", True),
        ("disable", "disable a plugin (always allowed) and rebuild", True),
        ("install", "install from the catalog, a local folder, or git+URL@COMMIT", True),
        ("remove", "remove an installed plugin", True),
    ):
        parser = commands.add_parser(name, help=help_text, description=help_text)
        add_common(parser)
        add_resolution_options(parser)
        add_lock_option(parser)
        if needs_name:
            parser.add_argument("name", metavar="SOURCE" if name == "install" else "NAME")
        if name in ("enable", "disable", "install"):
            add_skip_invalid(parser)
        if name == "enable":
            add_upgrade_options(parser)
        if name in ("enable", "install"):
            add_yes(parser)
        if name == "install":
            parser.add_argument("--enable", action="store_true", help="admit it right after installing")
            parser.add_argument("--force", action="store_true", help="replace a different plugin of that name")
            parser.add_argument("--ref", default=None, metavar="REF",
                                help="the branch, tag or commit of a git source (git+URL, URL.git or owner/repo"
                                     "[/subdir], GitHub's shorthand) to pin it to")
    from agent.plugins_info_cli import register as register_more

    register_more(commands)
    update = groups.add_parser("update", help="install missing catalog memory providers, move catalog plugins to "
                                              "their new pins, then sync every home")
    update.add_argument("--accept-repin", action="append", default=[], metavar="NAME",
                        help="consent to what a catalog plugin's new pin brings (new or widened requirements, new "
                             "capabilities); without it, a terminal asks and a script keeps the old pin")
    add_common(update)
    add_resolution_options(update)
    add_lock_option(update)
    add_skip_invalid(update)
    add_yes(update)


def run(args: argparse.Namespace) -> int:
    if args.group == "update":
        return run_update(args)
    if args.plugins_command in ("info", "search", "validate", "doctor", "update"):
        from agent.plugins_info_cli import run as run_more

        return run_more(args)
    return {"list": run_list, "enable": run_enable, "disable": run_disable,
            "install": run_install, "remove": run_remove}[args.plugins_command](args)


def run_list(args: argparse.Namespace) -> int:
    """Every plugin of ``home`` with its status and, for each one the environment selects, the
    verdict ``hermes pm check`` gives it: the same readiness, judged over the environment's inputs
    (a profile's are its primary's) against its selected generation."""
    home = home_of(args)
    inputs = gather(home, flags_from(args))
    env_home = environment_home(home)
    judged = inputs if env_home == inputs.home else gather(env_home, flags_from(args))
    generation = generations.selected(env_home)
    readiness = check(judged, generation)
    rows: list[list[str]] = []
    data: list[dict[str, Any]] = []
    for status in inputs.selection.plugins:
        verdict = readiness.verdict(status.plugin.key) if status.is_member or status.enabled_but_invalid else None
        ready = "-" if verdict is None else ("ready" if verdict.ready else "NOT READY")
        rows.append([status.plugin.key, status.plugin.root.source, status.status, ready,
                     verdict.reason() if verdict and not verdict.ready else status.reason])
        data.append({"name": status.plugin.key, "source": status.plugin.root.source, "status": status.status,
                     "ready": None if verdict is None else verdict.ready, "reason": rows[-1][-1],
                     "memory_provider": status.plugin.is_memory})
    for row, item in _entry_point_rows(inputs, generation):
        rows.append(row)
        data.append(item)
    if args.json:
        emit_json({"plugins": data, "ready": readiness.ready, "problems": list(readiness.problems)})
        return EXIT_OK
    print(table([[printable(cell) for cell in row] for row in rows], ["plugin", "source", "status", "ready", "reason"]))
    for problem in readiness.problems:
        say(f"! {printable(problem)}")
    return EXIT_OK


def _entry_point_rows(inputs: Any, generation: generations.Generation | None) -> list[tuple[list[str], dict[str, Any]]]:
    """``plugins list`` rows of the entry-point plugins (:mod:`agent.entry_points`; found without
    importing them): enabled as a directory plugin is (``plugins.enabled``, or ``memory.provider``
    for a provider) and then ready or not by its distribution's requirements."""
    from agent.entry_points import entry_point_plugins

    config = inputs.selection.homes[0].config
    found = []
    for plugin in entry_point_plugins(generation.site_packages if generation is not None else None):
        enabled = plugin.name in config.enabled or (plugin.memory_provider and plugin.name == config.memory_provider)
        status = "disabled" if plugin.name in config.disabled else "enabled" if enabled else "not-enabled"
        ready = None if status != "enabled" else not plugin.unmet
        reason = "; ".join(plugin.unmet) if plugin.unmet and ready is False else plugin.origin
        found.append(([plugin.name, "entry_point", status, "-" if ready is None else "ready" if ready else "NOT READY",
                       reason],
                      {"name": plugin.name, "source": "entry_point", "status": status, "ready": ready,
                       "reason": reason, "memory_provider": plugin.memory_provider, "entry_point": {
                           "group": plugin.group, "value": plugin.value, "distribution": plugin.distribution,
                           "version": plugin.version}}))
    return found


def run_enable(args: argparse.Namespace) -> int:
    done = enable(home_of(args), args.name, options_from(args), reporter_for(args.json or args.quiet))
    return _tell(args, done.receipt, f"enabled {args.name!r}")


def run_disable(args: argparse.Namespace) -> int:
    done = disable(home_of(args), args.name, options_from(args), reporter_for(args.json or args.quiet))
    return _tell(args, done.receipt, f"disabled {args.name!r}")


def _tell(args: argparse.Namespace, receipt: Receipt, done: str) -> int:
    code = receipt.exit_code
    if failed_early(receipt, args.json):
        return code
    if args.json:
        emit_json(receipt.as_written())
        return code
    if code == EXIT_OK:
        tell_changes(args, receipt)
        say(receipt.extra.get("message") or done)
        if receipt.generation:
            say(f"generation {receipt.generation['id']} is selected; restart running hermes processes to use it")
    else:
        tell_resolved(receipt)
    if code != EXIT_OK and receipt.kind == "admit":
        say(NOTHING_CHANGED)
    elif code != EXIT_OK and receipt.extra.get("disabled"):
        say(f"{args.name!r} is disabled in config.yaml, but the rebuild did not finish; the previous generation "
            "stays selected (`hermes pm check` shows what is not ready)")
    for warning in receipt.warnings:
        if warning.startswith("MEMORY"):
            say(paint(f"!!! {warning}", "red", sys.stderr))
    tell_receipt(receipt)
    return code


def run_install(args: argparse.Namespace) -> int:
    done = install(home_of(args, creates=True), args.name, options_from(args), reporter_for(args.json or args.quiet),
                   force=args.force, ref=args.ref)
    receipt = done.receipt
    if receipt.exit_code != EXIT_OK:
        tell_failed(receipt, args.json)
        return receipt.exit_code
    say(receipt.extra["message"])
    if args.enable:
        args.name = receipt.extra["installed"]
        return run_enable(args)
    return EXIT_OK


def run_remove(args: argparse.Namespace) -> int:
    done = remove(home_of(args), args.name, options_from(args), reporter_for(args.json or args.quiet))
    receipt = done.receipt
    if receipt.exit_code != EXIT_OK:
        tell_failed(receipt, args.json)
        return receipt.exit_code
    say(receipt.extra["message"])
    return EXIT_OK


def _ask_repin(name: str, widened: list[str]) -> bool:
    """A person at a terminal consents (or not) to what a catalog plugin's new pin brings."""
    say(f"the catalog moved plugin {name!r} to a new pin, which brings: " + "; ".join(widened))
    print("move it? [y/N] ", end="", file=sys.stderr, flush=True)
    try:
        return input().strip().lower() in ("y", "yes")
    except EOFError:
        return False


def run_update(args: argparse.Namespace) -> int:
    ask = _ask_repin if sys.stdin.isatty() and not args.json else None
    done = update(home_of(args), options_from(args), reporter_for(args.json or args.quiet),
                  accept=frozenset(args.accept_repin), ask=ask)
    receipt = done.receipt
    if done.code == EXIT_CONFLICT and receipt.conflict and done.inputs is not None:
        memory = {s.plugin.key for s in done.inputs.selection.plugins if s.plugin.is_memory}
        for name in receipt.conflict["plugins"]:
            if name in memory:
                say(paint(f"!!! memory provider {name!r} collides: the agent cannot load its memory until this is "
                          "resolved", "red", sys.stderr))
        say("the previously selected generation stays selected; no plugin was disabled")
    tell_changes(args, receipt)
    report(receipt, json_output=args.json)
    return done.code
