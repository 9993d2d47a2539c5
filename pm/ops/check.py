"""``hermes pm check [--with NAME]`` as an operation: the readiness of the selected generation;
no network, no install. Ready (exit 0) when every declared requirement of core and of each member
is satisfied by the installed metadata of the selected generation and the inputs have not changed
since it was built; not ready (exit 4) otherwise. A candidate (``--with``) is judged too and, when
the generation does not satisfy it, a dry run says whether preparing it would resolve (the only
step that may use the index; its own receipt).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pm.base.commands import hermes
from pm.base.errors import EXIT_NOT_READY, EXIT_OK, PmError
from pm.base.watch import Watch
from pm.env import generations
from pm.env.generations import Generation
from pm.env.readiness import Readiness
from pm.env.readiness import check as judge
from pm.inputs.collect import gather
from pm.inputs.config import read_config
from pm.ops.options import SILENT, Options, Reporter
from pm.ops.resolve import check_candidate, resolve
from pm.ops.transaction import Transaction, transaction
from pm.records.receipt import Receipt


@dataclass(frozen=True)
class Checked:
    """The check's finished ``receipt``; the ``readiness`` (None when the check failed), the
    ``candidate``'s verdict, and the candidate's ``dry_run`` receipt when one was needed."""

    receipt: Receipt
    readiness: Readiness | None = None
    candidate: dict[str, Any] | None = None
    dry_run: Receipt | None = None

    @property
    def code(self) -> int:
        return self.receipt.exit_code


def check(home: Path, options: Options | None = None, reporter: Reporter = SILENT, *,
          candidate: str | None = None) -> Checked:
    """Judge the selected generation of ``home``'s environment (and ``candidate``)."""
    tried: list[Receipt] = []
    txn = transaction(home, "check", lambda txn: _check(txn, candidate, tried), options, reporter,
                      lock=False, candidate=candidate, gather_inputs=False)
    readiness, verdict = txn.value if txn.value is not None else (None, None)
    return Checked(txn.receipt, readiness, verdict, tried[0] if tried else None)


def _check(txn: Transaction, name: str | None, tried: list[Receipt]) -> tuple[Readiness, dict[str, Any] | None]:
    """Judge the selected generation (and the candidate ``name``); finishes the receipt."""
    draft, home = txn.draft, txn.home
    generation = generations.selected(home, watch=txn.watch)
    readiness = judge(txn.gather(), generation)  # the selection as it is; the candidate is judged apart
    draft.generation = generation.to_receipt(selected=True, restart_required=False) if generation else None
    if generation is not None:  # what the checked environment holds: every file, for declarative builds
        draft.resolution = generation.record["resolution"]
    draft.record(readiness=readiness.to_json())
    draft.warnings += _removed_from_catalog(home, txn.watch)
    ready = readiness.ready
    candidate = None
    if name:
        candidate = judge_candidate(txn, name, generation, readiness, tried)
        draft.record(readiness={"candidate": candidate})
        ready = ready and candidate["ready"]
    if not ready:
        draft.step(hermes("pm", "sync", home=txn.options.shown_home),
                     "build a generation that satisfies every declared requirement")
    txn.finish("ok" if ready else "not-ready", EXIT_OK if ready else EXIT_NOT_READY)
    return readiness, candidate


def _removed_from_catalog(home: Path, watch: Watch) -> list[str]:
    """Installed catalog plugins the catalog has removed since (an offline check: the catalog file
    the home names, else the shipped one)."""
    from pm.env.plugin_install import removed_installed
    from pm.ops.install import catalog_for

    try:
        keep = read_config(home, watch=watch).pm.get("keep_removed") or []
        catalog = catalog_for(home, fetch=False, watch=watch)  # offline: the kept copy, never a request
        return [*catalog.notes, *removed_installed(home, catalog, tuple(str(k) for k in keep), watch=watch)]
    except PmError as exc:
        return [f"the catalog could not be read to check for removed plugins: {exc}"]


def judge_candidate(txn: Transaction, name: str, generation: Generation | None,
                    readiness: Readiness, tried: list[Receipt]) -> dict[str, Any]:
    """The candidate's verdict from installed metadata; when unmet, whether it would resolve."""
    verdict = readiness.verdict(name)
    inputs = None
    if verdict is None:
        inputs = gather(txn.home, txn.options.flags, candidate=name)
        check_candidate(inputs, name)
        verdict = judge(inputs, generation).verdict(name)
    assert verdict is not None
    satisfied = generation is not None and not verdict.unmet
    data: dict[str, Any] = {"name": verdict.name, "enabled": inputs is None, "ready": satisfied,
                            "unmet": list(verdict.unmet), "would_resolve": None}
    if not satisfied and inputs is not None:
        dry_run = resolve(txn.home, txn.options, candidate=name)
        data["would_resolve"] = dry_run.code == EXIT_OK
        data["resolve_receipt"] = None if dry_run.receipt.path is None else str(dry_run.receipt.path)
        tried.append(dry_run.receipt)
    return data
