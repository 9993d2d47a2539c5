"""The catalog's acceptance gate: does every entry fit the host, alone and together, on every
target? (``hermes pm catalog check``, issue 23.)

Each entry is fetched at its pin (git at the commit, archives by sha256, as ``hermes plugins
install`` fetches them) into a scratch folder (:mod:`.scratch`: removed on SIGINT and SIGTERM too,
and swept by the next run when a ``kill -9`` left it), and its declaration read without importing
anything. Then, per target (every pair of ``--python-version`` and ``--platform`` values; the
running interpreter when none is given):

- **solo**: core + the entry alone; a refusal is the entry's own (with core).
- **together**: core + every entry that passed solo, in one resolve; when it is refused, the
  entries involved are named from the resolver's own causes (``Conflict.plugins``), that group is
  set aside and the rest resolved again, until the rest resolves: every colliding pair or group is
  named from its own proof, never found by trial resolutions (DESIGN invariant 4).

The report is data (:class:`Report`), kept in a receipt of kind ``catalog-check`` (its
``catalog_check`` field); nothing is installed and no home is changed.
"""

from __future__ import annotations

import itertools
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pm.base.errors import EXIT_CONFLICT, EXIT_FAILURE, EXIT_OK, PmError
from pm.inputs.catalog import Catalog, Entry, load_catalog
from pm.inputs.core import load_core
from pm.inputs.settings import Flags, Settings
from pm.inputs.target import Target
from pm.inputs.union import Origin, Tagged, Union
from pm.ops.scratch import scratch_folder

#: Where entries are fetched: ``$TMPDIR/hermes-pm-catalog-*``, swept when a killed run left one.
SCRATCH_PREFIX = "hermes-pm-catalog-"

if TYPE_CHECKING:
    from pm.index.base import Source
    from pm.inputs.declaration import Declaration


@dataclass(frozen=True)
class Verdict:
    """One entry (or the together pass) on one target."""

    entry: str  # an entry's name, or "(together)"
    target: str
    verdict: str  # "ok", "conflict", "failed"
    partners: tuple[str, ...] = ()  # entries named by the resolver's causes
    finding: str = ""  # the message of the refusal or failure
    pins: int = 0
    digest: str = ""  # sha256 of the resolution's name==version lines, when it resolved
    groups: tuple[tuple[str, ...], ...] = ()  # per finding of a refusal, the entries its causes name

    def to_json(self) -> dict[str, Any]:
        return {"entry": self.entry, "target": self.target, "verdict": self.verdict, "partners": list(self.partners),
                "finding": self.finding, "pins": self.pins, "pins_digest": self.digest,
                "groups": [list(g) for g in self.groups]}


@dataclass
class Report:
    catalog: str
    targets: list[str]
    fetched: dict[str, str] = field(default_factory=dict)  # entry -> declaration file, or why not
    verdicts: list[Verdict] = field(default_factory=list)
    receipt: Path | None = None
    pins: dict[str, str] = field(default_factory=dict)  # entry -> its pin, as checked
    files: dict[str, str] = field(default_factory=dict)  # entry -> its own file (the directory form)
    requirements: dict[str, list[str]] = field(default_factory=dict)  # entry -> its declared requirements
    basis: str = ""  # core, its lock and the sources: a later --changed-since reuses verdicts only on the same
    reused: list[str] = field(default_factory=list)  # entries whose solo verdicts came from --changed-since

    @property
    def exit_code(self) -> int:
        kinds = {v.verdict for v in self.verdicts}
        if "failed" in kinds or any(f.startswith("not fetched") for f in self.fetched.values()):
            return EXIT_FAILURE
        return EXIT_CONFLICT if "conflict" in kinds else EXIT_OK

    def to_json(self) -> dict[str, Any]:
        return {"catalog": self.catalog, "targets": self.targets, "fetched": self.fetched,
                "verdicts": [v.to_json() for v in self.verdicts], "exit_code": self.exit_code, "pins": self.pins,
                "requirements": self.requirements, "basis": self.basis, "reused": self.reused, "files": self.files}


