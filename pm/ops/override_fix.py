"""The checked override step: a refusal caused by one plugin's pin offers the operator's override.

When plugin P states ``numpy<1.25`` and the rest of the set needs ``numpy>=1.26``, the remedy
that is the operator's to take (not P's author's) is an override: ``numpy>=1.26`` in the place
of every requirement on numpy (:mod:`pm.inputs.overrides`). Its specifier is what every other
requirement in the collision asks (core's lock pin among them), so it never moves a pin core
locks. It is resolved before it is printed, on the same pages, and offered only when the set
then resolves; the step is the refused command again with ``$HERMES_PM_OVERRIDES`` holding the
overrides already in force and the new one (the variable beats config.yaml, so it is runnable
exactly as printed and resolves what was checked), and its why says how to keep it.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from pm.base.commands import hermes
from pm.inputs.collect import Inputs
from pm.inputs.overrides import Imposed
from pm.inputs.union import Union
from pm.ops.fixes import Fix
from pm.resolver.model import stated

if TYPE_CHECKING:
    from pm.resolver import Conflict, Resolution

#: Where a checked override was written while it is checked (it is not in any file yet).
CHECKED_SOURCE = "the checked next step"
VARIABLE = "HERMES_PM_OVERRIDES"


@dataclass(frozen=True)
class _Pin:
    """One plugin's own requirement that a conflict names, and the override that would lift it."""

    plugin: str
    requirement: str
    package: str
    override: str


def checked_overrides(inputs: Inputs, conflict: Conflict, retry: tuple[str, ...], home: Path | None,
                      in_time: Callable[[list[Any]], Iterator[Any]],
                      resolves: Callable[[Union], Resolution | None]) -> list[Fix]:
    """An override step for each plugin pin of ``conflict`` whose override makes the set resolve
    (and keeps core's lock where it is); ``retry`` is the refused command's words."""
    locked = dict(inputs.union.core.lock)
    found = []
    for pin in in_time(pins_to_override(conflict, inputs.union)):
        override = Imposed(Requirement(pin.override), CHECKED_SOURCE)
        resolution = resolves(replace(inputs.union, overrides=(*inputs.union.overrides, override)))
        version = _version_of(resolution, pin.package)
        if version is None or (pin.package in locked and locked[pin.package] != version):
            continue
        lines = [str(item) for item in inputs.union.overrides] + [pin.override]
        command = f"{VARIABLE}={shlex.quote(chr(10).join(lines))} " + hermes(*retry, home=home)
        found.append(Fix(command, f"checked: the override {pin.override!r} makes {pin.plugin!r} fit ({pin.package} "
                                  f"{version} resolves with it in the place of every requirement on {pin.package}); "
                                  f"its author declared {pin.requirement!r}; at your own risk. This command applies "
                                  f"it once; to keep it, add {pin.override!r} to pm.overrides in config.yaml",
                         kind="override"))
    return found


def pins_to_override(conflict: Conflict, union: Union) -> list[_Pin]:
    """For each finding of kind conflict, each plugin that states its own requirement on the
    package (not through another package), with the override made of what the other
    requirements in the collision ask; none where nothing else asks, or an override already
    names the package. An admission's own candidate's pins only, when it has any: that is the
    plugin being made to fit."""
    overridden = {item.name for item in union.overrides}
    direct = {(t.origin.plugin, canonicalize_name(t.requirement.name)): str(t.requirement)
              for t in union.requirements if t.origin.plugin is not None}
    found: dict[tuple[str, str], _Pin] = {}
    for finding in conflict.findings:
        package = canonicalize_name(finding.package.split("[")[0])
        if finding.kind != "conflict" or package in overridden:
            continue
        for plugin in dict.fromkeys(c.origin.plugin for c in finding.causes if c.via is None and c.origin.plugin):
            text = direct.get((plugin, package))
            others = [c.requirement for c in finding.causes if not (c.origin.plugin == plugin and c.via is None)]
            specifier = _together(others)
            if text is not None and others and specifier is not None:
                found.setdefault((plugin, package), _Pin(plugin, text, package, f"{package}{specifier}"))
    pins = list(found.values())
    own = [p for p in pins if p.plugin == conflict.candidate]
    return own or pins


def _together(texts: list[str]) -> str | None:
    """The specifiers of ``texts`` (requirement texts as causes tell them, a constraint's with its
    suffix) as one, sorted; None when one cannot be read."""
    specifiers = SpecifierSet()
    for text in texts:
        try:
            specifiers &= Requirement(stated(text)).specifier
        except InvalidRequirement:
            return None
    return ",".join(sorted(str(s) for s in specifiers))


def _version_of(resolution: Resolution | None, package: str) -> Any:
    if resolution is None:
        return None
    return next((pin.version for pin in resolution.pins if pin.name == package), None)
