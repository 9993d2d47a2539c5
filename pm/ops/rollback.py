"""Rollback, an undo: select an earlier generation again together with the plugin selection it was
built from.

Under the home lock: name the generation (``--to ID``: an id, a prefix only it has, ``previous``
or ``selected``; by default the previous one) and refuse, changing nothing, when it is missing,
damaged, or built by a pm that did not record its selection (nothing is guessed). Then plan the
edit of every home's ``config.yaml`` that the generation records (:func:`pm.inputs.restore.restored`:
``plugins.enabled``, ``plugins.disabled`` and ``memory.provider`` as they were, comments kept),
check each as pm reads a config, write them (each only if nobody changed it since it was read; on
a failure the files already written get their bytes back), and only then select the generation.
The next ``hermes pm sync`` finds the inputs the generation was built for and has nothing to do,
unless a declaration, core or a setting changed since (a warning says so).

It writes ``state.json``, the receipt and the ``config.yaml`` of the homes it restores; nothing
under ``plugins/**`` (invariant 2).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pm.base.commands import hermes
from pm.base.errors import EXIT_OK, PmError
from pm.base.files import TextFile
from pm.base.store import Store
from pm.env import generations
from pm.env.generations import Generation
from pm.env.history import UnknownGeneration, find
from pm.inputs.config import CONFIG_NAME, HomeConfig, parse_config
from pm.inputs.recorded import SavedHome
from pm.ops.options import SILENT, Options, Reporter
from pm.ops.transaction import Result, Transaction, transaction


class RollbackRefused(PmError):
    """A rollback that cannot be done as asked; nothing changed. ``why``: ``no-previous``,
    ``missing``, ``damaged`` (``detail``: what is wrong) or ``no-selection``."""

    kind = "rollback"
    outcome = "refused"

    def __init__(self, why: str, generation: str | None, detail: str = "", *, default: bool = True) -> None:
        self.why, self.generation, self.detail, self.default = why, generation, detail, default
        super().__init__(refusal_message(self))


def refusal_message(refused: RollbackRefused) -> str:
    """The sentence for :class:`RollbackRefused`."""
    which = f"the previous generation {refused.generation}" if refused.default else f"generation {refused.generation}"
    return {
        "no-previous": "there is no previous generation",
        "missing": f"{which} is missing or incomplete",
        "damaged": f"{which} is damaged: {refused.detail}",
        "no-selection": f"{which} does not record the plugin selection it was built from (an older pm "
                        "built it), so rolling back to it could not restore that selection; nothing is guessed",
    }[refused.why]


@dataclass(frozen=True)
class Edit:
    """One home's ``config.yaml`` as it is (``before``, ``was``) and as the rollback writes it."""

    saved: SavedHome
    path: Path
    before: bytes
    was: HomeConfig
    after: str

    def to_json(self) -> dict[str, Any]:
        import hashlib

        changed = {key: {"from": _shown(old), "to": _shown(new)} for key, old, new in (
            ("plugins.enabled", self.was.enabled, self.saved.enabled),
            ("plugins.disabled", self.was.disabled, self.saved.disabled),
            ("memory.provider", self.was.memory_provider, self.saved.memory_provider)) if old != new}
        return {"config": str(self.path), "profile": self.saved.profile, "changed": changed,
                "before_sha256": hashlib.sha256(self.before).hexdigest(),
                "after_sha256": hashlib.sha256(self.after.encode()).hexdigest()}