def catalog_check(home: Path, catalog: Path | None, flags: Flags, python_versions: list[str],
                  platforms: list[str], changed_since: list[Path] | None = None,
                  shard: tuple[int, int] | None = None) -> Report:
    """``hermes pm catalog check``: the home's settings (index, core) and catalog (unless
    ``catalog`` names one), the report, and its receipt written in the home."""
    from pm.inputs.config import read_config
    from pm.inputs.settings import resolve_settings
    from pm.inputs.target import target_for
    from pm.ops.install import catalog_for
    from pm.ops.receipts import write
    from pm.records.receipt import Draft

    settings = resolve_settings(flags, read_config(home))
    chosen = load_catalog(catalog.resolve()) if catalog is not None else catalog_for(home)
    previous = _merged([_previous(p) for p in changed_since]) if changed_since else None
    report = check_catalog(chosen, settings, target_for(None), python_versions, platforms, previous, shard)
    from pm.ops.receipts import tool_facts

    draft = Draft("catalog-check", home)
    draft.record(catalog_check=report.to_json())
    outcome = {EXIT_OK: "ok", EXIT_CONFLICT: "conflict"}.get(report.exit_code, "failed")
    report.receipt = write(draft.finish(outcome, report.exit_code, tool_facts())).path
    return report


def check_catalog(catalog: Catalog, settings: Settings, base: Target, python_versions: list[str],
                  platforms: list[str], previous: dict[str, Any] | None = None,
                  shard: tuple[int, int] | None = None) -> Report:
    """Fetch every entry at its pin, then judge each alone and all together on every target.
    With ``previous`` (an earlier report on the same core, sources and targets), an entry whose
    pin is unchanged is neither fetched nor judged alone again: its solo verdicts and requirements
    are taken from it; the together pass always runs. With ``shard`` (i, n), only every n-th entry
    (by name, from the i-th) is judged alone and the together pass is left to the merge: a final
    run with every shard's report as ``previous``."""
    from pm.inputs.foreign import foreign_target

    targets = [foreign_target(base, v, p) if (v or p) else base
               for v, p in itertools.product(python_versions or [None], platforms or [None])]  # type: ignore[list-item]
    report = Report(str(catalog.file), [_label(t) for t in targets], basis=_basis(settings))
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
        declarations = _fetch_all(tuple(e for e in live if e.name not in unchanged), scratch, report)
        _pause_point(scratch)
        report.pins = {e.name: e.pin for e in live}
        report.files = {e.name: e.file for e in catalog.entries if e.file}
        carried = _carried(report, previous, unchanged) if previous is not None else {}
        for target in targets:
            _judge(report, declarations, settings, target, carried, together=shard is None)
    return report


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
            "verdicts": [v for r in reports for v in r["verdicts"] if v["entry"] != "(together)"]}


def _basis(settings: Settings) -> str:
    """What a solo verdict depends on besides the entry: core, its lock, the sources."""
    import hashlib
    import json

    def digest(path: Path | None) -> str | None:
        return hashlib.sha256(path.read_bytes()).hexdigest() if path is not None and path.is_file() else None

    blob = [digest(settings.core), digest(settings.core_lock), list(settings.index_urls),
            [str(f) for f in settings.find_links]]
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
    """The unchanged entries' verdicts and requirements, from ``previous``."""
    from packaging.requirements import Requirement

    from pm.inputs.declaration import Declaration

    carried = {}
    for name in sorted(unchanged):
        requirements = tuple(Requirement(r) for r in previous["requirements"][name])
        carried[name] = Declaration(Path(previous["fetched"].get(name, "plugin.yaml")), "carried", "", requirements)
        report.fetched[name] = previous["fetched"].get(name, "")
        report.requirements[name] = list(previous["requirements"][name])
        report.reused.append(name)
        report.verdicts += [Verdict(v["entry"], v["target"], v["verdict"], tuple(v["partners"]), v["finding"],
                                    v["pins"], v.get("pins_digest", ""), tuple(tuple(g) for g in v.get("groups", [])))
                            for v in previous["verdicts"] if v["entry"] == name]
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


def _label(target: Target) -> str:
    return f"{target.platform} / Python {target.python_version}"


