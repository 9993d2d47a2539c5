"""``hermes plugins list|enable|disable|install|remove`` and ``hermes update``.

Thin: parsing and printing. The transactions live in pm (:mod:`pm.admission`,
:mod:`pm.install`, :mod:`pm.update`).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from pm import generations
from pm.admission import JOINS, disable, enable
from pm.catalog import CatalogRefusal
from pm.cli._common import add_common, add_lock_option, add_resolution_options, flags_from, home_of
from pm.cli._output import emit_json, paint, say, table
from pm.cli.sync import report
from pm.errors import EXIT_CONFLICT, EXIT_FAILURE, EXIT_OK
from pm.inputs import gather
from pm.install import InstallError, install, remove
from pm.lock import home_lock
from pm.readiness import check
from pm.receipt import Receipt
from pm.store import Store
from pm.update import catalog_for, update


def register(groups: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
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
        if name == "install":
            parser.add_argument("--enable", action="store_true", help="admit it right after installing")
            parser.add_argument("--force", action="store_true", help="replace a different plugin of that name")
    update = groups.add_parser("update", help="install missing catalog memory providers, then sync every home")
    add_common(update)
    add_resolution_options(update)
    add_lock_option(update)


def run(args: argparse.Namespace) -> int:
    args.candidate = args.name if getattr(args, "plugins_command", None) == "enable" else None
    try:
        if args.group == "update":
            return run_update(args)
        return {"list": run_list, "enable": run_enable, "disable": run_disable,
                "install": run_install, "remove": run_remove}[args.plugins_command](args)
    except (InstallError, CatalogRefusal) as refusal:
        say(f"{paint('refused', 'red', sys.stderr)}: {refusal}")
        return EXIT_FAILURE


def run_list(args: argparse.Namespace) -> int:
    home = home_of(args)
    inputs = gather(home, flags_from(args))
    readiness = check(inputs, generations.selected(home))
    rows: list[list[str]] = []
    data: list[dict[str, Any]] = []
    for status in inputs.selection.plugins:
        verdict = readiness.verdict(status.plugin.key) if status.is_member else None
        ready = "-" if verdict is None else ("ready" if verdict.ready and not readiness.inputs_changed
                                             and readiness.generation else "NOT READY")
        rows.append([status.plugin.key, status.plugin.root.source, status.status, ready,
                     verdict.reason() if verdict and not verdict.ready else status.reason])
        data.append({"name": status.plugin.key, "source": status.plugin.root.source, "status": status.status,
                     "ready": None if verdict is None else ready == "ready", "reason": rows[-1][-1],
                     "memory_provider": status.plugin.is_memory})
    if args.json:
        emit_json({"plugins": data, "problems": list(readiness.problems)})
        return EXIT_OK
    print(table(rows, ["plugin", "source", "status", "ready", "reason"]))
    for problem in readiness.problems:
        say(f"! {problem}")
    return EXIT_OK


def run_enable(args: argparse.Namespace) -> int:
    code, receipt = enable(home_of(args), args.name, flags_from(args), args, say=say)
    return _tell(args, code, receipt, f"enabled {args.name!r}")


def run_disable(args: argparse.Namespace) -> int:
    code, receipt = disable(home_of(args), args.name, flags_from(args), args, say=say)
    return _tell(args, code, receipt, f"disabled {args.name!r}")


def _tell(args: argparse.Namespace, code: int, receipt: Receipt, done: str) -> int:
    if args.json:
        emit_json(receipt.as_written())
        return code
    if code == EXIT_OK:
        say(receipt.extra.get("message") or done)
        if receipt.generation:
            say(f"generation {receipt.generation['id']} is selected; restart running hermes processes to use it")
    elif code != EXIT_CONFLICT and receipt.failure:
        say(f"{paint('error', 'red', sys.stderr)}: {receipt.failure['message']}")
    if code != EXIT_OK and receipt.kind == "admit":
        say("config.yaml was not changed; the selected generation is unchanged")
    elif code != EXIT_OK:
        say(f"{args.name!r} is disabled in config.yaml, but the rebuild did not finish; the previous generation "
            "stays selected (`hermes pm check` shows what is not ready)")
    for warning in receipt.warnings:
        if warning.startswith("MEMORY"):
            say(paint(f"!!! {warning}", "red", sys.stderr))
    if receipt.path is not None:
        say(f"receipt: {receipt.path}")
    return code


def run_install(args: argparse.Namespace) -> int:
    home = home_of(args)
    store = Store.for_home(home)
    receipt = Receipt("install", home, candidate=args.name)
    with home_lock(home, store, timeout=args.lock_timeout, notify=say):
        installed = install(home, args.name, catalog_for(home), force=args.force)
    what = "already installed" if installed.unchanged else "replaced" if installed.replaced else "installed"
    receipt.extra.update(installed=installed.name, root=str(installed.root), provenance=installed.provenance)
    receipt.finish("ok", EXIT_OK)
    say(f"{what} plugin {installed.name!r} at {installed.root}")
    if args.enable:
        args.name = args.candidate = installed.name
        return run_enable(args)
    return EXIT_OK


def run_remove(args: argparse.Namespace) -> int:
    home = home_of(args)
    store = Store.for_home(home)
    with home_lock(home, store, timeout=args.lock_timeout, notify=say):
        selected = gather(home, flags_from(args)).find(args.name)
        if selected is not None and (selected.status in JOINS + ("sits-out",) or selected.enabled_but_invalid):
            say(f"{paint('refused', 'red', sys.stderr)}: plugin {args.name!r} is enabled; run "
                f"`hermes plugins disable {args.name}` first, then remove it")
            return EXIT_FAILURE
        path = remove(home, args.name)
    receipt = Receipt("remove", home, candidate=args.name)
    receipt.extra["removed"] = str(path)
    receipt.finish("ok", EXIT_OK)
    say(f"removed {path}")
    return EXIT_OK


def run_update(args: argparse.Namespace) -> int:
    code, receipt, inputs = update(home_of(args), flags_from(args), args, say=say)
    if code == EXIT_CONFLICT and receipt.conflict:
        memory = {s.plugin.key for s in inputs.selection.plugins if s.plugin.is_memory}
        for name in receipt.conflict["plugins"]:
            if name in memory:
                say(paint(f"!!! memory provider {name!r} collides: the agent cannot load its memory until this is "
                          "resolved", "red", sys.stderr))
        say("the previously selected generation stays selected; no plugin was disabled")
    report(receipt, code, args)
    return code


