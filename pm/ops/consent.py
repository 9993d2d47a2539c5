"""Consent to a change's cargo: what an admission, install or update brings (issue 36).

The **cargo** is computed after the resolution and before anything is built or written: the
projects the new resolution pins that the selected generation does not (with versions and download
sizes, from the pinned files), the pins it moves (old and new version), and the scan's ``caution``
findings of an install (:mod:`pm.env.plugin_scan`). A change that brings none of these needs no
consent. Otherwise consent is given, in this order, by:

- ``--yes`` (:attr:`pm.ops.options.Options.yes`);
- the setting, flag beats environment beats config: ``HERMES_PM_ASSUME_YES`` (``1``/``true``/``yes``
  or ``0``/``false``/``no``), else ``pm.assume_yes: true`` in the environment home's ``config.yaml``;
- a person at a terminal (:attr:`~pm.ops.options.Options.consent`, the CLI's question, y/N).

Else the operation is refused (:class:`NotConsented`, exit 3, nothing changed) with the same
command and ``--yes`` as its next step. The cargo is told through the reporter first (operations
print nothing themselves); the receipt's ``consent`` records the cargo and how it was given.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pm.base.commands import hermes
from pm.base.errors import EXIT_CONFLICT, PmError

if TYPE_CHECKING:
    from pm.ops.transaction import Transaction
    from pm.resolver.model import Resolution

_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


@dataclass(frozen=True)
class Brought:
    """One project the change brings: ``was`` is the selected generation's version (None: new)."""

    name: str
    version: str
    size: int | None = None
    was: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "size": self.size} | (
            {"was": self.was} if self.was is not None else {})


@dataclass(frozen=True)
class Cargo:
    """What a change brings (module docstring); ``cautions``: the scan's findings that ask."""

    new: tuple[Brought, ...] = ()
    moved: tuple[Brought, ...] = ()
    cautions: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.new or self.moved or self.cautions)

    @property
    def download(self) -> int:
        return sum(b.size or 0 for b in self.new + self.moved)

    def to_json(self) -> dict[str, Any]:
        return {"new": [b.to_json() for b in self.new], "moved": [b.to_json() for b in self.moved],
                "download_bytes": self.download} | ({"cautions": list(self.cautions)} if self.cautions else {})

    def lines(self, what: str) -> list[str]:
        """The cargo for a person: a heading naming ``what`` brings it, then one line a project."""
        said = [f"{what} brings:"]
        said += [f"  + {b.name}=={b.version} ({size(b.size)})" for b in self.new]
        said += [f"  ~ {b.name} {b.was} -> {b.version} ({size(b.size)})" for b in self.moved]
        said += [f"  ! scan: {c}" for c in self.cautions]
        if self.new or self.moved:
            said.append(f"  {len(self.new)} new, {len(self.moved)} moved, {size(self.download)} to download")
        return said


def size(count: int | None) -> str:
    if count is None:
        return "size unknown"
    for unit, scale in (("MB", 1_000_000), ("kB", 1_000)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} B"


def cargo_of(before: Mapping[str, str], resolution: Resolution, cautions: tuple[str, ...] = ()) -> Cargo:
    """What ``resolution`` brings over the pins ``before`` (the selected generation's; empty: none)."""
    new, moved = [], []
    for pin in sorted(resolution.pins, key=lambda p: p.name):
        old = before.get(pin.name)
        version = str(pin.version)
        if old is None:
            new.append(Brought(pin.name, version, pin.link.size))
        elif old != version:
            moved.append(Brought(pin.name, version, pin.link.size, old))
    return Cargo(tuple(new), tuple(moved), cautions)


class NotConsented(PmError):
    """A change that brings something (``cargo``) without consent: declined at the terminal, or no
    terminal and neither ``--yes`` nor ``pm.assume_yes``. Nothing changed."""

    kind = "not-consented"
    outcome = "refused"
    exit_code = EXIT_CONFLICT

    def __init__(self, cargo: Cargo, declined: bool, retry: str) -> None:
        self.cargo = cargo
        self.declined = declined
        self.retry = retry
        why = "declined at the terminal" if declined else "no terminal to ask, and neither --yes nor pm.assume_yes"
        super().__init__(f"the change brings {len(cargo.new)} new and {len(cargo.moved)} moved project(s)"
                         f"{' and scan cautions' if cargo.cautions else ''} without consent ({why}); nothing changed; "
                         f"to consent, run `{retry}`")


def assumed(txn: Transaction) -> str | None:
    """How consent is given without asking: ``--yes``, ``setting`` (environment or config), or None."""
    if txn.options.yes:
        return "--yes"
    told = os.environ.get("HERMES_PM_ASSUME_YES", "").strip().lower()
    if told in _TRUE:
        return "setting"
    if told in _FALSE:
        return None
    from pm.inputs.config import read_config

    return "setting" if read_config(txn.home, watch=txn.watch).pm.get("assume_yes") is True else None


def consent_to(txn: Transaction, cargo: Cargo, what: str, retry: tuple[str, ...]) -> None:
    """Tell ``cargo`` (brought by ``what``) and obtain consent for it, or raise :class:`NotConsented`
    (``retry``: the command's words, run again with ``--yes``). Nothing to consent to: returns."""
    if not cargo:
        return
    for line in cargo.lines(what):
        txn.reporter.notice(line)
    how = assumed(txn)
    asked = txn.options.consent
    if how is None and asked is not None:
        how = "terminal" if asked(cargo) else None
        declined = how is None
    else:
        declined = False
    txn.draft.record(consent={"cargo": cargo.to_json(), "given": how})
    if how is None:
        command = hermes(*retry, "--yes", home=txn.options.shown_home)
        txn.draft.step(command, "consent to what the change brings (shown above and in this receipt's consent)")
        raise NotConsented(cargo, declined, command)


def pins_before(txn: Transaction) -> dict[str, str]:
    """The pins a change is measured against: the selected generation's, and core's lock (the
    host's own packages are never cargo, even before the first generation)."""
    from pm.env import generations

    current = generations.selected(txn.home, watch=txn.watch)
    locked = {str(name): str(version) for name, version in txn.gathered.core.lock}
    return locked | (current.pins if current is not None else {})