def _shown(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def rollback(home: Path, options: Options | None = None, reporter: Reporter = SILENT, *,
             to: str | None = None) -> Result:
    """``hermes pm rollback [--to ID]`` (module docstring). The receipt's ``rollback`` says what
    was restored: ``from`` and ``to`` (generation ids) and ``configs`` (per file, each key's old
    and new value)."""
    txn = transaction(home, "rollback", lambda txn: _rollback(txn, to), options, reporter, command="rollback",
                      gather_inputs=False)
    return Result(txn.receipt)


def _rollback(txn: Transaction, to: str | None) -> int:
    home, draft = txn.home, txn.draft
    state = generations.read_state(home)
    try:
        target = _target(home, to, state)
        saved = target.selection
        if saved is None:
            raise RollbackRefused("no-selection", target.id, default=to is None)
        edits, warnings = _plan(home, target, saved)
    except UnknownGeneration:
        draft.step(hermes("pm", "generations", home=txn.options.shown_home), "list the generations to go back to")
        raise
    except PmError:
        draft.step(hermes("pm", "sync", home=txn.options.shown_home),
                   "build a fresh generation for the current inputs instead")
        raise
    was = state.get("selected")
    _write(edits, lambda: generations.select(home, txn.store, target) if was != target.id else None)
    draft.generation = target.to_receipt(selected=True, restart_required=was != target.id)
    draft.record(rollback={"from": was, "to": target.id, "configs": [e.to_json() for e in edits]})
    draft.record(message=f"generation {target.id} is selected again (was {was})" if was != target.id
                 else f"generation {target.id} stays selected")
    draft.warnings += warnings + _after_rollback(home, target)
    txn.finish("ok", EXIT_OK)
    return EXIT_OK


def _target(home: Path, to: str | None, state: dict[str, Any]) -> Generation:
    """The generation to roll back to, intact; raises RollbackRefused or UnknownGeneration."""
    target = find(home, to) if to is not None else generations.previous(home)
    if target is None:
        gone = state.get("previous")
        raise RollbackRefused("missing" if gone else "no-previous", gone)
    damage = target.problems()
    if damage:
        raise RollbackRefused("damaged", target.id, "; ".join(damage), default=to is None)
    return target


def _plan(home: Path, target: Generation, saved: tuple[SavedHome, ...]) -> tuple[list[Edit], list[str]]:
    """The config edits that restore ``saved`` (every one checked, none written) and warnings for
    the homes it cannot speak for."""
    from pm.inputs.restore import restored
    from pm.inputs.selection import profile_homes
    from pm.ops.config_file import config_bytes

    edits, warnings = [], []
    recorded = set()
    for entry in saved:
        where = home if entry.profile is None else home / "profiles" / entry.profile
        recorded.add(where)
        if entry.profile is not None and (entry.profile in ("", ".", "..") or "/" in entry.profile
                                          or not (where / CONFIG_NAME).is_file()):
            warnings.append(f"profile {entry.profile!r} is gone since generation {target.id} was built; "
                            "its selection is not restored")
            continue
        path = where / CONFIG_NAME
        before = config_bytes(where)
        was = parse_config(path, TextFile(path, before, before.decode()))
        wanted = replace(entry, home=where).for_file(was)
        after = restored(before.decode(), wanted)
        if after.encode() != before:
            edits.append(Edit(wanted, path, before, was, after))
    for profile in profile_homes(home)[0]:
        if profile not in recorded:
            warnings.append(f"profile {profile.name!r} was made after generation {target.id} was built; "
                            "its selection is left as it is")
    return edits, warnings


def _write(edits: list[Edit], select: Callable[[], object]) -> None:
    """Write every edit, each only if its file is unchanged, then ``select``; on a failure put
    back the files already written, then let the failure go on."""
    from pm.ops.config_file import write_config

    done: list[Edit] = []
    try:
        for edit in edits:
            write_config(edit.path.parent, edit.before, edit.after)
            done.append(edit)
        select()
    except PmError:
        for edit in done:
            Store(edit.path.parent).write_bytes(edit.path, edit.before)
        raise


def _after_rollback(home: Path, target: Generation) -> list[str]:
    """What the restored selection declares that ``target`` does not hold, or that its inputs
    still differ from those ``target`` was built for."""
    from pm.env.readiness import check
    from pm.inputs.collect import gather
    from pm.inputs.settings import Flags

    try:
        readiness = check(gather(home, Flags()), target)
    except PmError:
        return []
    unmet = [f"after rollback, {v.name} is not ready: {v.reason()} (run `hermes pm sync`, or disable it)"
             for v in readiness.verdicts if not v.ready]
    if readiness.inputs_changed and not unmet:
        unmet.append(f"the inputs differ from those generation {target.id} was built for (a declaration, core or "
                     "a setting changed since): the next `hermes pm sync` builds for them")
    return unmet
