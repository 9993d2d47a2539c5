"""Re-pins with consent (``hermes update``, issue 23): a catalog plugin moves to the pin its
catalog entry names now only through admission, and only with consent when the new pin widens
what the plugin brings.

For each plugin a home installed from the catalog whose entry now names another pin:

1. the new pin is fetched into a scratch folder and its declaration read (nothing imported);
2. what widens is computed over every target the entry supports (:mod:`.widening`: a requirement
   that is new or applies on more targets, extras, a specifier that admits a version the installed
   one did not, ``python_runtime: external`` dropped, a new entry point group), and capabilities
   the entry gained;
3. a widening re-pin needs consent: ``accept`` (``--accept-repin NAME``) or ``ask`` (a person at a
   terminal); without it the plugin stays at its pin and the receipt names what widened and the
   command that consents;
4. admission: core and every member resolve with the new declaration in place of the old one;
   a conflict keeps the old pin and says why;
5. then the new files replace the old (the install path, atomically) and the record keeps the new
   pin. A narrowing or unchanged declaration needs no consent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.requirements import Requirement

from pm.base.commands import hermes
from pm.base.errors import PmError
from pm.inputs.catalog import Catalog, Entry
from pm.inputs.union import Origin, Tagged
from pm.ops.install import scanning
from pm.ops.transaction import Transaction
from pm.ops.widening import Brings, widening
from pm.records.receipt import Draft

if TYPE_CHECKING:
    from pm.env.plugin_install import Fetched
    from pm.inputs.declaration import Declaration
    from pm.inputs.manifest import Manifest

    Read = tuple[Declaration | None, Manifest]  # a pin's declaration and the manifest it was read with

Ask = Callable[[str, list[str]], bool]


@dataclass(frozen=True)
class Repin:
    name: str
    home: Path
    old: str
    new: str
    widened: tuple[str, ...]
    outcome: str  # "moved", "needs-consent", "refused"
    why: str = ""


def widened(old: list[Requirement], new: list[Requirement], platforms: tuple[str, ...] = ()) -> list[str]:
    """What ``new`` brings that ``old`` did not, in words (empty: the same or narrower), on any
    target of ``platforms`` (:func:`pm.ops.widening.widening`)."""
    return widening(Brings(tuple(old)), Brings(tuple(new)), platforms)


def repin_all(txn: Transaction, catalog: Catalog, accept: frozenset[str], ask: Ask | None,
              only: str | None = None) -> list[Repin]:
    """Every catalog plugin of every home of ``txn`` whose entry names a new pin (``only``: that
    one plugin, ``hermes plugins update NAME``), handled as the module says. Returns what happened
    to each; the receipt gets the warnings and steps."""
    from pm.env.plugin_install import installed_records
    from pm.inputs.selection import profile_homes

    home = txn.home
    done = []
    for each in [home, *profile_homes(home)[0]]:
        for name, record in installed_records(each).items():
            entry = next((e for e in catalog.entries if e.name == name), None)
            if entry is None or catalog.is_removed(name) or record.get("source") != "catalog" or \
                    (only is not None and name != only):
                continue
            if _pin_of(record) != entry.pin:
                done.append(_repin(txn, each, entry, record, catalog, accept, ask))
    return done


def _pin_of(record: dict[str, object]) -> str:
    """The pin an install record names (older records kept only the commit or the sha256)."""
    if record.get("pin"):
        return str(record["pin"])
    return f"commit {record['commit']}" if record.get("commit") else f"sha256 {record.get('sha256')}"


def _repin(txn: Transaction, home: Path, entry: Entry, record: dict[str, object], catalog: Catalog,
           accept: frozenset[str], ask: Ask | None) -> Repin:
    from pm.env.plugin_fetch import fetch_source
    from pm.env.plugin_install import Fetched, staging_folder
    from pm.inputs.declaration import read_declaration
    from pm.inputs.manifest import read_manifest

    root = home / "plugins" / entry.name
    manifest = read_manifest(root)
    old = (read_declaration(root, manifest), manifest)
    with staging_folder(home) as staging:  # the new pin, fetched once: read here, placed from here when it moves
        try:
            fetched = Fetched(*fetch_source(entry, entry.name, staging), staging)
            manifest = read_manifest(fetched.root)
            new = (read_declaration(fetched.root, manifest), manifest)
        except PmError as exc:
            return Repin(entry.name, home, _pin_of(record), entry.pin, (), "refused",
                         f"the new pin could not be fetched: {exc}")
        return _decide(txn, home, entry, record, catalog, accept, ask, (old, new), fetched)


def _decide(txn: Transaction, home: Path, entry: Entry, record: dict[str, object], catalog: Catalog,
            accept: frozenset[str], ask: Ask | None, declarations: tuple[Read, Read], fetched: Fetched) -> Repin:
    """Steps 2 to 5 of the module's list, for the new pin as ``fetched`` (declared as ``new``)."""
    from pm.env.plugin_install import place

    name = entry.name
    old_pin = _pin_of(record)
    (old, old_manifest), (new, new_manifest) = declarations
    grew = widening(Brings.of(old, old_manifest), Brings.of(new, new_manifest), entry.platforms)
    had = record.get("capabilities")
    gained = sorted(set(entry.capabilities) - set(had if isinstance(had, list) else []))
    grew += [f"new capabilities {gained}"] if gained else []
    if grew and name not in accept and not (ask is not None and ask(name, grew)):
        return Repin(name, home, old_pin, entry.pin, tuple(grew), "needs-consent")
    conflict = _admission(txn, name, new.requirements if new and not new_manifest.external else ())
    if conflict:
        return Repin(name, home, old_pin, entry.pin, tuple(grew), "refused", conflict)
    place(home, name, entry, catalog, fetched, force=True, check=scanning(txn, home, ("update",)))
    return Repin(name, home, old_pin, entry.pin, tuple(grew), "moved")


