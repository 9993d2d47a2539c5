"""Sync: resolve, build and select a generation — by ONE rule, :func:`obtain` then
:func:`select_generation`, which sync, the frozen sync, admission, disable and update share.

The rule: remove what an interrupted run left; when the selected generation was built for these
inputs and is intact, nothing to do; else an intact generation built for them before is selected
again (no resolve, no uv); else resolve (unless the caller already has the resolution), build with
uv, and select. Selection changes only at the very end (one atomic replace of ``state.json``);
a failure before it leaves the previous selection in force and removes the unfinished generation.

The no-op path reads the inputs, one ``state.json``, one ``generation.json`` and one
site-packages listing, then writes its receipt: no resolver, no uv.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pm.base.errors import EXIT_OK, PmError, UsageError
from pm.base.uv import Uv
from pm.env import generations
from pm.inputs.collect import Inputs
from pm.ops.invalid import refuse_invalid
from pm.ops.options import SILENT, Options, Reporter
from pm.ops.resolve import resolve_in
from pm.ops.transaction import Result, Transaction, cache_dir, transaction

if TYPE_CHECKING:
    from pm.env.started import Started
    from pm.resolver import Resolution

ALREADY = "already in sync"
#: An upgrade that resolved to the selected generation's files (never a shortcut: it read the index).
UP_TO_DATE = "already up to date: the upgrade resolved to the selected generation's files"
_log = logging.getLogger("pm.steps")


@dataclass(frozen=True)
class Obtained:
    """A generation for the inputs and how it was found: ``current`` (already selected),
    ``reused`` (built before, not selected) or ``built`` (just now)."""

    generation: generations.Generation
    how: str


def sync(home: Path, options: Options | None = None, reporter: Reporter = SILENT) -> Result:
    """``hermes pm sync``: the sync transaction on ``home``'s environment."""
    txn = transaction(home, "sync", sync_in, options, reporter, command="sync")
    return Result(txn.receipt, txn.inputs)


def sync_in(txn: Transaction, check: Callable[[Resolution], None] | None = None) -> None:
    """Sync ``txn``'s gathered inputs (the caller's transaction holds the lock); finishes the receipt.
    ``check`` (consent, :mod:`pm.ops.consent`) sees the resolution before anything is built or selected."""
    _refuse_foreign(txn.gathered)  # before any resolve: nothing would come of it
    refuse_invalid(txn)  # before the no-op too: a generation built without the plugin is no answer
    obtained = obtain(txn, txn.gathered, lambda: _resolving(txn), check)
    if obtained is not None:
        upgraded = txn.options.upgrade.asked and obtained.how == "current"
        select_generation(txn, obtained, UP_TO_DATE if upgraded else None)


def _resolving(txn: Transaction) -> Resolution | None:
    txn.reporter.progress("resolving")
    return resolve_in(txn)


def obtain(txn: Transaction, inputs: Inputs, resolution: Callable[[], Resolution | None],
           check: Callable[[Resolution], None] | None = None) -> Obtained | None:
    """The reuse-or-build rule (module docstring). ``resolution`` is called only when a build is
    needed; None from it (a conflict, receipt finished) stops here with None. ``check`` sees the
    resolution of a generation about to be reused or built first (it raises to stop). An upgrade
    resolves first, whatever is selected (:func:`_obtain_upgraded`)."""
    _remove_incomplete(txn)
    if txn.options.upgrade.asked:
        return _obtain_upgraded(txn, inputs, resolution, check)
    found = generations.reuse(inputs.home, inputs.fingerprint, watch=txn.watch)
    if found.current and found.generation is not None:
        return Obtained(found.generation, "current")
    if found.damaged:
        txn.draft.warnings.append(found.damaged)
    if found.generation is not None:
        if check is not None:
            from pm.records.sections import resolution_from_json  # only when consent is asked

            check(resolution_from_json(found.generation.record["resolution"]))
        return Obtained(found.generation, "reused")
    started = start_generation(txn, inputs)  # the venv is made while the resolver works
    try:
        resolved = resolution()
        if resolved is not None and check is not None:
            check(resolved)
    except BaseException:
        started.discard(txn.store)
        raise
    if resolved is None:
        started.discard(txn.store)
        return None
    return Obtained(build_generation(txn, inputs, resolved, started), "built")


def _obtain_upgraded(txn: Transaction, inputs: Inputs, resolution: Callable[[], Resolution | None],
                     check: Callable[[Resolution], None] | None) -> Obtained | None:
    """An upgrade's rule: resolve (no preference for what it frees), let ``check`` see it, then keep
    the generation built for these inputs when it holds exactly the resolved files, else build one."""
    from pm.records.sections import resolution_to_json

    resolved = resolution()
    if resolved is None:
        return None
    if check is not None:
        check(resolved)
    found = generations.reuse(inputs.home, inputs.fingerprint, watch=txn.watch)
    if found.damaged:
        txn.draft.warnings.append(found.damaged)
    if found.generation is not None and \
            _files_of(found.generation.record["resolution"]) == _files_of(resolution_to_json(resolved)):
        return Obtained(found.generation, "current" if found.current else "reused")
    return Obtained(build_generation(txn, inputs, resolved), "built")


