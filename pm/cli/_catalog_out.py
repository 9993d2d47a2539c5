"""The catalog gate's report for people and CI (``hermes pm catalog check``): the table, the
Markdown for a pull-request comment, GitHub annotations, and the summary under them. Complete,
made to paste: long details wrap at word boundaries, nothing is cut."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pm.ops.catalog_check import Report
    from pm.ops.catalog_verdicts import EntryVerdict

HEADERS = ["entry", "target", "verdict", "partners", "detail"]
_WIDTH = 72  # the detail column's width in the table


def detail(verdict: EntryVerdict) -> str:
    """What the row says beyond its verdict: the cause (the resolver's sentence names core's
    requirement for a collision with core), the group of a collision."""
    if verdict.kind == "ok":
        return verdict.cause or f"{verdict.pins} pins"
    if verdict.kind == "collides":
        return f"in group {', '.join(verdict.group)}: {verdict.cause}"
    return verdict.cause


def _cells(verdict: EntryVerdict) -> list[str]:
    shown = verdict.label + (" (reused)" if verdict.reused else "")
    return [verdict.entry, verdict.target, shown, ", ".join(verdict.partners) or "-", detail(verdict)]


def table(report: Report) -> str:
    """The table, each long detail wrapped over continuation lines; then the summary."""
    from pm.cli._output import table as aligned

    rows: list[list[str]] = []
    for verdict in report.verdicts:
        cells = _cells(verdict)
        partners, details = _wrapped(cells[3], 30), _wrapped(cells[4], _WIDTH)
        for i in range(max(len(partners), len(details))):
            rows.append([*(cells[:3] if i == 0 else ["", "", ""]), _at(partners, i), _at(details, i)])
    return aligned(rows, HEADERS) + "\n\n" + "\n".join(summary(report))


def _wrapped(text: str, width: int) -> list[str]:
    return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False) or ["-"]


def _at(lines: list[str], i: int) -> str:
    return lines[i] if i < len(lines) else ""


def markdown(report: Report) -> str:
    """A Markdown table, every cell whole; the summary under it."""
    lines = ["| " + " | ".join(HEADERS) + " |", "|---|---|---|---|---|"]
    lines += ["| " + " | ".join(_md(cell) for cell in _cells(v)) + " |" for v in report.verdicts]
    return "\n".join([*lines, "", *(f"- {line}" for line in summary(report))])


def _md(cell: str) -> str:
    return cell.replace("\\", "\\\\").replace("|", "\\|").replace("\n", "<br>")


def summary(report: Report) -> list[str]:
    """The together pass per target, what stopped the gate, and the count line
    ("2 of 5 entries refused on 3 of 4 targets")."""
    lines = [_together_line(report, target) for target in report.targets
             if any(t.target == target for t in report.together)]
    lines += [f"the gate could not finish: {why}" for why in report.stopped]
    entries = sorted({v.entry for v in report.verdicts})
    refused = sorted({v.entry for v in report.verdicts if v.kind != "ok"})
    targets = [t for t in report.targets if any(v.target == t and v.kind != "ok" for v in report.verdicts)]
    if refused:
        count = (f"{len(refused)} of {len(entries)} {_plural(len(entries), 'entry', 'entries')} refused on "
                 f"{len(targets)} of {len(report.targets)} {_plural(len(report.targets), 'target', 'targets')}")
    else:
        count = (("the one entry fits" if len(entries) == 1 else f"all {len(entries)} entries fit")
                 + f" on {len(report.targets)} {_plural(len(report.targets), 'target', 'targets')}")
    if report.reused:
        count += f" ({len(report.reused)} judged alone before: reused from --changed-since)"
    return [*lines, count]


def _together_line(report: Report, target: str) -> str:
    passes = [t for t in report.together if t.target == target]
    groups = ["{" + ", ".join(g) + "}" for t in passes for g in t.groups]
    said = f"together on {target}: {len(passes)} {_plural(len(passes), 'resolve', 'resolves')}"
    if groups:
        said += f"; colliding: {'; '.join(groups)}"
    last = passes[-1]
    if last.outcome == "ok":
        said += f"; the {'other ' if groups else ''}{len(last.entries)} entries fit together ({last.pins} pins)"
    elif last.outcome == "failed":
        said += "; the last one failed (not a verdict)"
    return said


def _plural(n: int, one: str, many: str) -> str:
    return one if n == 1 else many


def github(report: Report) -> list[str]:
    """One ``::error`` per entry and target that is not ok, on the entry's own file, naming its
    partners; one for each reason the gate stopped, on the catalog."""
    lines = []
    for v in report.verdicts:
        if v.kind == "ok":
            continue
        where = report.where.get(v.entry)
        file = where.file if where is not None else report.catalog
        said = f"collides with {', '.join(v.partners)}; {detail(v)}" if v.kind == "collides" else detail(v)
        if where is not None and where.declaration not in said:
            said += f" (declared in {where.declaration})"
        lines.append(f"::error file={_property(file)},title={_property(f'{v.entry} on {v.target}: {v.label}')}::"
                     + _data(said))
    lines += [f"::error file={_property(report.catalog)},title=catalog check::{_data(why)}" for why in report.stopped]
    return lines


def _data(text: str) -> str:
    """A workflow command's message, escaped as GitHub's toolkit does."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")
