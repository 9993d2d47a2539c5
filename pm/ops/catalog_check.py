"""The catalog's acceptance gate: does every entry fit the host, alone and together, on every
target? (``hermes pm catalog check``, issues 23 and 35.)

Each entry is fetched at its pin (git at the commit, archives by sha256, as ``hermes plugins
install`` fetches them) into a scratch folder (:mod:`.scratch`: removed on SIGINT and SIGTERM too,
and swept by the next run when a ``kill -9`` left it), and its declaration read without importing
anything. Then, per target (every pair of ``--python-version`` and ``--platform`` values; the
running interpreter when none is given), :mod:`pm.ops.catalog_judge` judges every entry with
core alone, then all that fit alone together, naming every colliding pair or group from its own
proof, never from trial resolutions (DESIGN invariant 4).

The report is data (:class:`Report`): one :class:`~pm.ops.catalog_verdicts.EntryVerdict` per
entry and target, each naming the entry as its maintainer has it (its file, ``repo@sha``, the
declaration's path; never the scratch checkout), and the together pass's resolves. Nothing is
installed and no home is changed or needed: the receipt (kind ``catalog-check``, the report in
its ``catalog_check`` field) is written to the folder the caller names, or nowhere.
"""

from __future__ import annotations

import itertools
import os
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pm.base.errors import EXIT_CONFLICT, EXIT_FAILURE, EXIT_OK, PmError
from pm.inputs.catalog import Catalog, Entry, load_catalog
from pm.inputs.settings import Flags, Settings
from pm.inputs.target import Target
from pm.ops.catalog_verdicts import EntryVerdict, TogetherPass, Where
from pm.ops.scratch import scratch_folder

#: Where entries are fetched: ``$TMPDIR/hermes-pm-catalog-*``, swept when a killed run left one.
SCRATCH_PREFIX = "hermes-pm-catalog-"

if TYPE_CHECKING:
    from pm.inputs.declaration import Declaration


NOT_READ = "declaration not read: "
NOTHING_TO_CHECK = "no declaration at the plugin root (sidecar-only): nothing to check"


@dataclass
class Report:
    """The gate's findings: per entry and target one :class:`EntryVerdict` (``verdicts``), the
    together pass's resolves (``together``), and what stopped the gate (``stopped``: the index
    failed, core could not be read), when anything did."""

    catalog: str
    targets: list[str]
    fetched: dict[str, str] = field(default_factory=dict)  # entry -> declaration file, or why not
    verdicts: list[EntryVerdict] = field(default_factory=list)
    receipt: Path | None = None
    pins: dict[str, str] = field(default_factory=dict)  # entry -> its pin, as checked
    files: dict[str, str] = field(default_factory=dict)  # entry -> its own file (the directory form)
    requirements: dict[str, list[str]] = field(default_factory=dict)  # entry -> its declared requirements
    basis: str = ""  # core, its lock and the sources: a later --changed-since reuses verdicts only on the same
    reused: list[str] = field(default_factory=list)  # entries whose solo verdicts came from --changed-since
    together: list[TogetherPass] = field(default_factory=list)
    where: dict[str, Where] = field(default_factory=dict)  # entry -> its file, repo@sha and declaration path
    stopped: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """1 only when the gate itself could not run; 3 when every entry was judged and one is not
        ok (an entry that could not be fetched or resolved is that entry's failure); else 0."""
        if self.stopped or any(v.stops_the_gate for v in self.verdicts):
            return EXIT_FAILURE
        return EXIT_CONFLICT if any(v.kind != "ok" for v in self.verdicts) else EXIT_OK

    def verdict(self, entry: str, target: str) -> EntryVerdict | None:
        return next((v for v in self.verdicts if v.entry == entry and v.target == target), None)

    def to_json(self) -> dict[str, Any]:
        return {"catalog": self.catalog, "targets": self.targets, "fetched": self.fetched,
                "verdicts": [v.to_json() | {"where": self.where[v.entry].to_json()} if v.entry in self.where
                             else v.to_json() for v in self.verdicts],
                "together": [t.to_json() for t in self.together], "stopped": self.stopped,
                "exit_code": self.exit_code, "pins": self.pins, "requirements": self.requirements,
                "basis": self.basis, "reused": self.reused, "files": self.files}


def catalog_check(home: Path, catalog: Path | None, flags: Flags, python_versions: list[str],
                  platforms: list[str], changed_since: list[Path] | None = None,
                  shard: tuple[int, int] | None = None, receipts: Path | None = None) -> Report:
    """``hermes pm catalog check``: the home's settings (index, core) and catalog (unless
    ``catalog`` names one), and the report. The home need not exist (a bare CI runner: the flags
    say everything) and is never written: the receipt goes to the ``receipts`` folder, or nowhere."""
    from pm.inputs.config import read_config
    from pm.inputs.settings import resolve_settings
    from pm.inputs.target import target_for
    from pm.ops.install import catalog_for

    settings = resolve_settings(flags, read_config(home))
    chosen = load_catalog(catalog.resolve()) if catalog is not None else catalog_for(home)
    previous = _merged([_previous(p) for p in changed_since]) if changed_since else None
    report = check_catalog(chosen, settings, target_for(None), python_versions, platforms, previous, shard,
                           shown=catalog)
    if receipts is not None:
        report.receipt = _receipt(home, report, receipts)
    return report