def _remove_incomplete(txn: Transaction) -> None:
    removed = generations.remove_incomplete(txn.home, txn.store, watch=txn.watch)
    if removed:
        txn.draft.warnings.append(
            f"removed unfinished generation(s) left by an interrupted run: {', '.join(removed)}")


def _refuse_foreign(inputs: Inputs) -> None:
    if inputs.target.foreign:
        raise UsageError(f"cannot build for {inputs.target.platform} (Python {inputs.target.python_version}) on this "
                         "machine: --python-version and --platform are for `hermes pm resolve` and `hermes pm export`")


def start_generation(txn: Transaction, inputs: Inputs) -> Started:
    """A new generation's folder, its venv being made on another thread (:func:`pm.env.started.start`)."""
    _refuse_foreign(inputs)
    from pm.env.started import start  # the build loads only when there is work

    with cleaning_up(txn):
        return start(inputs, Uv(cache_dir() / "uv"), txn.store)


def build_generation(txn: Transaction, inputs: Inputs, resolution: Resolution,
                     started: Started | None = None) -> generations.Generation:
    """Build a new generation with uv (not selected yet), in ``started`` when given; never for a
    foreign target."""
    _refuse_foreign(inputs)
    from pm.env.build import build

    began = time.perf_counter()
    with cleaning_up(txn):
        built = build(inputs, resolution, Uv(cache_dir() / "uv"), txn.store, txn.reporter.progress, started)
    _log.info("build: generation %s, %d packages, in %.3fs", built.id, len(resolution.pins), time.perf_counter() - began)
    return built


def select_generation(txn: Transaction, obtained: Obtained, message: str | None = None) -> None:
    """Select ``obtained`` (nothing to do when current) and finish the receipt ok."""
    from pm.env.build import pause_point

    generation, how = obtained.generation, obtained.how
    if how != "current":
        with cleaning_up(txn):
            txn.reporter.progress(f"selecting generation {generation.id}")
            pause_point("select", txn.home, txn.store)
            generations.select(txn.home, txn.store, generation)
    _finish_profile_deletes(txn)
    if txn.draft.resolution is None:  # a successful receipt lists every file
        txn.draft.resolution = generation.record["resolution"]
    txn.draft.generation = generation.to_receipt(selected=True, restart_required=how != "current")
    default = {"current": ALREADY, "reused": f"selected generation {generation.id}, already built for these inputs",
               "built": f"built and selected generation {generation.id}"}[how]
    txn.finish("ok", EXIT_OK, message or default)


def _finish_profile_deletes(txn: Transaction) -> None:
    """A generation for the profiles on disk is selected: deletions a killed run began are done
    (:mod:`pm.ops.pending`)."""
    from pm.ops import pending

    for name in pending.finish(txn.home, txn.store, watch=txn.watch):
        txn.draft.warnings.append(f"finished deleting profile {name!r}, which an interrupted run had begun")


@contextmanager
def cleaning_up(txn: Transaction) -> Iterator[None]:
    """On a failure while building or selecting: remove the unfinished generation, say what stays
    selected, and let the failure go on to the transaction."""
    try:
        yield
    except PmError as failure:
        _after_a_mismatch(txn, failure)
        try:
            generations.remove_incomplete(txn.home, txn.store)
        except PmError as cleanup:
            txn.draft.warnings.append(f"could not remove the unfinished generation: {cleanup}")
        current = generations.read_state(txn.home).get("selected")
        txn.draft.record(message="nothing was selected; " + (
            f"generation {current} stays selected" if current else "no generation is selected"))
        raise


def _after_a_mismatch(txn: Transaction, failure: PmError) -> None:
    """A file whose bytes are not the sha256 its index page gave: the page (fresh in the cache for
    its max-age) may be what changed since; the next step asks for every page again."""
    from pm.base.commands import hermes
    from pm.env.build import HashMismatch

    if isinstance(failure, HashMismatch):
        txn.draft.step(hermes("pm", "sync", "--refresh", home=txn.options.shown_home),
                         "ask the index for every page again (it may have fixed the file or its sha256 since the "
                         "cached pages were read), then resolve and build anew")


def sync_from(home: Path, from_file: str, options: Options | None = None, reporter: Reporter = SILENT, *,
              ignore_inputs: bool = False, allow_unmet: bool = False) -> Result:
    """The frozen sync (``--from FILE``): build exactly the files FILE names (``--find-links``
    folders may supply them, matched by filename and sha256), no resolver, no index. Refused
    (:class:`~pm.ops.failures.InputsChanged`) when the home's inputs are not those FILE was made
    for, unless ``ignore_inputs``; even then, FILE's pins must meet core's lock and every declared
    range of the home (:class:`~pm.ops.failures.UnmetRequirements`), unless ``allow_unmet``. The new generation carries the home's fingerprint when the
    inputs match FILE's, else the sha256 of FILE, so a later plain sync resolves anew."""
    txn = transaction(home, "sync", lambda txn: _sync_from(txn, from_file, ignore_inputs, allow_unmet), options, reporter,
                      command="sync")
    return Result(txn.receipt, txn.inputs)


