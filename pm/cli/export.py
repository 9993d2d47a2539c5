"""``hermes pm export --format pylock|requirements|nix [--selected]``: a resolution for others to
build from: a PEP 751 lock, hashed pins, or pure-data Nix for ``pm/data/nix/wheels.nix``.

Without ``--selected`` it resolves the current union (like ``resolve``); with it, it writes the
resolution the selected generation was built from, with the inputs recorded for it — what a
declarative build should consume. Read-only: works in a managed install.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pm.base.errors import EXIT_FAILURE, EXIT_OK, PmError
from pm.cli._common import home_of, options_from
from pm.cli._output import say
from pm.cli.resolve import tell_resolved
from pm.env import generations
from pm.ops.resolve import resolve_in
from pm.ops.transaction import Transaction, transaction
from pm.records.export import NIX_FUNCTION, pylock_name_warning, to_nix, to_pylock, to_requirements
from pm.records.frozen import Basis
from pm.resolver import Resolution


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=["pylock", "requirements", "nix"], default="pylock")
    parser.add_argument("-o", "--output", help="write here instead of stdout (pylock.toml or pylock.<name>.toml, "
                        "the names PEP 751 gives a lock; requirements.txt; hermes-wheels.nix)")
    parser.add_argument("--selected", action="store_true",
                        help="the selected generation's recorded resolution (no resolving)")
    parser.set_defaults(candidate=None)


def run(args: argparse.Namespace) -> int:
    txn = transaction(home_of(args), "export", _selected if args.selected else _resolved, options_from(args),
                      lock=False)
    exported: tuple[Resolution, Basis] | None = txn.value
    if exported is None or txn.receipt.exit_code != EXIT_OK:
        tell_resolved(txn.receipt)
        return txn.receipt.exit_code
    resolution, basis = exported
    settings = txn.gathered.settings
    text = {"pylock": to_pylock, "nix": to_nix}.get(
        args.format, lambda r, b: to_requirements(r, settings.index_urls, settings.find_links))(resolution, basis)
    if args.output:
        failed = _write(Path(args.output), text)
        if failed:
            say(f"error: cannot write {args.output}: {failed}")
            return EXIT_FAILURE
        say(f"wrote {args.output} ({len(resolution.pins)} packages)")
        warning = pylock_name_warning(Path(args.output)) if args.format == "pylock" else None
        if warning:
            say(f"warning: {warning}")
        if args.format == "nix":
            say(f"fetch them in Nix with: import {NIX_FUNCTION} {{ source = {_nix_path(args.output)}; }}")
    else:
        sys.stdout.write(text)
    return EXIT_OK


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

    receipt = txn.receipt
    current = generations.selected(txn.home)
    if current is None:
        raise PmError(f"no generation is selected in {txn.home}; build one with `hermes pm sync`")
    receipt.resolution = current.record["resolution"]
    receipt.generation = current.to_receipt(selected=True, restart_required=False)
    txn.finish("ok", EXIT_OK, f"exported generation {current.id}")
    return resolution_from_json(current.record["resolution"]), Basis.from_generation(current.record)


def _write(path: Path, text: str) -> str | None:
    """Write ``text`` to ``path``; what went wrong (a missing folder, a folder, a file that cannot
    be written), or None."""
    if path.is_dir():
        return "it is a folder; give a file name"
    if not path.parent.is_dir():
        return f"the folder {path.parent} does not exist"
    try:
        path.write_text(text, encoding="utf-8")
    except (OSError, ValueError) as exc:
        return getattr(exc, "strerror", None) or str(exc)
    return None


def _nix_path(output: str) -> str:
    path = Path(output)
    return str(path) if path.is_absolute() else f"./{path}"
