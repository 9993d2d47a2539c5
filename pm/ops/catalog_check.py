"""The catalog's acceptance gate: does every entry fit the host, alone and together, on every
target? (``hermes pm catalog check``, issue 23.)

Each entry is fetched at its pin (git at the commit, archives by sha256, as ``hermes plugins
install`` fetches them) into a scratch folder, and its declaration read without importing
anything. Then, per target (every pair of ``--python-version`` and ``--platform`` values; the
running interpreter when none is given):

- **solo**: core + the entry alone; a refusal is the entry's own (with core).
- **together**: core + every entry that passed solo, in one resolve; when it is refused, the
  entries involved are named from the resolver's own causes (``Conflict.plugins``), never found by
  trial resolutions (DESIGN invariant 4).

The report is data (:class:`Report`), kept in a receipt of kind ``catalog-check`` (its
``catalog_check`` field); nothing is installed and no home is changed.
"""

from __future__ import annotations

import itertools
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..catalog import Catalog, Entry, load_catalog
from ..core import load_core
from ..errors import EXIT_CONFLICT, EXIT_FAILURE, EXIT_OK, PmError
from ..settings import Flags, Settings
from ..target import Target
from ..union import Origin, Tagged, Union

if TYPE_CHECKING:
    from ..declaration import Declaration
    from ..index.base import Source


@dataclass(frozen=True)
class Verdict:
    """One entry (or the together pass) on one target."""

    entry: str  # an entry's name, or "(together)"
    target: str
    verdict: str  # "ok", "conflict", "failed"
    partners: tuple[str, ...] = ()  # entries named by the resolver's causes
    finding: str = ""  # the message of the refusal or failure
    pins: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"entry": self.entry, "target": self.target, "verdict": self.verdict, "partners": list(self.partners),
                "finding": self.finding, "pins": self.pins}


@dataclass
class Report:
    catalog: str
    targets: list[str]
    fetched: dict[str, str] = field(default_factory=dict)  # entry -> declaration file, or why not
    verdicts: list[Verdict] = field(default_factory=list)
    receipt: Path | None = None

    @property
    def exit_code(self) -> int:
        kinds = {v.verdict for v in self.verdicts}
        if "failed" in kinds or any(f.startswith("not fetched") for f in self.fetched.values()):
            return EXIT_FAILURE
        return EXIT_CONFLICT if "conflict" in kinds else EXIT_OK

    def to_json(self) -> dict[str, Any]:
        return {"catalog": self.catalog, "targets": self.targets, "fetched": self.fetched,
                "verdicts": [v.to_json() for v in self.verdicts], "exit_code": self.exit_code}


def catalog_check(home: Path, catalog: Path | None, flags: Flags, python_versions: list[str],
                  platforms: list[str]) -> Report:
    """``hermes pm catalog check``: the home's settings (index, core) and catalog (unless
    ``catalog`` names one), the report, and its receipt written in the home."""
    from ..config import read_config
    from ..ops.install import catalog_for
    from ..receipt import Receipt
    from ..settings import resolve_settings
    from ..target import target_for
    from .receipts import write

    settings = resolve_settings(flags, read_config(home))
    chosen = load_catalog(catalog.resolve()) if catalog is not None else catalog_for(home)
    report = check_catalog(chosen, settings, target_for(None), python_versions, platforms)
    receipt = Receipt("catalog-check", home)
    receipt.extra["catalog_check"] = report.to_json()
    receipt.finish({EXIT_OK: "ok", EXIT_CONFLICT: "conflict"}.get(report.exit_code, "failed"), report.exit_code)
    report.receipt = write(receipt).path
    return report


def check_catalog(catalog: Catalog, settings: Settings, base: Target, python_versions: list[str],
                  platforms: list[str]) -> Report:
    """Fetch every entry at its pin, then judge each alone and all together on every target."""
    from ..foreign import foreign_target

    targets = [foreign_target(base, v, p) if (v or p) else base
               for v, p in itertools.product(python_versions or [None], platforms or [None])]  # type: ignore[list-item]
    report = Report(str(catalog.file), [_label(t) for t in targets])
    with tempfile.TemporaryDirectory(prefix="hermes-pm-catalog-") as scratch:
        live = tuple(e for e in catalog.entries if e.name not in catalog.removed)
        for name in sorted({e.name for e in catalog.entries} - {e.name for e in live}):
            report.fetched[name] = "removed: on the catalog's kill list, not checked"
        declarations = _fetch_all(live, Path(scratch), report)
        for target in targets:
            _judge(report, declarations, settings, target)
    return report


def _label(target: Target) -> str:
    return f"{target.platform} / Python {target.python_version}"


def _fetch_all(entries: tuple[Entry, ...], scratch: Path, report: Report) -> dict[str, Declaration]:
    from ..declaration import read_declaration
    from ..install import fetch_source
    from ..manifest import read_manifest

    found: dict[str, Declaration] = {}
    for entry in entries:
        staging = scratch / entry.name
        staging.mkdir()
        try:
            root, _ = fetch_source(entry, entry.name, staging)
            declaration = read_declaration(root, read_manifest(root))
        except PmError as exc:
            report.fetched[entry.name] = f"not fetched: {exc}"
            continue
        if declaration is None:
            report.fetched[entry.name] = "no declaration at the plugin root (sidecar-only): nothing to check"
            continue
        report.fetched[entry.name] = str(declaration.file.relative_to(root))
        found[entry.name] = declaration
    return found


def _judge(report: Report, declarations: dict[str, Declaration], settings: Settings, target: Target) -> None:
    from .transaction import policy_for

    core = load_core(settings.core, settings.core_lock, target.environment)
    policy = policy_for(settings)
    label = _label(target)
    with _sources(settings, target) as source:
        passed = []
        for name, declaration in declarations.items():
            verdict = _resolve(name, _union(core, {name: declaration}), target, source, policy, label)
            report.verdicts.append(verdict)
            if verdict.verdict == "ok":
                passed.append(name)
        if len(passed) > 1:
            together = _union(core, {n: declarations[n] for n in passed})
            report.verdicts.append(_resolve("(together)", together, target, source, policy, label))


def _union(core: Any, declarations: dict[str, Declaration]) -> Union:
    tagged = [Tagged(r, Origin.core()) for r in core.requirements]
    for name, declaration in declarations.items():
        origin = Origin(name, str(declaration.file))
        tagged += [Tagged(r, origin) for r in declaration.requirements]
    return Union(core, (), tuple(tagged))


def _resolve(entry: str, union: Union, target: Target, source: Source, policy: Any, label: str) -> Verdict:
    from ..resolver import Conflict
    from ..resolver.resolve import resolve_union

    try:
        resolution = resolve_union(union, target, source, policy)
    except Conflict as conflict:
        partners = tuple(p for p in conflict.plugins if p != entry)
        return Verdict(entry, label, "conflict", partners, str(conflict))
    except PmError as exc:
        return Verdict(entry, label, "failed", (), str(exc))
    return Verdict(entry, label, "ok", pins=len(resolution.pins))


def _sources(settings: Settings, target: Target) -> Any:
    from ..index import open_sources

    return open_sources(settings.index_urls, settings.find_links, offline=settings.offline, refresh=settings.refresh,
                        tags=target.tags)
