"""Fixes that were checked: after a refusal, each remedy pm would print is resolved first.

Only after a conflict, never on the happy path; each check is one bounded resolve of the same
union with one change, on the pages the refused resolve already fetched (the cache answers):

- **set a plugin aside**: the union without plugin P resolves. Printed as ``hermes plugins disable
  P`` only then (``checked: true``); a plugin whose removal does not help is not suggested.
- **allow a build**: a project refused for having only a source distribution: the set resolves
  with it allowed, judged on the sdist's static metadata (nothing is built); "not checked" when the
  sdist's requirements are dynamic; dropped when a hard conflict remains.
- **relax a pin**: plugin Q's own requirement on a project in the conflict, loosened to the bare
  name, resolves; the version the resolver then picks is the newest release that fits core and
  every other plugin, and the step says so ("langchain 0.3.27 fits core and every other plugin;
  ask the author of plugin 'q' to allow it").

Suggestions whose resolve fails, or that run out of :data:`BUDGET`, are dropped; the receipt says
which were checked. The plugins come from the conflict's own causes (DESIGN invariant 4), so no
search over combinations ever runs.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from pm.base.commands import hermes
from pm.base.errors import PmError
from pm.inputs.collect import Inputs
from pm.inputs.union import Union

if TYPE_CHECKING:
    from pm.index.base import Source
    from pm.resolver import Conflict, Policy, Resolution

#: Seconds all checks of one refusal may take together, and resolver rounds per check.
BUDGET = 20.0
ROUNDS = 5000
_MAX_CHECKS = 6


@dataclass(frozen=True)
class Fix:
    """A next step whose remedy was resolved before it is printed."""

    command: str
    why: str
    checked: bool = True
    #: What remedy it is, as data (the receipt's ``next_steps[].kind``): "set-aside", "relax",
    #: "override" (the operator's override, :mod:`pm.ops.override_fix`) or "allow-build".
    kind: str = ""


def checked_fixes(inputs: Inputs, conflict: Conflict, policy: Policy, home: Path | None, *,
                  admission: bool = False, source: Source | None = None, tried: Tried | None = None,
                  retry: tuple[str, ...] | None = None) -> list[Fix]:
    """The remedies for ``conflict`` that resolve (module docstring), in the order they help most:
    setting aside a partner, then relaxing a pin, then the operator's override (only with
    ``retry``, the words of the command to run again with it), then allowing a build; on
    ``source`` (the one the refused resolve read, so its pages are reused), else on a new one."""
    from pm.ops.transaction import source_of

    if source is None:
        with source_of(inputs) as own:
            return checked_fixes(inputs, conflict, policy, home, admission=admission, source=own, tried=tried,
                                 retry=retry)
    check = _Checks(inputs, source, policy, home, time.monotonic() + BUDGET, conflict.candidate,
                    {} if tried is None else tried)
    overrides = [] if retry is None else check.overrides(conflict, retry)
    return [*check.set_aside(_to_set_aside(conflict, admission)), *check.relax(_pins_to_relax(conflict, inputs.union)),
            *overrides, *check.builds(_sdist_only(conflict))]


@dataclass(frozen=True)
class _Checks:
    """The checks of one refusal, sharing its source and one deadline."""

    inputs: Inputs
    source: Source
    policy: Policy
    home: Path | None
    deadline: float
    candidate: str | None
    tried: Tried

    def _in_time(self, items: list[Any]) -> Iterator[Any]:
        for item in items[:_MAX_CHECKS]:
            if time.monotonic() > self.deadline:
                return
            yield item

    def set_aside(self, plugins: list[str]) -> Iterator[Fix]:
        for plugin in self._in_time(plugins):
            if _resolves(_without(self.inputs.union, plugin), self.inputs, self.source, self.policy) is not None:
                yield Fix(hermes("plugins", "disable", plugin, home=self.home),
                          f"checked: core and every other plugin resolve without {plugin!r} "
                          "(pm never disables a plugin for you)", kind="set-aside")

    def relax(self, pins: list[tuple[str, str, str]]) -> Iterator[Fix]:
        for plugin, requirement, package in self._in_time(pins):
            resolution = _resolves(_relaxed(self.inputs.union, plugin, requirement), self.inputs, self.source,
                                   self.policy)
            version = _version_of(resolution, package)
            if version is not None and not Requirement(requirement).specifier.contains(version, prereleases=True):
                yield Fix(hermes("pm", "why", package, home=self.home),
                          f"checked: {package} {version} fits core and every other plugin (resolved with "
                          f"{requirement!r} of plugin {plugin!r} relaxed); ask the author of {plugin!r} to allow it",
                          kind="relax")

    def overrides(self, conflict: Conflict, retry: tuple[str, ...]) -> list[Fix]:
        """The operator's override for each plugin pin the conflict names (:mod:`pm.ops.override_fix`)."""
        from pm.ops.override_fix import checked_overrides

        return checked_overrides(self.inputs, conflict, retry, self.home, self._in_time,
                                 lambda union: _resolves(union, self.inputs, self.source, self.policy))

    def builds(self, packages: list[str]) -> Iterator[Fix]:
        for package in self._in_time(packages):
            fix = _allow_build(self.inputs, self.source, self.policy, package, self.home, self.candidate, self.tried)
            if fix is not None:
                yield fix


#: Resolves with builds allowed, by the set of packages allowed: what each ended in (None: it
#: resolved). One refusal's hard-behind-policy check and its --allow-build check share one, so
#: the same resolve is never run twice.
Tried = dict[frozenset[str], PmError | None]


