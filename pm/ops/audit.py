"""``hermes pm audit`` as an operation: the selected generation's pins that have published
advisories (:mod:`pm.index.advisories`), each with the lowest fixed version above the pin and
whether that fix fits: the union resolved with the package constrained to it (``name>=FIX``, a
constraint as ``pm.constraints`` has, :mod:`pm.resolver.imposing`), checked as next steps are.

Read-only, like ``outdated``: no home lock, nothing built or selected. Each pin's advisories come
from the JSON API of the index that served it (the generation's record names it), through pm's
HTTP client and cache; ``--offline`` answers from the cache only.

Exit 0 when it could tell, advisories or not (information, as ``outdated``); with ``strict``
(``--strict``, for CI) 4 when some pin has one, as a not-ready environment; 1 when it could not
tell: no generation selected, an index with no advisories to give (kind
``advisories-unavailable``, never "no advisories"), a failed request.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.requirements import Requirement
from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import Version

from pm.base.commands import hermes
from pm.base.errors import EXIT_NOT_READY, EXIT_OK, PmError
from pm.env import generations
from pm.index.advisories import VARIABLE, AdvisoriesUnavailable, Advisory, json_api_base, release_url
from pm.ops.options import SILENT, Options, Reporter
from pm.ops.outdated import NoGeneration
from pm.ops.transaction import Transaction, cache_dir, policy_of, source_of, transaction
from pm.records.receipt import Receipt

if TYPE_CHECKING:
    from pm.index.advisories import AdvisoryClient
    from pm.inputs.collect import Inputs

#: Where a fix's constraint is said to come from while it is checked.
CHECKED_SOURCE = "the audit's fix check"


@dataclass(frozen=True)
class Finding:
    """One advisory of one pin: the lowest ``fix`` above the pin (None: none published), and the
    version the union resolves to with the package constrained to it (``fits``; None: it does
    not resolve, or there is no fix to check)."""

    name: NormalizedName
    pinned: Version
    advisory: Advisory
    fix: Version | None
    fits: Version | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "version": str(self.pinned), **self.advisory.to_json(),
                "fix": None if self.fix is None else str(self.fix), "fix_fits": self.fits is not None,
                "fix_resolves_to": None if self.fits is None else str(self.fits)}


@dataclass(frozen=True)
class AuditReport:
    """The selected ``generation``'s id, how many pins were looked up, and the findings."""

    generation: str
    checked: int
    findings: tuple[Finding, ...]

    @property
    def vulnerable(self) -> tuple[NormalizedName, ...]:
        return tuple(dict.fromkeys(f.name for f in self.findings))

    def to_json(self) -> dict[str, Any]:
        return {"generation": self.generation, "checked": self.checked, "vulnerable": list(self.vulnerable),
                "advisories": [f.to_json() for f in self.findings]}


@dataclass(frozen=True)
class Report:
    receipt: Receipt
    report: AuditReport | None = None

    @property
    def code(self) -> int:
        return self.receipt.exit_code


def audit(home: Path, options: Options | None = None, reporter: Reporter = SILENT, *,
          json_api: str | None = None, strict: bool = False) -> Report:
    """The audit of ``home``'s selected generation (module docstring)."""
    txn = transaction(home, "audit", lambda t: _audit(t, json_api, strict), options, reporter, lock=False,
                      gather_inputs=False)
    return Report(txn.receipt, txn.value)


def json_api_setting(txn: Transaction, flag: str | None) -> str | None:
    """The JSON API base as given: the flag, else ``$HERMES_PM_JSON_API_URL``, else
    ``pm.json_api_url`` of the home's config.yaml, else None (derived per index)."""
    from pm.inputs.config import read_config

    if flag:
        return flag
    if value := os.environ.get(VARIABLE):
        return value
    found = read_config(txn.home, watch=txn.watch).pm.get("json_api_url")
    return str(found) if found else None


def pins_with_urls(record: dict[str, Any], given: str | None) -> list[tuple[NormalizedName, Version, str, str]]:
    """(name, version, index, JSON URL) of each pin of a generation's record; an index with no
    JSON API known is :class:`AdvisoriesUnavailable`."""
    found = []
    for item in record["resolution"]["packages"]:
        index = str((item.get("file") or {}).get("index") or (item.get("file") or {}).get("url") or "")
        base = json_api_base(index, given)
        if base is None:
            raise AdvisoriesUnavailable(index or item["name"], "it has no JSON API that pm knows of (pm.json_api_url "
                                        f"or ${VARIABLE} names one)")
        found.append((canonicalize_name(item["name"]), Version(item["version"]), index,
                      release_url(base, item["name"], item["version"])))
    return found