def _receipt(home: Path, report: Report, folder: Path) -> Path | None:
    from pm.ops.receipts import tool_facts, write_to
    from pm.records.receipt import Draft

    draft = Draft("catalog-check", home)
    draft.record(catalog_check=report.to_json())
    outcome = {EXIT_OK: "ok", EXIT_CONFLICT: "conflict"}.get(report.exit_code, "failed")
    return write_to(folder, draft.finish(outcome, report.exit_code, tool_facts()))


def check_catalog(catalog: Catalog, settings: Settings, base: Target, python_versions: list[str],
                  platforms: list[str], previous: dict[str, Any] | None = None,
                  shard: tuple[int, int] | None = None, shown: Path | None = None) -> Report:
    """Fetch every entry at its pin, then judge each alone and all together on every target.
    With ``previous`` (an earlier report on the same core, sources and targets), an entry whose
    pin is unchanged is neither fetched nor judged alone again: its solo verdicts and requirements
    are taken from it; the together pass always runs. With ``shard`` (i, n), only every n-th entry
    (by name, from the i-th) is judged alone and the together pass is left to the merge: a final
    run with every shard's report as ``previous``. ``shown``: the catalog as the user named it
    (files are told relative to it)."""
    from pm.inputs.foreign import foreign_target
    from pm.ops.catalog_judge import judge

    targets = [foreign_target(base, v, p) if (v or p) else base
               for v, p in itertools.product(python_versions or [None], platforms or [None])]  # type: ignore[list-item]
    report = Report(str(shown or catalog.file), [_label(t) for t in targets], basis=_basis(settings))
    if previous is not None and (previous.get("basis") != report.basis or previous.get("targets") != report.targets):
        previous = None  # another core, other sources or other targets: nothing carries over
    with scratch_folder(SCRATCH_PREFIX) as scratch:
        live = tuple(e for e in catalog.entries if not catalog.is_removed(e.name))
        for name in sorted({e.name for e in catalog.entries} - {e.name for e in live}):
            report.fetched[name] = f"removed: on the catalog's kill list{catalog.why_removed(name)}, not checked"
        if shard is not None:
            live = tuple(e for i, e in enumerate(sorted(live, key=lambda e: e.name)) if i % shard[1] == shard[0] - 1)
        unchanged = {e.name for e in live if previous is not None and previous.get("pins", {}).get(e.name) == e.pin
                     and e.name in previous.get("requirements", {})}
        report.where = {e.name: _where(e, catalog, shown) for e in live}
        declarations = _fetch_all(tuple(e for e in live if e.name not in unchanged), Path(scratch), report)
        _pause_point(Path(scratch))
        report.pins = {e.name: e.pin for e in live}
        report.files = {e.name: report.where[e.name].file for e in catalog.entries if e.file and e.name in report.where}
        carried = _carried(report, previous, unchanged) if previous is not None else {}
        for target in targets:
            _unfetched(report, _label(target))
            judge(report, declarations, carried, settings, target, _label(target), together=shard is None)
    return report


def _where(entry: Entry, catalog: Catalog, shown: Path | None) -> Where:
    """The entry's file as the user named the catalog (a relative argument gives relative files)."""
    file = Path(entry.file) if entry.file else catalog.file
    if shown is not None:
        try:
            file = shown / file.relative_to(catalog.file) if entry.file else shown
        except ValueError:
            pass
    source = f"{entry.git}@{entry.commit}" if entry.git else f"{entry.archive}@sha256:{entry.sha256}"
    from pm.base.urls import redact_url

    return Where(str(file), redact_url(source))


def _unfetched(report: Report, label: str) -> None:
    """Each entry that was not fetched, or whose declaration could not be read, is not judged, on
    every target: its own failure."""
    for name, why in report.fetched.items():
        if why == NOTHING_TO_CHECK:  # a row all the same: every entry is on the table
            report.verdicts.append(EntryVerdict(name, label, "ok", why))
        elif why.startswith(("not fetched", NOT_READ)) and name not in report.reused:
            kind = "not-fetched" if why.startswith("not fetched") else "not-judged"
            report.verdicts.append(EntryVerdict(name, label, kind, why, failure="" if kind == "not-fetched" else "input"))


def _merged(reports: list[dict[str, Any]]) -> dict[str, Any]:
    """Several reports (the shards of one check) as one ``previous``: their entries' pins,
    requirements and solo verdicts together; they must agree on the basis and the targets."""
    first = reports[0]
    for other in reports[1:]:
        if (other.get("basis"), other.get("targets")) != (first.get("basis"), first.get("targets")):
            from pm.base.errors import UsageError

            raise UsageError("--changed-since: the reports were made on different cores, sources or targets")
    return {"basis": first.get("basis"), "targets": first.get("targets"),
            "pins": {k: v for r in reports for k, v in r.get("pins", {}).items()},
            "requirements": {k: v for r in reports for k, v in r.get("requirements", {}).items()},
            "fetched": {k: v for r in reports for k, v in r.get("fetched", {}).items()},
            "verdicts": [v for r in reports for v in r["verdicts"]]}