def with_builds(inputs: Inputs, source: Source, policy: Policy, packages: list[str], candidate: str | None,
                tried: Tried) -> PmError | None:
    """Resolve with ``packages`` allowed to be built (judged on the sdists' static metadata,
    nothing built); what it ended in, None when it resolved. Remembered in ``tried``."""
    from pm.resolver.resolve import resolve_union

    key = frozenset(canonicalize_name(p) for p in packages)
    if key not in tried:
        allowed = replace(policy, allow_builds=policy.allow_builds | key)
        try:
            resolve_union(inputs.union, inputs.target, source, allowed, candidate=candidate, max_rounds=ROUNDS)
            tried[key] = None
        except PmError as exc:
            tried[key] = exc
    return tried[key]


def hard_behind_policy(inputs: Inputs, conflict: Conflict, policy: Policy, source: Source,
                       tried: Tried | None = None) -> Conflict | None:
    """The hard conflict a refusal for source-only packages hides: resolved with those builds
    allowed (on the sdists' static metadata, nothing built), the set still has no resolution.
    None when it then resolves, when the metadata is dynamic (only a build would tell), or when
    every finding is not about builds."""
    from pm.resolver import Conflict as Refused

    packages = _sdist_only(conflict)
    if not packages or any(f.kind != "sdist-only" and f.dead_end is None for f in conflict.findings):
        return None
    ended = with_builds(inputs, source, policy, packages, conflict.candidate, {} if tried is None else tried)
    return ended if isinstance(ended, Refused) and _sdist_only(ended) != packages else None


def _sdist_only(conflict: Conflict) -> list[str]:
    """Projects the refusal blames on their having only a source distribution."""
    found = [f.package for f in conflict.findings if f.kind == "sdist-only"]
    found += [leaf.package for f in conflict.findings if f.dead_end is not None
              for leaf in f.dead_end.leaves() if leaf.kind == "sdist-only"]
    return list(dict.fromkeys(name.split("[")[0] for name in found))


def _allow_build(inputs: Inputs, source: Source, policy: Policy, package: str, home: Path | None,
                 candidate: str | None, tried: Tried) -> Fix | None:
    """``--allow-build package`` when the set resolves with it: checked on the sdist's static
    metadata (PKG-INFO, no build); "not checked" when the sdist's requirements are dynamic; None
    (dropped) when the set would still not resolve — a hard conflict a build cannot lift."""
    from pm.index.base import MetadataUnavailable

    command = hermes("pm", "resolve", "--allow-build", package, home=home)
    ended = with_builds(inputs, source, policy, [package], candidate, tried)
    if isinstance(ended, MetadataUnavailable):
        return Fix(command, f"not checked: {package}'s source distribution does not state its requirements "
                            f"statically ({ended}), so only a build would tell whether the set then resolves",
                   checked=False, kind="allow-build")
    if ended is not None:
        return None
    return Fix(command, f"checked: the set resolves with {package} built from its source distribution (its "
                        "static metadata read, nothing built yet); building runs its build backend (opt-in)",
               kind="allow-build")


def _to_set_aside(conflict: Conflict, admission: bool) -> list[str]:
    """Partners of the candidate (admission keeps the candidate: it is what was asked for), or
    every plugin named when there is no candidate."""
    if conflict.candidate is not None:
        return [p for p in conflict.plugins if p != conflict.candidate]
    return list(conflict.plugins)


def _pins_to_relax(conflict: Conflict, union: Union) -> list[tuple[str, str, str]]:
    """(plugin, its own requirement text, project) for each plugin's direct requirement on a
    project of the conflict: the project itself, or the version the resolver tried that states
    the colliding requirement. The candidate's first."""
    direct = {(t.origin.plugin, canonicalize_name(t.requirement.name)): str(t.requirement)
              for t in union.requirements if t.origin.plugin is not None}
    found: dict[tuple[str, str], tuple[str, str, str]] = {}
    for cause in conflict.causes:
        plugin = cause.origin.plugin
        if plugin is None:
            continue
        package = (cause.via_package or cause.package).split("[")[0]
        text = direct.get((plugin, canonicalize_name(package)))
        if text is not None:
            found.setdefault((plugin, package), (plugin, text, package))
    first = [v for (p, _), v in found.items() if p == conflict.candidate]
    return first + [v for (p, _), v in found.items() if p != conflict.candidate]


def _without(union: Union, plugin: str) -> Union:
    return replace(union, requirements=tuple(t for t in union.requirements if t.origin.plugin != plugin))


def _relaxed(union: Union, plugin: str, requirement: str) -> Union:
    """``union`` with ``plugin``'s ``requirement`` loosened to its project name (extras and
    marker kept)."""
    tagged = []
    for item in union.requirements:
        if item.origin.plugin == plugin and str(item.requirement) == requirement:
            loose = Requirement(str(item.requirement))
            loose.specifier = type(loose.specifier)()
            loose.url = None
            item = replace(item, requirement=loose)
        tagged.append(item)
    return replace(union, requirements=tuple(tagged))


def _resolves(union: Union, inputs: Inputs, source: Source, policy: Policy) -> Resolution | None:
    from pm.resolver.resolve import resolve_union

    try:
        return resolve_union(union, inputs.target, source, policy, max_rounds=ROUNDS)
    except PmError:
        return None


def _version_of(resolution: Resolution | None, package: str) -> Version | None:
    if resolution is None:
        return None
    key = canonicalize_name(package)
    return next((pin.version for pin in resolution.pins if pin.name == key), None)
