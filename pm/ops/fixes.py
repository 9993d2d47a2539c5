"""Fixes that were checked: after a refusal, each remedy pm would print is resolved first.

Only after a conflict, never on the happy path; each check is one bounded resolve of the same
union with one change, on the pages the refused resolve already fetched (the cache answers):

- **set a plugin aside**: the union without plugin P resolves. Printed as ``hermes plugins disable
  P`` only then (``checked: true``); a plugin whose removal does not help is not suggested.
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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from ..commands import hermes
from ..errors import PmError
from ..inputs import Inputs
from ..union import Union

if TYPE_CHECKING:
    from ..index.base import Source
    from ..resolver import Conflict, Policy, Resolution

#: Seconds all checks of one refusal may take together, and resolver rounds per check.
BUDGET = 20.0
ROUNDS = 5000
_MAX_CHECKS = 6


@dataclass(frozen=True)
class Fix:
    """A next step whose remedy was resolved before it is printed."""

    command: str
    why: str


def checked_fixes(inputs: Inputs, conflict: Conflict, policy: Policy, home: Path | None, *,
                  admission: bool = False) -> list[Fix]:
    """The remedies for ``conflict`` that resolve (module docstring), in the order they help most:
    setting aside a partner, then relaxing a pin."""
    from .transaction import source_of

    deadline = time.monotonic() + BUDGET
    fixes: list[Fix] = []
    with source_of(inputs) as source:
        for plugin in _to_set_aside(conflict, admission)[:_MAX_CHECKS]:
            if time.monotonic() > deadline:
                break
            if _resolves(_without(inputs.union, plugin), inputs, source, policy) is not None:
                fixes.append(Fix(hermes("plugins", "disable", plugin, home=home),
                                 f"checked: core and every other plugin resolve without {plugin!r} "
                                 f"(pm never disables a plugin for you)"))
        for plugin, requirement, package in _pins_to_relax(conflict, inputs.union)[:_MAX_CHECKS]:
            if time.monotonic() > deadline:
                break
            resolution = _resolves(_relaxed(inputs.union, plugin, requirement), inputs, source, policy)
            version = _version_of(resolution, package)
            if version is not None and not Requirement(requirement).specifier.contains(version, prereleases=True):
                fixes.append(Fix(hermes("pm", "why", package, home=home),
                                 f"checked: {package} {version} fits core and every other plugin (resolved with "
                                 f"{requirement!r} of plugin {plugin!r} relaxed); ask the author of {plugin!r} "
                                 f"to allow it"))
    return fixes


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
    from ..resolver.resolve import resolve_union

    try:
        return resolve_union(union, inputs.target, source, policy, max_rounds=ROUNDS)
    except PmError:
        return None


def _version_of(resolution: Resolution | None, package: str) -> Version | None:
    if resolution is None:
        return None
    key = canonicalize_name(package)
    return next((pin.version for pin in resolution.pins if pin.name == key), None)
