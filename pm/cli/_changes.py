"""The package diff a person sees after a command that may change the selected generation:
``+ name==version`` for what it added, ``- name==version`` for what it removed (a version change
is both), on stderr, first, as uv prints them before its summary. Quiet under ``--json`` and ``-q``."""

from __future__ import annotations

import argparse
import sys

from pm.base.errors import PmError
from pm.cli._common import home_of
from pm.cli._output import paint, say
from pm.env import generations
from pm.inputs.settings import environment_home

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


def tell_changes(args: argparse.Namespace) -> None:
    """Say what changed since :func:`pins_before` (``args.pins_before``; nothing when nothing
    did), once: a command calls it before its own summary, as uv tells what changed first."""
    before = getattr(args, "pins_before", None)
    args.pins_before = None
    if before is None:
        return
    try:
        after = _selected_pins(args)
    except (PmError, OSError, KeyError):
        return
    for line in diff(before, after):
        say(paint(line, "green" if line.startswith("+") else "red", sys.stderr))


def diff(before: Pins, after: Pins) -> list[str]:
    """``- name==old`` / ``+ name==new`` lines, by name."""
    lines = []
    for name in sorted(set(before) | set(after), key=str.lower):
        old, new = before.get(name), after.get(name)
        if old == new:
            continue
        if old is not None:
            lines.append(f"- {name}=={old}")
        if new is not None:
            lines.append(f"+ {name}=={new}")
    return lines


def _selected_pins(args: argparse.Namespace) -> Pins:
    current = generations.selected(environment_home(home_of(args, creates=args.command == "plugins-install")))
    return current.pins if current is not None else {}