def cached_badges(txn: Transaction, record: dict[str, Any]) -> dict[NormalizedName, tuple[str, ...]]:
    """The advisory ids of each pin of ``record`` as the cache holds them from an earlier audit
    (what ``outdated``'s badge shows): no request; a pin never audited, or of an index with no
    JSON API, has none here."""
    from pm.index.advisories import cached_advisories
    from pm.index.cache import Cache

    given = json_api_setting(txn, None)
    cache = Cache(cache_dir())
    found: dict[NormalizedName, tuple[str, ...]] = {}
    for item in record["resolution"]["packages"]:
        base = json_api_base(str((item.get("file") or {}).get("index") or ""), given)
        advisories = cached_advisories(cache, release_url(base, item["name"], item["version"])) if base else None
        if advisories:
            found[canonicalize_name(item["name"])] = tuple(a.id for a in advisories)
    return found


def _audit(txn: Transaction, flag: str | None, strict: bool) -> AuditReport:
    generation = generations.selected(txn.home, watch=txn.watch)
    if generation is None:
        txn.draft.step(hermes("pm", "sync", home=txn.options.shown_home), "build a generation; then audit it")
        raise NoGeneration(txn.home)
    inputs = txn.gather()
    txn.draft.generation = generation.to_receipt(selected=True, restart_required=False)
    pins = pins_with_urls(generation.record, json_api_setting(txn, flag))
    txn.reporter.progress("reading the advisories")
    found = _lookup(pins, _client(inputs.settings.offline))
    findings = [Finding(name, version, a, a.fixed_after(version)) for (name, version, _, _), advisories
                in zip(pins, found, strict=True) for a in advisories]
    if any(f.fix is not None for f in findings):
        txn.reporter.progress("checking the fixes")
        findings = _checked(findings, inputs)
    report = AuditReport(generation.id, len(pins), tuple(findings))
    txn.draft.record(audit=report.to_json())
    if strict and findings:
        txn.finish("not-ready", EXIT_NOT_READY, _summary(report))
    else:
        txn.finish("ok", EXIT_OK, _summary(report))
    return report


def _client(offline: bool) -> AdvisoryClient:
    from pm.index.advisories import AdvisoryClient
    from pm.index.cache import Cache
    from pm.index.http import HttpClient

    return AdvisoryClient(HttpClient(), Cache(cache_dir()), offline=offline, counts={})


def _lookup(pins: list[tuple[NormalizedName, Version, str, str]], client: AdvisoryClient) -> list[tuple[Advisory, ...]]:
    """Each pin's advisories, asked together (a few at a time); the first failure, in pin order."""
    try:
        with ThreadPoolExecutor(max_workers=8) as pool:
            futures = [pool.submit(client.advisories, client.client.authorize(url), index)
                       for _, _, index, url in pins]
            return [future.result() for future in futures]
    finally:
        client.client.close()


def _checked(findings: list[Finding], inputs: Inputs) -> list[Finding]:
    """Each finding with the version the union resolves to when its package is constrained to
    its fix (one resolve per package and fix)."""
    fits: dict[tuple[str, Version], Version | None] = {}
    with source_of(inputs) as source:
        for finding in findings:
            if finding.fix is not None and (finding.name, finding.fix) not in fits:
                fits[(finding.name, finding.fix)] = fix_fits(inputs, source, finding.name, finding.fix)
    return [replace(f, fits=fits.get((f.name, f.fix))) if f.fix is not None else f for f in findings]


def fix_fits(inputs: Inputs, source: Any, name: str, fix: Version) -> Version | None:
    """The version of ``name`` the union resolves to constrained to ``name>=fix`` (None: no resolution)."""
    from pm.inputs.overrides import Imposed
    from pm.ops.fixes import ROUNDS
    from pm.resolver.resolve import resolve_union

    union = inputs.union
    constraint = Imposed(Requirement(f"{name}>={fix}"), CHECKED_SOURCE)
    try:
        resolution = resolve_union(replace(union, constraints=(*union.constraints, constraint)), inputs.target,
                                   source, policy_of(inputs), max_rounds=ROUNDS)
    except PmError:
        return None
    return next((pin.version for pin in resolution.pins if pin.name == name), None)


def _summary(report: AuditReport) -> str:
    if not report.findings:
        return f"no published advisories for the {report.checked} pins of generation {report.generation}"
    return (f"{len(report.findings)} advisories for {len(report.vulnerable)} of {report.checked} pins of generation "
            f"{report.generation}")
