"""The package diff a person sees after a command that may change the selected generation:
``+ name==version`` for what it added, ``- name==version`` for what it removed (a version change
is both), on stderr, first, as uv prints them before its summary; the ``+`` line of a moved pin says
why, from the receipt's ``changes`` (:mod:`pm.records.changes`): ``+ lib==1.1  (plugin 'p2' requires lib>=1.1)``.
Quiet under ``--json`` and ``-q``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping

from pm.base.errors import PmError
from pm.cli._common import home_of
from pm.cli._output import paint, say
from pm.env import generations
from pm.inputs.settings import environment_home
from pm.records.receipt import Receipt

#: Commands (``args.command``) whose success may select another generation.
CHANGING = frozenset({"sync", "rollback", "plugins-enable", "plugins-disable", "plugins-install", "update"})

Pins = dict[str, str]


def pins_before(args: argparse.Namespace) -> Pins | None:
    """The selected generation's pins before ``args`` runs, or None when no diff will be told."""
    if args.command not in CHANGING or getattr(args, "json", False) or getattr(args, "quiet", False):
        return None
    try:
        return _selected_pins(args)
    except (PmError, OSError, KeyError):
        return None


def tell_changes(args: argparse.Namespace, receipt: Receipt | None = None) -> None:
    """Say what changed since :func:`pins_before` (``args.pins_before``; nothing when nothing
    did), once: a command calls it before its own summary, as uv tells what changed first; with
    the ``receipt`` of the command, each move says which requirement moved it."""
    before = getattr(args, "pins_before", None)
    args.pins_before = None
    if before is None:
        return
    try:
        after = _selected_pins(args)
    except (PmError, OSError, KeyError):
        return
    from pm.records.changes import reasons

    found = receipt.extra.get("changes") if receipt is not None else None
    moved = [c for c in found if isinstance(c, dict) and c.get("from") and c.get("to")] if isinstance(found, list) else []
    why = {str(c.get("package")): reasons(c) for c in moved}  # additions read as uv prints them
    for line in diff(before, after, why):
        say(paint(line, "green" if line.startswith("+") else "red", sys.stderr))


def diff(before: Pins, after: Pins, why: Mapping[str, str] | None = None) -> list[str]:
    """``- name==old`` / ``+ name==new`` lines, by name; a ``+`` line followed by ``why[name]``
    in brackets when it is known."""
    why = why or {}
    lines = []
    for name in sorted(set(before) | set(after), key=str.lower):
        old, new = before.get(name), after.get(name)
        if old == new:
            continue
        if old is not None:
            lines.append(f"- {name}=={old}")
        if new is not None:
            lines.append(f"+ {name}=={new}" + (f"  ({why[name]})" if why.get(name) else ""))
    return lines


def _selected_pins(args: argparse.Namespace) -> Pins:
    current = generations.selected(environment_home(home_of(args, creates=args.command == "plugins-install")))
    return current.pins if current is not None else {}