def _basis(settings: Settings) -> str:
    """What a solo verdict depends on besides the entry: core, its lock, the sources, the
    resolution policy and the operator's constraints and overrides."""
    import hashlib
    import json

    def digest(path: Path | None) -> str | None:
        return hashlib.sha256(path.read_bytes()).hexdigest() if path is not None and path.is_file() else None

    blob: list[Any] = [digest(settings.core), digest(settings.core_lock), list(settings.index_urls),
            [str(f) for f in settings.find_links]]
    policy = [settings.prereleases, settings.exclude_newer, sorted(settings.allow_builds),
              [str(c) for c in settings.constraints], [str(o) for o in settings.overrides]]
    if any(policy):  # reports made before these counted stay comparable when none is set
        blob.append(policy)
    return hashlib.sha256(json.dumps(blob).encode()).hexdigest()


def _previous(path: Path) -> dict[str, Any]:
    import json

    from pm.base.errors import InputError

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError.one(path, None, f"is not a catalog check report (--changed-since): {exc}") from None
    data = data.get("catalog_check", data) if isinstance(data, dict) else None  # a receipt holds the report
    if not isinstance(data, dict) or not isinstance(data.get("verdicts"), list):
        raise InputError.one(path, None, "is not a catalog check report (--changed-since): no verdicts")
    return data


def _carried(report: Report, previous: dict[str, Any], unchanged: set[str]) -> dict[str, Declaration]:
    """The unchanged entries' verdicts alone and requirements, from ``previous``."""
    from packaging.requirements import Requirement

    from pm.inputs.declaration import Declaration

    carried = {}
    for name in sorted(unchanged):
        requirements = tuple(Requirement(r) for r in previous["requirements"][name])
        carried[name] = Declaration(Path(previous["fetched"].get(name, "plugin.yaml")), "carried", "", requirements)
        report.fetched[name] = previous["fetched"].get(name, "")
        report.requirements[name] = list(previous["requirements"][name])
        report.reused.append(name)
        report.where[name] = _located(report.where[name], report.fetched[name], previous, name)
        report.verdicts += [EntryVerdict.from_json(v) for v in previous["verdicts"]
                            if v["entry"] == name and v["target"] in report.targets]
    return carried


def _pause_point(scratch: Path) -> None:
    """Test hook: with ``HERMES_PM_PAUSE_AT=catalog-fetched``, write ``<scratch>/.paused`` once
    every entry is fetched and wait to be killed (as :func:`pm.env.build.pause_point`)."""
    from pm.env.build import PAUSE_ENV

    if os.environ.get(PAUSE_ENV) != "catalog-fetched":
        return
    (scratch / ".paused").write_text(str(os.getpid()))
    while True:  # pragma: no cover - ended by a signal from the test
        time.sleep(0.05)


def _located(where: Where, fetched: str, previous: dict[str, Any], name: str) -> Where:
    told = next((v.get("where", {}).get("path") for v in previous["verdicts"] if v["entry"] == name), None)
    return replace(where, path=told or fetched)


def _label(target: Target) -> str:
    return f"{target.platform} / Python {target.python_version}"


def _fetch_all(entries: tuple[Entry, ...], scratch: Path, report: Report) -> dict[str, Declaration]:
    from pm.env.plugin_fetch import SharedFetch
    from pm.inputs.declaration import read_declaration
    from pm.inputs.manifest import read_manifest

    found: dict[str, Declaration] = {}
    fetched = SharedFetch(scratch)  # one checkout per repository and commit, whatever shares it
    for entry in entries:
        where = report.where[entry.name]
        staging = fetched.staging(entry)
        try:
            root = fetched.root(entry)
        except PmError as exc:
            report.fetched[entry.name] = f"not fetched: {_relocated(str(exc), staging, where)}"
            continue
        try:
            declaration = read_declaration(root, read_manifest(root))
        except PmError as exc:
            report.fetched[entry.name] = f"{NOT_READ}{_relocated(str(exc), staging, where)}"
            continue
        if declaration is None:
            report.fetched[entry.name] = NOTHING_TO_CHECK
            continue
        report.fetched[entry.name] = str(declaration.file.relative_to(root))
        report.where[entry.name] = replace(where, path=str(declaration.file.relative_to(staging / "src")))
        report.requirements[entry.name] = [str(r) for r in declaration.requirements]
        found[entry.name] = declaration
    return found


def _relocated(text: str, staging: Path, where: Where) -> str:
    """``text`` with the scratch checkout's paths told as the entry's ``repo@sha:path``: a
    finding never names a folder that is gone after the run."""
    for folder in dict.fromkeys((staging, staging.resolve())):
        text = text.replace(f"{folder / 'src'}/", f"{where.source}:").replace(str(folder / "src"), where.source)
        text = text.replace(str(folder), where.source)
    return text
