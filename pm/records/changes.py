"""The receipt's ``changes``: one object per package whose pin a resolution changed, against the
pins of the generation that was selected (the preferences it was resolved with), with the
requirement that moved it. Pure; no I/O.

``{"package", "from", "to", "reason", "because"}``: ``from`` / ``to`` are versions (None: not
pinned before / not any more); ``reason`` is a :class:`~pm.resolver.model.Move`'s (``required``,
``dependency``, ``not-offered``, ``upgrade``, ``unused``, ``other``), or ``added`` for a package
new to the set; ``because`` is the requirement that moved it or brought it in — ``{"origin",
"requirement", "text"}`` where ``origin`` is ``{"kind": "core"}``, ``{"kind": "plugin", "plugin":
NAME}`` or ``{"kind": "package", "package": "NAME VERSION"}`` — or None; ``detail`` says more where
there is more (a version no longer listed by the index).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pm.inputs.union import Origin
from pm.resolver.model import Move, Parent, Pin, Resolution

__all__ = ["because_to_json", "changes", "reasons"]


def changes(previous: Mapping[str, str] | None, resolution: Resolution) -> list[dict[str, Any]]:
    """The changes from ``previous`` (name -> version; None: nothing was selected) to ``resolution``."""
    before = dict(previous or {})
    pins: dict[str, Pin] = {p.name: p for p in resolution.pins}
    moves: dict[str, Move] = {m.package: m for m in resolution.moves}
    found = []
    for name in sorted(set(before) | set(pins)):
        old, pin = before.get(name), pins.get(name)
        new = None if pin is None else str(pin.version)
        if old == new:
            continue
        move = moves.get(name)
        if move is not None and str(move.before) == old:
            found.append(_moved(move))
        elif old is None and pin is not None:
            found.append(_entry(name, None, new, "added", _first_parent(pin)))
        else:
            found.append(_entry(name, old, new, "unused" if pin is None else "other", None))
    return found


def _moved(move: Move) -> dict[str, Any]:
    entry = _entry(move.package, str(move.before), None if move.after is None else str(move.after), move.reason,
                   move.because)
    return entry | ({"detail": move.detail} if move.detail else {})


def _entry(package: str, old: str | None, new: str | None, reason: str, because: Parent | None) -> dict[str, Any]:
    return {"package": package, "from": old, "to": new, "reason": reason, "because": because_to_json(because)}


def _first_parent(pin: Pin) -> Parent | None:
    """Who brought a new package in: a root's requirement first, else the first pinned package's."""
    roots = [p for p in pin.parents if p.origin is not None]
    return next(iter(roots or pin.parents), None)


def because_to_json(parent: Parent | None) -> dict[str, Any] | None:
    if parent is None:
        return None
    if parent.origin is not None:
        origin = Origin(parent.origin.plugin, None).to_json()  # by name: the files are in inputs.plugins
        text = str(Parent(parent.requirement, Origin(parent.origin.plugin, None), locked=parent.locked))
    else:
        origin = {"kind": "package", "package": parent.package}
        text = str(parent)
    return {"origin": origin, "requirement": parent.requirement, "text": text}


def reasons(change: Mapping[str, Any]) -> str:
    """Why a change happened, in words, for the terminal diff ("" when nothing is known)."""
    because = change.get("because")
    reason = change.get("reason")
    if reason == "upgrade":
        return "upgraded"
    if reason == "not-offered":
        return str(change.get("detail") or "no longer offered by the index")
    if isinstance(because, Mapping) and because.get("text"):
        return str(because["text"]) if reason != "dependency" else f"{because['text']}, which cannot be met now"
    return {"unused": "no longer required"}.get(str(reason), "")
