"""The gate's two passes on one target (:mod:`pm.ops.catalog_check`): each entry with core alone,
then every entry that fits alone, together.

- **alone**: core + the entry; a refusal is the entry's own (:func:`pm.ops.catalog_verdicts.judged`
  tells its kind).
- **together**: core + every entry that passed alone, in one resolve; when it is refused, the
  entries involved are named from the resolver's own causes (per finding), each of them marked
  ``collides`` with its partners and group, that group set aside and the rest resolved again,
  until the rest resolves: every colliding pair or group is named from its own proof, never found
  by trial resolutions (DESIGN invariant 4).

Resolution takes every setting the other commands take: the policy (pre-releases,
exclude-newer, allowed builds, with the builder ``pm.allow_builds`` needs) and the operator's
constraints and overrides.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pm.base.errors import PmError
from pm.inputs.core import load_core
from pm.inputs.union import Origin, Tagged, Union
from pm.ops.catalog_verdicts import TogetherPass, collision_groups, digest, judged

if TYPE_CHECKING:
    from pm.index.base import Source
    from pm.inputs.declaration import Declaration
    from pm.inputs.settings import Settings
    from pm.inputs.target import Target
    from pm.ops.catalog_check import Report


class _Pass:
    """What every resolve of one target shares."""

    def __init__(self, settings: Settings, target: Target, source: Source, report: Report) -> None:
        from pm.ops.transaction import policy_for

        self.settings, self.target, self.source = settings, target, source
        self.core = load_core(settings.core, settings.core_lock, target.environment)
        self.policy = policy_for(settings)
        self.builder = _builder(settings, target, self.policy)
        self.report = report

    def union(self, declarations: dict[str, Declaration]) -> Union:
        tagged = [Tagged(r, Origin.core()) for r in self.core.requirements]
        for name, declaration in declarations.items():
            where = self.report.where.get(name)
            origin = Origin(name, where.declaration if where is not None else str(declaration.file))
            tagged += [Tagged(r, origin) for r in declaration.requirements]
        return Union(self.core, (), tuple(tagged), self.settings.constraints, self.settings.overrides)

    def resolve(self, declarations: dict[str, Declaration]) -> Any:
        """The resolution, or the exception that refused or failed it."""
        from pm.resolver.resolve import resolve_union

        try:
            return resolve_union(self.union(declarations), self.target, self.source, self.policy,
                                 builder=self.builder)
        except PmError as exc:
            return exc


def judge(report: Report, declarations: dict[str, Declaration], carried: dict[str, Declaration],
          settings: Settings, target: Target, label: str, *, together: bool = True) -> None:
    """Every fetched entry alone on ``target``, then (``together``) the together pass."""
    from pm.index import open_sources

    with open_sources(settings.index_urls, settings.find_links, offline=settings.offline, refresh=settings.refresh,
                      tags=target.tags) as source:
        try:
            run = _Pass(settings, target, source, report)
        except PmError as exc:  # core itself could not be read for this target: the gate cannot run
            report.stopped.append(f"{label}: {exc}")
            return
        for name, declaration in declarations.items():
            report.verdicts.append(judged(name, label, run.resolve({name: declaration})))
        if together:
            passed = sorted(v.entry for v in report.verdicts if v.target == label and v.kind == "ok"
                            and v.entry in {**carried, **declarations})
            _together(run, {**carried, **declarations}, passed, label)


def _together(run: _Pass, declarations: dict[str, Declaration], passed: list[str], label: str) -> None:
    """All solo-passing entries in one resolve; while it is refused, every entry its causes name
    is marked as colliding and set aside with its group, and the rest resolved again."""
    report = run.report
    remaining = list(passed)
    while len(remaining) > 1:
        outcome = run.resolve({n: declarations[n] for n in remaining})
        from pm.resolver.explain import Conflict

        if not isinstance(outcome, PmError):
            report.together.append(TogetherPass(label, tuple(remaining), "ok", pins=len(outcome.pins),
                                                digest=digest(outcome.pins)))
            return
        groups = collision_groups(outcome, remaining) if isinstance(outcome, Conflict) else ()
        aside = sorted({n for g in groups for n in g})
        if not aside:  # a failure, or a refusal naming no entry: nothing can be set aside
            report.together.append(TogetherPass(label, tuple(remaining), "failed", cause=str(outcome)))
            report.stopped.append(f"together on {label}: {outcome}")
            return
        report.together.append(TogetherPass(label, tuple(remaining), "collides", groups, str(outcome)))
        for name in aside:
            _mark(report, name, label, groups, tuple(aside), _told_for(outcome, name))
        remaining = [n for n in remaining if n not in aside]


def _mark(report: Report, name: str, label: str, groups: tuple[tuple[str, ...], ...], aside: tuple[str, ...],
          cause: str) -> None:
    """``name``'s row on ``label`` says it collides: its partners are the entries of the findings
    that name it (every entry set aside with it, when a finding names it alone)."""
    own = sorted({n for g in groups if name in g for n in g})
    group = tuple(own) if len(own) > 1 else aside
    at = next(i for i, v in enumerate(report.verdicts) if v.entry == name and v.target == label)
    report.verdicts[at] = report.verdicts[at].colliding(tuple(n for n in group if n != name), group, cause)


def _told_for(conflict: Any, name: str) -> str:
    """The refusal in words, told from the findings that name ``name`` only (the resolver's one
    formatter): a pair's row does not tell another group's collision from the same pass."""
    from pm.resolver.explain import Conflict

    own = [f for f in conflict.findings if any(c.origin.plugin == name for c in f.causes)]
    if not own or len(own) == len(conflict.findings):
        return str(conflict)
    plugins = [p for p in conflict.plugins if any(c.origin.plugin == p for f in own for c in f.causes)]
    return str(Conflict(own, plugins, None))


def _builder(settings: Settings, target: Target, policy: Any) -> Any:
    """The uv-based sdist builder when ``pm.allow_builds`` (``--allow-build``) names packages, as
    the other commands have it (:func:`pm.ops.resolve.builder_of`); None otherwise."""
    if not policy.allow_builds:
        return None
    from pm.index.builds import uv_builder

    return uv_builder(target.python, settings.index_urls, settings.find_links, offline=settings.offline)
