"""``hermes pm catalog check [CATALOG]``: the acceptance gate a catalog's CI runs (the operation:
:mod:`pm.ops.catalog_check`). A table for people; ``--json`` the report; ``--markdown`` a table for
a pull-request comment; ``--github`` one ``::error`` annotation per refused entry. Exit 0 when
every entry fits alone and together on every target, 3 when one is refused, 1 when one could not
be fetched or resolved."""

from __future__ import annotations

import argparse
from pathlib import Path

from pm.base.errors import UsageError
from pm.cli._common import add_common, existing_home
from pm.cli._output import emit_json, say, table
from pm.inputs.settings import Flags

TOGETHER = "(together)"


def configure(parser: argparse.ArgumentParser) -> None:
    commands = parser.add_subparsers(dest="catalog_command", required=True, metavar="COMMAND")
    check = commands.add_parser("check", help="does every entry resolve with core, alone and together, on every target?")
    add_common(check)  # --home, --json, -q, -v after the subcommand too
    check.add_argument("catalog", nargs="?", help="the catalog file (default: the home's pm.catalog, else the shipped one)")
    check.add_argument("--core", help="the host's pyproject.toml (default: the home's pm.core)")
    check.add_argument("--core-lock", help="core's lock (default: the home's pm.core_lock)")
    check.add_argument("--index-url")
    check.add_argument("--find-links", action="append", metavar="DIR|URL")
    check.add_argument("--no-index", action="store_true")
    check.add_argument("--offline", action="store_true")
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
    from pm.ops.catalog_check import catalog_check

    flags = Flags(home=args.home, core=args.core, core_lock=args.core_lock, index_url=args.index_url,
                  find_links=tuple(args.find_links or ()), no_index=args.no_index, offline=args.offline)
    report = catalog_check(existing_home(args.home), Path(args.catalog) if args.catalog else None, flags,
                           args.python_version, args.platform, [Path(p) for p in args.changed_since],
                           _shard(args.shard))
    if args.json:
        emit_json(report.to_json() | {"receipt_path": str(report.receipt) if report.receipt else None})
    elif args.markdown:
        print(_markdown(report))
    elif args.github:
        for verdict in report.verdicts:
            if verdict.verdict != "ok":
                where = report.files.get(verdict.entry, report.catalog)  # the entry's own file, when it has one
                print(f"::error file={where},title={verdict.entry} on {verdict.target}::"
                      + verdict.finding.replace("\n", " "))
    else:
        _tell(report)
        say(f"receipt: {report.receipt}")
    return report.exit_code


def _shard(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    parts = text.split("/")
    if len(parts) != 2 or not all(p.isdigit() for p in parts) or not 1 <= int(parts[0]) <= int(parts[1]):
        raise UsageError(f"--shard {text!r}: expected I/N with 1 <= I <= N (for example 2/4)")
    return int(parts[0]), int(parts[1])


def _rows(report: object) -> list[list[str]]:
    return [[v.entry, v.target, v.verdict, ", ".join(v.partners) or "-", v.finding[:160] or f"{v.pins} pins"]
            for v in report.verdicts]  # type: ignore[attr-defined]


def _tell(report: object) -> None:
    for name, what in report.fetched.items():  # type: ignore[attr-defined]
        say(f"{name}: {what}")
    print(table(_rows(report), ["entry", "target", "verdict", "partners", "detail"]))


def _markdown(report: object) -> str:
    lines = ["| entry | target | verdict | partners | detail |", "|---|---|---|---|---|"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in _rows(report)]
    return "\n".join(lines)
