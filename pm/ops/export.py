"""``export``: a resolution for others to build from, as text in one format (a PEP 751 lock,
hashed pins with the index options that produced them, or pure-data Nix).

Without ``selected`` it resolves the current union (like ``resolve``); with it, it takes the
resolution the selected generation was built from, with the inputs recorded for it — what a
declarative build should consume. Read-only (no lock): works in a managed install. Writing the
text to a file (:func:`write_output`) is a separate step the caller chooses.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pm.base.errors import EXIT_OK, PmError
from pm.env import generations
from pm.ops.options import SILENT, Options, Reporter
from pm.ops.resolve import resolve_in
from pm.ops.transaction import Result, Transaction, transaction
from pm.records.export import NIX_FUNCTION, pylock_name_warning, to_nix, to_pylock, to_requirements
from pm.records.frozen import Basis
from pm.resolver import Resolution

FORMATS = ("pylock", "requirements", "nix")


@dataclass(frozen=True)
class Exported:
    """What :func:`export` made: the operation's result and, when it succeeded, the ``text`` in
    the asked format and how many ``packages`` it pins."""

    result: Result
    text: str | None = None
    packages: int = 0


def export(home: Path, fmt: str, options: Options | None = None, reporter: Reporter = SILENT, *,
           selected: bool = False) -> Exported:
    """The export transaction (module docstring); ``fmt`` is one of :data:`FORMATS`."""
    txn = transaction(home, "export", _selected if selected else _resolved, options, reporter, lock=False)
    result = Result(txn.receipt, txn.inputs)
    exported: tuple[Resolution, Basis] | None = txn.value
    if exported is None or txn.receipt.exit_code != EXIT_OK:
        return Exported(result)
    resolution, basis = exported
    if fmt == "pylock":
        text = to_pylock(resolution, basis)
    elif fmt == "nix":
        text = to_nix(resolution, basis)
    else:
        settings = txn.gathered.settings
        text = to_requirements(resolution, settings.index_urls, settings.find_links)
    return Exported(result, text, len(resolution.pins))


def _resolved(txn: Transaction) -> tuple[Resolution, Basis] | None:
    """The current union's resolution and basis; finishes the receipt."""
    resolution = resolve_in(txn)
    if resolution is None:
        return None
    txn.finish("ok", EXIT_OK)
    return resolution, Basis.from_inputs(txn.gathered)


def _selected(txn: Transaction) -> tuple[Resolution, Basis]:
    """The selected generation's resolution and basis; finishes the receipt (ok)."""
    from pm.records.sections import resolution_from_json

    draft = txn.draft
    current = generations.selected(txn.home)
    if current is None:
        raise PmError(f"no generation is selected in {txn.home}; build one with `hermes pm sync`")
    draft.resolution = current.record["resolution"]
    draft.generation = current.to_receipt(selected=True, restart_required=False)
    txn.finish("ok", EXIT_OK, f"exported generation {current.id}")
    return resolution_from_json(current.record["resolution"]), Basis.from_generation(current.record)


def write_output(path: Path, text: str, fmt: str) -> tuple[str | None, list[str]]:
    """Write ``text`` to ``path``: (what went wrong — a missing folder, a folder, a file that
    cannot be written — or None; the notes for the person: a pylock name PEP 751 does not give,
    how to use a Nix file)."""
    if path.is_dir():
        return "it is a folder; give a file name", []
    if not path.parent.is_dir():
        return f"the folder {path.parent} does not exist", []
    try:
        path.write_text(text, encoding="utf-8")
    except (OSError, ValueError) as exc:
        return getattr(exc, "strerror", None) or str(exc), []
    warning = pylock_name_warning(path) if fmt == "pylock" else None
    notes = [f"warning: {warning}"] if warning else []
    if fmt == "nix":
        shown = str(path) if path.is_absolute() else f"./{path}"
        notes.append(f"fetch them in Nix with: import {NIX_FUNCTION} {{ source = {shown}; }}")
    return None, notes
