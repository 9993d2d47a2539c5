"""``hermes pm outdated`` as an operation: for each pin of the selected generation, the version an
upgrade would take, the newest release for the target, and, where those two differ, who holds it
back (:mod:`.holders`). pip and uv list newer versions; pm names the holder.

Read-only, like ``resolve``: no home lock, nothing built or selected, ``config.yaml`` untouched.
It reads the selected generation's record, gathers the inputs as every resolve does, resolves the
union as an upgrade (:func:`upgrade_policy`; a stored resolution of the same inputs over unchanged
pages is reused, :mod:`pm.records.reuse`) and reads the pages of the pinned projects from the
same sources. Not answered by :mod:`pm.cli.shortcut` (it remembers resolve, sync and check only).

Exit 0 when it could tell (an outdated pin is information, not a failure); 3 when the union has
no resolution (nothing to upgrade to; ``hermes pm resolve`` gives the remedies); 1 when it could
not find out: no generation selected (kind ``no-generation``), an index that failed, a missing
project — never a verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import Version

from pm.base.commands import hermes
from pm.base.errors import EXIT_CONFLICT, EXIT_OK, PmError
from pm.env import generations
from pm.env.generations import Generation
from pm.inputs.collect import Inputs
from pm.ops.holders import Holder
from pm.ops.options import SILENT, Options, Reporter
from pm.ops.transaction import Transaction, cache_dir, policy_of, source_of, transaction
from pm.records.receipt import Receipt

if TYPE_CHECKING:
    from pm.index.base import Source
    from pm.resolver import Pin, Policy, Resolution


class NoGeneration(PmError):
    """``outdated`` of a home that has no selected generation: nothing is pinned to compare."""

    kind = "no-generation"

    def __init__(self, home: Path) -> None:
        self.home = home
        super().__init__(f"no generation is selected for {home}: nothing is pinned to compare with the index")


@dataclass(frozen=True)
class PinStatus:
    """One pin of the selected generation: its ``pinned`` version, the version an ``upgrade``
    would take (None: an upgrade of the current inputs drops it), the ``newest`` release for the
    target (None: no source offers a usable file), and who holds the upgrade below the newest."""

    name: NormalizedName
    pinned: Version
    upgrade: Version | None
    newest: Version | None
    holders: tuple[Holder, ...] = ()

    @property
    def outdated(self) -> bool:
        """A newer release than the pin exists for the target."""
        return self.newest is not None and self.newest > self.pinned

    @property
    def moves(self) -> bool:
        """An upgrade would change this pin (or drop it)."""
        return self.upgrade != self.pinned

    @property
    def held_back(self) -> bool:
        """An upgrade cannot reach the newest release."""
        return self.newest is not None and self.upgrade is not None and self.newest > self.upgrade

    def held_by(self, home: Path | None = None) -> list[str]:
        """Who holds it back, one sentence each (:meth:`Holder.describe`)."""
        said = [h.describe(home) for h in self.holders]
        if self.held_back and not said:
            said = [f"no one requirement excludes {self.newest}: the upgrade resolution chose {self.upgrade}"]
        return said

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "pinned": str(self.pinned),
                "upgrade": None if self.upgrade is None else str(self.upgrade),
                "newest": None if self.newest is None else str(self.newest),
                "outdated": self.outdated, "moves": self.moves, "held_back": self.held_back,
                "holders": [h.to_json() for h in self.holders]}


@dataclass(frozen=True)
class Outdated:
    """The report: the selected ``generation``'s id, one :class:`PinStatus` per pin (by name),
    and the pins an upgrade would ``add`` (name, version) that the generation does not hold."""

    generation: str
    pins: tuple[PinStatus, ...]
    added: tuple[tuple[NormalizedName, Version], ...] = ()
    #: the advisory ids of the pins an earlier ``hermes pm audit`` found (its cached answers; no request)
    advisories: tuple[tuple[NormalizedName, tuple[str, ...]], ...] = ()

    @property
    def shown(self) -> tuple[PinStatus, ...]:
        """The pins a person is shown by default: where something is newer or would move."""
        return tuple(p for p in self.pins if p.outdated or p.moves)

    def to_json(self) -> dict[str, Any]:
        return {"generation": self.generation, "packages": [p.to_json() for p in self.pins],
                "added": [{"name": n, "version": str(v)} for n, v in self.added],
                "outdated": sum(p.outdated for p in self.pins), "held_back": sum(p.held_back for p in self.pins),
                "advisories": {name: list(ids) for name, ids in self.advisories}}


@dataclass(frozen=True)
class Report:
    """What :func:`outdated` did: its finished, written ``receipt`` and the ``report`` (None when
    it could not tell: no generation, a conflict, a failure)."""

    receipt: Receipt
    report: Outdated | None = None

    @property
    def code(self) -> int:
        return self.receipt.exit_code


def outdated(home: Path, options: Options | None = None, reporter: Reporter = SILENT) -> Report:
    """The outdated report of ``home``'s environment (module docstring)."""
    txn = transaction(home, "outdated", _outdated, options, reporter, lock=False, gather_inputs=False)
    return Report(txn.receipt, txn.value)


