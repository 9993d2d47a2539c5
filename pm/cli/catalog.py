"""``hermes pm catalog check [CATALOG]``: the acceptance gate a catalog's CI runs (the operation:
:mod:`pm.ops.catalog_check`). A table for people; ``--json`` the report; ``--markdown`` a table for
a pull-request comment; ``--github`` one ``::error`` annotation per entry that is not ok, on its
own file (:mod:`pm.cli._catalog_out`). Exit 0 when every entry fits alone and together on every
target, 3 when every entry was judged and one is refused (or could not be fetched or resolved:
that entry's failure), 1 when the gate itself could not run. No home is needed, and none is
written: ``--receipts DIR`` keeps the receipt."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from pm.base.errors import UsageError
from pm.cli._common import add_common, existing_home, flags_from
from pm.cli._output import emit_json, say


def configure(parser: argparse.ArgumentParser) -> None:
    commands = parser.add_subparsers(dest="catalog_command", required=True, metavar="COMMAND")
    check = commands.add_parser("check", help="does every entry resolve with core, alone and together, on every target?")
    add_common(check)  # --home, --json, -q, -v after the subcommand too
    check.add_argument("catalog", nargs="?", help="the catalog file (default: the home's pm.catalog, else the shipped one)")
    check.add_argument("--core", help="the host's pyproject.toml (default: the home's pm.core)")
    check.add_argument("--core-lock", help="core's lock (default: the home's pm.core_lock)")
    check.add_argument("--index-url")
    check.add_argument("--extra-index-url", action="append", default=[], metavar="URL",
                       help="another index, searched before --index-url (repeatable)")
    check.add_argument("--find-links", action="append", metavar="DIR|URL")
    check.add_argument("--no-index", action="store_true")
    check.add_argument("--offline", action="store_true")
    check.add_argument("--refresh", action="store_true", help="ask the index for every page again")
    check.add_argument("--prereleases", choices=["allow", "pep440"], help="pre-release policy (config pm.prereleases)")
    check.add_argument("--exclude-newer", metavar="DATE", help="ignore files uploaded after DATE or 'N days' ago")
    check.add_argument("--allow-build", action="append", default=[], metavar="NAME",
                       help="allow building NAME from its sdist (config pm.allow_builds)")
    check.add_argument("--constraint", action="append", default=[], metavar="FILE",
                       help="constrain versions by FILE's requirement lines (repeatable; config pm.constraints)")
    check.add_argument("--override", action="append", default=[], metavar="FILE",
                       help="replace every requirement on a project by FILE's lines on it (repeatable; config "
                            "pm.overrides)")
    check.add_argument("--receipts", metavar="DIR", help="write the receipt into DIR (default: no receipt; a home "
                       "is never written)")
    check.add_argument("--python-version", action="append", default=[], metavar="X.Y", help="repeatable")
    check.add_argument("--platform", "--python-platform", dest="platform", action="append", default=[],
                       metavar="PLATFORM", help="uv's --python-platform names; repeatable")
    check.add_argument("--changed-since", metavar="REPORT", action="append", default=[],
                       help="an earlier report (--json output or its receipt): entries whose pin is unchanged keep "
                            "their verdicts alone and are not fetched; the together pass runs again. Repeatable: "
                            "every shard's report, to merge them")
    check.add_argument("--shard", metavar="I/N", help="judge alone only every N-th entry from the I-th (by name); "
                       "no together pass: merge the shards' reports with --changed-since")
    shown = check.add_mutually_exclusive_group()
    shown.add_argument("--markdown", action="store_true", help="a Markdown table (for a pull-request comment)")
    shown.add_argument("--github", action="store_true", help="GitHub Actions ::error annotations")


def run(args: argparse.Namespace) -> int:
    from pm.cli import _catalog_out as out
    from pm.ops.catalog_check import catalog_check

    # the targets are the repeatable --python-version / --platform, not one foreign target
    flags = replace(flags_from(args), python_version=None, platform=None)
    home = existing_home(args.home, creates=True)  # a given --home must exist; the default one need not
    report = catalog_check(home, Path(args.catalog) if args.catalog else None, flags, args.python_version,
                           args.platform, [Path(p) for p in args.changed_since], _shard(args.shard),
                           Path(args.receipts) if args.receipts else None)
    if args.json:
        emit_json(report.to_json() | {"receipt_path": str(report.receipt) if report.receipt else None})
    elif args.markdown:
        print(out.markdown(report))
    elif args.github:
        for line in out.github(report):
            print(line)
    else:
        for name, what in report.fetched.items():
            say(f"{name}: {what}")
        print(out.table(report))
        if report.receipt is not None:
            say(f"receipt: {report.receipt}")
    return report.exit_code


def _shard(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    parts = text.split("/")
    if len(parts) != 2 or not all(p.isdigit() for p in parts) or not 1 <= int(parts[0]) <= int(parts[1]):
        raise UsageError(f"--shard {text!r}: expected I/N with 1 <= I <= N (for example 2/4)")
    return int(parts[0]), int(parts[1])