def _fetch_all(entries: tuple[Entry, ...], scratch: Path, report: Report) -> dict[str, Declaration]:
    from pm.env.plugin_fetch import SharedFetch
    from pm.inputs.declaration import read_declaration
    from pm.inputs.manifest import read_manifest

    found: dict[str, Declaration] = {}
    fetched = SharedFetch(scratch)  # one checkout per repository and commit, whatever shares it
    for entry in entries:
        try:
            root = fetched.root(entry)
            declaration = read_declaration(root, read_manifest(root))
        except PmError as exc:
            report.fetched[entry.name] = f"not fetched: {exc}"
            continue
        if declaration is None:
            report.fetched[entry.name] = "no declaration at the plugin root (sidecar-only): nothing to check"
            continue
        report.fetched[entry.name] = str(declaration.file.relative_to(root))
        report.requirements[entry.name] = [str(r) for r in declaration.requirements]
        found[entry.name] = declaration
    return found


def _judge(report: Report, declarations: dict[str, Declaration], settings: Settings, target: Target,
           carried: dict[str, Declaration], *, together: bool = True) -> None:
    from pm.ops.transaction import policy_for

    core = load_core(settings.core, settings.core_lock, target.environment)
    policy = policy_for(settings)
    label = _label(target)
    with _sources(settings, target) as source:
        passed = [n for n in carried if any(v.entry == n and v.target == label and v.verdict == "ok"
                                            for v in report.verdicts)]
        for name, declaration in declarations.items():
            verdict = _resolve(name, _union(core, {name: declaration}), target, source, policy, label)
            report.verdicts.append(verdict)
            if verdict.verdict == "ok":
                passed.append(name)
        if together:
            _together(report, {**carried, **declarations}, sorted(passed), core, target, source, policy, label)


def _together(report: Report, declarations: dict[str, Declaration], passed: list[str], core: Any, target: Target,
              source: Source, policy: Any, label: str) -> None:
    """All solo-passing entries in one resolve; while it is refused, the group its causes name is
    recorded and set aside, and the rest resolved again: every colliding pair or group is named,
    each from a proof, never found by trying combinations."""
    remaining = list(passed)
    while len(remaining) > 1:
        verdict = _resolve("(together)", _union(core, {n: declarations[n] for n in remaining}), target, source,
                           policy, label)
        report.verdicts.append(verdict)
        group = [n for n in remaining if n in verdict.partners]
        if verdict.verdict != "conflict" or not group:
            return  # resolved, or a failure (or a collision with core alone) that names no entry to set aside
        remaining = [n for n in remaining if n not in group]


def _union(core: Any, declarations: dict[str, Declaration]) -> Union:
    tagged = [Tagged(r, Origin.core()) for r in core.requirements]
    for name, declaration in declarations.items():
        origin = Origin(name, str(declaration.file))
        tagged += [Tagged(r, origin) for r in declaration.requirements]
    return Union(core, (), tuple(tagged))


def _resolve(entry: str, union: Union, target: Target, source: Source, policy: Any, label: str) -> Verdict:
    from pm.resolver import Conflict
    from pm.resolver.resolve import resolve_union

    try:
        resolution = resolve_union(union, target, source, policy)
    except Conflict as conflict:
        partners = tuple(p for p in conflict.plugins if p != entry)
        groups = tuple(dict.fromkeys(
            group for f in conflict.findings
            if (group := tuple(sorted({c.origin.plugin for c in f.causes if c.origin.plugin and c.origin.plugin != entry})))))
        return Verdict(entry, label, "conflict", partners, str(conflict), groups=groups)
    except PmError as exc:
        return Verdict(entry, label, "failed", (), str(exc))
    import hashlib

    lines = "\n".join(sorted(f"{p.name}=={p.version}" for p in resolution.pins))
    return Verdict(entry, label, "ok", pins=len(resolution.pins), digest=hashlib.sha256(lines.encode()).hexdigest())


def _sources(settings: Settings, target: Target) -> Any:
    from pm.index import open_sources

    return open_sources(settings.index_urls, settings.find_links, offline=settings.offline, refresh=settings.refresh,
                        tags=target.tags)
