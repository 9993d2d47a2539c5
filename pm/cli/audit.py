"""``hermes pm audit [--json] [--strict]``: the selected generation's pins that have published
advisories, with the fix and whether it fits (the operation: :mod:`pm.ops.audit`; this renders
its report). ``--json`` prints the receipt, the report in its ``audit``."""

from __future__ import annotations

import argparse
import sys

from pm.cli._common import home_of, options_from
from pm.cli._output import emit_json, paint, reporter_for, say, table, tell_receipt, terminal_safe
from pm.cli.resolve import tell_resolved
from pm.ops.audit import AuditReport, Finding, audit


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json-api-url", metavar="URL", default=None,
                        help="the index's JSON API base (default: pm.json_api_url, $HERMES_PM_JSON_API_URL, else "
                             ".../pypi/ for an index URL ending in /simple/)")
    parser.add_argument("--strict", action="store_true",
                        help="exit 4 when a pin has an advisory (for CI); without it, advisories exit 0")
    parser.set_defaults(candidate=None)


def run(args: argparse.Namespace) -> int:
    done = audit(home_of(args), options_from(args), reporter_for(args.json or args.quiet),
                 json_api=args.json_api_url, strict=args.strict)
    if args.json:
        emit_json(done.receipt.as_written())
        return done.code
    if done.report is None:
        tell_resolved(done.receipt)
        tell_receipt(done.receipt)
        return done.code
    if done.report.findings:
        print(render(done.report))
    for warning in dict.fromkeys(done.receipt.warnings):
        say(f"{paint('warning', 'yellow', sys.stderr)}: {warning}")
    say(str(done.receipt.extra["message"]))
    tell_receipt(done.receipt)
    return done.code


def render(report: AuditReport) -> str:
    """One row per advisory: package, pinned version, id (aliases), fix and whether it fits; the
    summary and link on a line of their own under it."""
    rows: list[list[str]] = []
    for finding in report.findings:
        advisory = finding.advisory
        ident = advisory.id + (f" ({', '.join(advisory.aliases)})" if advisory.aliases else "")
        rows.append([finding.name, str(finding.pinned), ident, _fix(finding)])
        rows += [["", "", line, ""] for line in (advisory.summary, advisory.link) if line]
    # ids, summaries and links are the index's words: escaped for the terminal
    return terminal_safe(table(rows, ["package", "pinned", "advisory", "fix"]))


def _fix(finding: Finding) -> str:
    if finding.fix is None:
        return "no fixed version published"
    if finding.fits is None:
        return f">={finding.fix}: does not fit (the union does not resolve with it)"
    return f">={finding.fix}: fits ({finding.name} {finding.fits} resolves)"