def _sync_from(txn: Transaction, label: str, ignore_inputs: bool, allow_unmet: bool) -> None:
    from pm.records.frozen import localize, read_frozen
    from pm.records.sections import resolution_to_json

    inputs, draft = txn.gathered, txn.draft
    _remove_incomplete(txn)
    with cleaning_up(txn):
        frozen = read_frozen(Path(label), inputs.target, watch=txn.watch)
    changes = _check_basis(txn, frozen, label, ignore_inputs)
    if changes != []:  # FILE was not made for these inputs: its pins must still meet them
        _check_pins_meet_roots(txn, frozen.resolution, label, allow_unmet)
    with cleaning_up(txn):
        resolution, local = localize(frozen.resolution, inputs.settings.find_link_folders, watch=txn.watch)
        _check_offline(inputs, resolution, label)
    draft.record(frozen={"local_files": list(local)})
    draft.resolution = resolution_to_json(resolution)
    draft.warnings += list(resolution.warnings)
    frozen_inputs = replace(inputs, fingerprint=inputs.fingerprint if changes == [] else frozen.sha256,
                            settings=replace(inputs.settings,  # the pins' own credentials, for uv's netrc only
                                             index_urls=(*inputs.settings.index_urls, *frozen.credentials)))
    current = generations.selected(inputs.home, watch=txn.watch)
    if current is not None and current.fingerprint == frozen_inputs.fingerprint \
            and _files_of(current.record["resolution"]) == _files_of(draft.resolution) and current.intact(watch=txn.watch):
        select_generation(txn, Obtained(current, "current"))
        return
    txn.reporter.progress(f"building {len(resolution.pins)} files of {label} ({len(local)} from --find-links folders)")
    select_generation(txn, Obtained(build_generation(txn, frozen_inputs, resolution), "built"))


def _check_basis(txn: Transaction, frozen: Any, label: str, ignore_inputs: bool) -> list[str] | None:
    """The differences between FILE's inputs and the home's ([] = match; None = unrecorded);
    raises :class:`InputsChanged` (with the commands that go on) unless ``ignore_inputs``."""
    from pm.base.commands import hermes
    from pm.ops.failures import InputsChanged
    from pm.records.frozen import Basis, differences

    inputs, draft, home = txn.gathered, txn.draft, txn.options.shown_home
    changes = None if frozen.basis is None else (
        [] if frozen.basis.fingerprint == inputs.fingerprint
        else differences(frozen.basis, Basis.from_inputs(inputs), label))
    draft.record(frozen={"from": str(Path(label).absolute()), "kind": frozen.kind,
                           "fingerprint": frozen.basis.fingerprint if frozen.basis else None,
                           "inputs": "unrecorded" if changes is None else "changed" if changes else "match"})
    if changes != [] and not ignore_inputs:
        draft.step(hermes("pm", "sync", "--from", label, "--ignore-inputs", home=home),
                     f"build exactly the files of {label} anyway")
        if changes is not None:
            draft.step(hermes("pm", "sync", home=home), "resolve the current inputs instead")
        raise InputsChanged(label, changes)
    draft.warnings += [f"built although the inputs changed (--ignore-inputs): {c}" for c in changes or ()]
    return changes


def _check_pins_meet_roots(txn: Transaction, resolution: Resolution, label: str, allow_unmet: bool) -> None:
    """Refuse (:class:`UnmetRequirements`) pins that break core's lock or a declared range,
    unless ``allow_unmet``; then they are only warned about."""
    from pm.base.commands import hermes
    from pm.ops.failures import UnmetRequirements
    from pm.resolver.model import root_requirements, unmet_roots

    inputs, draft, home = txn.gathered, txn.draft, txn.options.shown_home
    unmet = unmet_roots(root_requirements(inputs.union, inputs.target), resolution.pins, label)
    if not unmet:
        return
    if not allow_unmet:
        draft.step(hermes("pm", "sync", home=home), "resolve this home's requirements instead")
        draft.step(hermes("pm", "sync", "--from", label, "--ignore-inputs", "--allow-unmet", home=home),
                     f"build exactly the files of {label} anyway, knowing the requirements above are broken")
        raise UnmetRequirements(label, unmet)
    draft.warnings += [f"built although its pins break this home's requirements (--allow-unmet): {line}"
                         for line in unmet]


def _files_of(resolution: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(p["name"], p["version"], p["file"]["sha256"]) for p in resolution["packages"]}


def _check_offline(inputs: Inputs, resolution: Resolution, label: str) -> None:
    if not inputs.settings.offline:
        return
    missing = [p.link.filename for p in resolution.pins if not p.link.url.startswith("file:")]
    if missing:
        raise PmError(f"--offline: {len(missing)} file(s) of {label} are in no --find-links folder: "
                      f"{', '.join(missing)}")