def upgrade_policy(inputs: Inputs) -> Policy:
    """The policy of an upgrade: the settings' (pre-releases, exclude-newer, builds), preferring
    no pin of the selected generation (:data:`~pm.resolver.preferences.EVERYTHING`): what
    ``--upgrade`` would take. The one place outdated asks for an upgrade."""
    from dataclasses import replace

    from pm.resolver.preferences import EVERYTHING

    return replace(policy_of(inputs), upgrade=EVERYTHING)


def _outdated(txn: Transaction) -> Outdated | None:
    draft = txn.draft
    generation = generations.selected(txn.home, watch=txn.watch)
    if generation is None:
        draft.step(hermes("pm", "sync", home=txn.options.shown_home), "build a generation; then ask again")
        raise NoGeneration(txn.home)
    inputs = txn.gather()
    draft.generation = generation.to_receipt(selected=True, restart_required=False)
    if generation.fingerprint != inputs.fingerprint:
        draft.warnings.append(f"the inputs changed since generation {generation.id} was built: the upgrade "
                              "column resolves them as they are now (`hermes pm sync` builds that)")
    txn.reporter.progress("resolving the upgrade")
    from pm import resolver
    from pm.ops.audit import cached_badges

    with source_of(inputs) as source:
        try:
            upgrade, reused = _upgrade(inputs, source)
        except resolver.Conflict as conflict:
            _conflicted(txn, conflict)
            return None
        report = compare(generation, upgrade, source, inputs)
    report = replace(report, advisories=tuple(cached_badges(txn, generation.record).items()))
    draft.record(reused_resolution=reused, outdated=report.to_json())
    txn.finish("ok", EXIT_OK, _summary(report))
    return report


def _upgrade(inputs: Inputs, source: Source) -> tuple[Resolution, bool]:
    """The upgrade resolution of the current inputs, and whether a stored one was reused."""
    from pm.index.cache import Cache
    from pm.ops.resolve import builder_of
    from pm.records.reuse import resolve_reusing, reuse_key

    policy = upgrade_policy(inputs)
    cache = Cache(cache_dir())
    return resolve_reusing(inputs, source, policy, key=reuse_key(inputs, None, policy, cache.root), candidate=None,
                           builder=builder_of(inputs, policy), cache=cache)


def compare(generation: Generation, upgrade: Resolution, source: Source, inputs: Inputs) -> Outdated:
    """Each pin of ``generation`` against the ``upgrade`` resolution and the releases ``source``
    offers the target (the pages of the pinned projects asked for together, then the metadata of
    the newest releases that no requirement on the pin itself explains)."""
    from pm.ops.holders import Releases, direct, holders
    from pm.resolver.provider import Provider

    pinned = {canonicalize_name(p["name"]): Version(p["version"]) for p in generation.record["resolution"]["packages"]}
    source.prefetch(dict.fromkeys(pinned))
    provider = Provider(source, inputs.target, upgrade_policy(inputs))
    releases = Releases(provider)
    after = upgrade.by_name()
    try:
        newest = {name: releases.newest(name, since=_prerelease(version, after.get(name))) for name, version in pinned.items()}
        held = {name: (after[name], found) for name, found in newest.items()
                if found is not None and name in after and found[0] > after[name].version}
        source.prefetch_metadata(found[1] for pin, found in held.values() if not direct(pin, found[0]))
        rows = [PinStatus(name, version, after[name].version if name in after else None,
                          found[0] if (found := newest[name]) is not None else None,
                          holders(*held[name], after, releases) if name in held else ())
                for name, version in sorted(pinned.items())]
    finally:
        provider.close()
    added = tuple((p.name, p.version) for p in upgrade.pins if p.name not in pinned)
    return Outdated(generation.id, tuple(rows), added)


def _prerelease(version: Version, moved: Pin | None) -> Version | None:
    """The pinned version, or else the upgrade's, that is a pre-release (then they count)."""
    return next((v for v in (version, moved.version if moved else None) if v is not None and v.is_prerelease), None)


def _conflicted(txn: Transaction, conflict: Any) -> None:
    """The union has no resolution: no upgrade to compare with (exit 3); ``resolve`` gives the
    checked remedies."""
    from pm.records.sections import conflict_to_json

    txn.draft.conflict = conflict_to_json(conflict)
    txn.draft.step(hermes("pm", "resolve", home=txn.options.shown_home),
                   "the union has no resolution, so nothing can be upgraded; this names the checked remedies")
    txn.finish("conflict", EXIT_CONFLICT)


def _summary(report: Outdated) -> str:
    outdated = sum(p.outdated for p in report.pins)
    held = sum(p.held_back for p in report.pins)
    if not outdated:
        return f"every pin of generation {report.generation} is the newest release for the target"
    return (f"{outdated} of {len(report.pins)} pins of generation {report.generation} have a newer release"
            + (f"; {held} held back" if held else ""))
