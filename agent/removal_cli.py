"""``hermes uninstall`` and ``hermes profile list|delete NAME``: the removal flows the guide names.

Thin, as the other groups: parse, show the plan (:mod:`pm.ops.uninstall`), confirm, run the
operation, render its receipt. Confirmation: ``--yes`` (for scripts) or a ``y`` typed on a
terminal; without either, nothing is removed (exit 2 when there is no terminal to ask, exit 1
when the answer is no). ``--dry-run`` shows the plan and writes its receipt, removing nothing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from pm.base.errors import EXIT_FAILURE, EXIT_OK, EXIT_USAGE
from pm.cli._common import add_common, add_lock_option, add_resolution_options, home_of, options_from
from pm.cli._output import emit_json, failed_early, reporter_for, say, tell_failure, tell_receipt, tell_steps
from pm.inputs.settings import environment_home
from pm.ops.uninstall import RemovalPlan, plan_profile_delete, plan_uninstall, profile_delete, uninstall
from pm.records.receipt import Receipt

__all__ = ["register", "run"]


def _removal_options(parser: argparse.ArgumentParser) -> None:
    add_common(parser)
    add_lock_option(parser)
    parser.add_argument("--dry-run", action="store_true", help="show what would be removed; remove nothing")
    parser.add_argument("-y", "--yes", action="store_true", help="do not ask for confirmation (for scripts)")


def register(groups: "argparse._SubParsersAction[Any]") -> None:
    """Mount ``uninstall`` and ``profile`` on the ``hermes`` groups."""
    text = ("remove what pm built for this home (generations, selection); keep config.yaml, .env, "
            "plugins/ and profiles/")
    _removal_options(groups.add_parser("uninstall", help=text, description=text))
    profile = groups.add_parser("profile", help="list or delete profiles", description="Profiles of a home.")
    commands = profile.add_subparsers(dest="profile_command", required=True, metavar="COMMAND")
    add_common(commands.add_parser("list", help="the profiles of this home"))
    delete = commands.add_parser("delete", help="delete a profile, then rebuild without it",
                                 description="Delete <home>/profiles/NAME and rebuild the environment without "
                                             "it. Refused while its plugins/ holds plugins, unless "
                                             "--remove-plugins says to remove them too.")
    delete.add_argument("name", metavar="NAME")
    delete.add_argument("--remove-plugins", action="store_true",
                        help="also remove the plugins installed in the profile's plugins/")
    _removal_options(delete)
    add_resolution_options(delete)  # the rebuild without the profile resolves


def run(args: argparse.Namespace) -> int:
    if args.group == "uninstall":
        return _run_removal(args, plan_uninstall(home_of(args)),
                            lambda: uninstall(home_of(args), options_from(args), _reporter(args), dry_run=args.dry_run))
    if args.profile_command == "list":
        return _list(args)
    plan = plan_profile_delete(home_of(args), args.name, remove_plugins=args.remove_plugins)
    return _run_removal(args, plan, lambda: profile_delete(
        home_of(args), args.name, options_from(args), _reporter(args), dry_run=args.dry_run,
        remove_plugins=args.remove_plugins))


def _reporter(args: argparse.Namespace) -> Any:
    return reporter_for(args.json or args.quiet)


def _run_removal(args: argparse.Namespace, plan: RemovalPlan, operate: Any) -> int:
    if not args.json:
        _show(plan, args.dry_run)
    if plan.remove and not (args.dry_run or args.yes or plan.blockers):
        answer = _confirm(plan)
        if answer is not None:
            return answer
    return _tell(args, operate().receipt)


def _show(plan: RemovalPlan, dry_run: bool) -> None:
    title = "uninstall" if plan.what == "uninstall" else f"delete profile {plan.target.name!r}"
    say(f"{title}{' (dry run)' if dry_run else ''}: {plan.target}")
    for path in plan.remove:
        say(f"  remove  {path}")
    for path in plan.keep:
        say(f"  keep    {path}")
    if plan.plugins:
        verb = "remove" if plan.what == "profile-delete" and not plan.blockers else "keep"
        say(f"  plugins ({verb}): {', '.join(plan.plugins)}")


def _confirm(plan: RemovalPlan) -> int | None:
    """None to go ahead; else the exit code of not going ahead."""
    if not sys.stdin.isatty():
        say("error: nothing was removed: confirm with --yes (or see the plan with --dry-run)")
        return EXIT_USAGE
    print("go ahead? [y/N] ", end="", file=sys.stderr, flush=True)
    try:
        answer = input().strip().lower()
    except EOFError:
        answer = ""
    if answer in ("y", "yes"):
        return None
    say("nothing was removed")
    return EXIT_FAILURE


def _tell(args: argparse.Namespace, receipt: Receipt) -> int:
    if failed_early(receipt, args.json):
        tell_steps(receipt.next_steps)
        return receipt.exit_code
    if args.json:
        emit_json(receipt.as_written())
        return receipt.exit_code
    if receipt.exit_code == EXIT_OK:
        say(receipt.extra.get("message", "done"))
    else:
        tell_failure(receipt)
    for warning in receipt.warnings:
        say(f"warning: {warning}")
    if receipt.kind == "uninstall" and receipt.exit_code == EXIT_OK and not receipt.extra.get("dry_run"):
        say("config.yaml, .env, plugins/ and profiles/ were kept; `hermes plugins remove NAME` removes a plugin, "
            "`pip uninstall hermes-pm` (or `uv tool uninstall hermes-pm`) removes the program")
    tell_steps(receipt.next_steps)
    tell_receipt(receipt)
    return receipt.exit_code


def _list(args: argparse.Namespace) -> int:
    primary = environment_home(home_of(args))
    folder = primary / "profiles"
    names = sorted(p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")) \
        if folder.is_dir() else []
    if args.json:
        emit_json({"home": str(primary), "profiles": [{"name": n, "path": str(folder / n)} for n in names]})
        return EXIT_OK
    for name in names:
        print(f"{name}\t{Path(folder / name)}")
    return EXIT_OK