def _admission(txn: Transaction, name: str, requirements: tuple[Requirement, ...]) -> str:
    """Empty when core and every member resolve with ``name``'s new requirements, else why not."""
    from pm.ops.transaction import policy_of, source_of
    from pm.resolver import Conflict
    from pm.resolver.resolve import resolve_union

    inputs = txn.gathered
    kept = [t for t in inputs.union.requirements if t.origin.plugin != name]
    origin = next((t.origin for t in inputs.union.requirements if t.origin.plugin == name), Origin(name, None))
    union = replace(inputs.union, requirements=(*kept, *(Tagged(r, origin) for r in requirements)))
    try:
        with source_of(inputs) as source:
            resolve_union(union, inputs.target, source, policy_of(inputs))
    except Conflict as conflict:
        return str(conflict)
    except PmError as exc:
        return f"it could not be resolved: {exc}"
    return ""


def tell(draft: Draft, repins: list[Repin], home_shown: Path | None) -> None:
    """Warnings and next steps for what happened to each re-pin (``repinned``: those that moved)."""
    moved = [{"name": r.name, "from": r.old, "to": r.new, "widened": list(r.widened)}
             for r in repins if r.outcome == "moved"]
    if moved:
        draft.record(repinned=moved)
    for repin in repins:
        if repin.outcome == "moved":
            continue
        if repin.outcome == "needs-consent":
            draft.warnings.append(
                f"plugin {repin.name!r} stays at {repin.old}: its catalog entry moved to {repin.new}, which brings "
                + "; ".join(repin.widened))
            draft.step(hermes("update", "--accept-repin", repin.name, home=home_shown),
                         f"consent to what the new pin of {repin.name!r} brings, and move it")
        else:
            draft.warnings.append(
                f"plugin {repin.name!r} stays at {repin.old}: the catalog's new pin {repin.new} was refused: {repin.why}")
