"""The removal flows the plugin guide names: ``hermes uninstall`` and deleting a profile.

Both are transactions with receipts (kinds ``uninstall`` and ``profile-delete``), both plan first
(:func:`plan_uninstall`, :func:`plan_profile_delete`: what goes, what stays, what blocks) so the
CLI can show the plan, ask, or stop at ``--dry-run``; the plan is made again under the home lock
before anything is removed.

- ``uninstall`` removes what pm built for the environment (``<home>/pm/``: generations, the
  selection, leases; the receipts stay, this one included) and keeps the user's things:
  ``config.yaml``, ``.env``, ``plugins/**``, ``profiles/``, provider data. A generation a running
  process holds blocks it. Afterwards ``hermes pm sync`` builds the environment again.
- ``profile delete NAME`` records its intent (:mod:`.pending`), removes ``<primary>/profiles/NAME/``
  and then syncs the environment without that profile's selection; killed in between, running it
  again (or the next sync) finishes the removal and the rebuild. Its ``plugins/`` holds installed plugins: the deletion is
  refused unless ``remove_plugins`` says to remove them too (the explicit remove), so nothing under
  ``plugins/**`` ever goes without being asked for by name.

Nothing here touches the primary's ``plugins/**``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from pm.base.commands import hermes
from pm.base.errors import EXIT_OK, PmError
from pm.base.lock import LOCK_FILE
from pm.base.names import check_name
from pm.base.store import Store
from pm.env import generations, leases
from pm.inputs.settings import environment_home
from pm.ops import pending
from pm.ops.failures import RemovalRefused
from pm.ops.options import SILENT, Options, Reporter
from pm.ops.resolve import resolve_in
from pm.ops.sync import obtain, select_generation
from pm.ops.transaction import Result, Transaction, transaction

__all__ = ["NoSuchProfile", "RemovalPlan", "plan_profile_delete", "plan_uninstall", "profile_delete",
           "uninstall"]

_KEPT_IN_PM = frozenset({"receipts", LOCK_FILE})


class NoSuchProfile(PmError):
    kind = "no-such-profile"
    def __init__(self, primary: Path, name: str, known: list[str]) -> None:
        self.name = name
        super().__init__(f"no profile {name!r} under {primary / 'profiles'} (profiles: {', '.join(known) or 'none'})")


@dataclass(frozen=True)
class RemovalPlan:
    """What a removal would do: ``remove`` (paths), ``keep`` (paths left alone), ``plugins`` (the
    plugin folders involved) and ``blockers`` (why it cannot go ahead as asked)."""

    what: str
    target: Path
    remove: tuple[Path, ...]
    keep: tuple[Path, ...]
    plugins: tuple[str, ...] = ()
    blockers: tuple[str, ...] = ()
    steps: tuple[str, ...] = field(default=())
    resumed: bool = False  # finishing a deletion a killed run began (pm.ops.pending)

    def to_json(self) -> dict[str, object]:
        return {"what": self.what, "target": str(self.target), "remove": [str(p) for p in self.remove],
                "keep": [str(p) for p in self.keep], "plugins": list(self.plugins),
                "blockers": list(self.blockers), "steps": list(self.steps), "resumed": self.resumed}


def _entries(folder: Path) -> list[Path]:
    try:
        return sorted(folder.iterdir())
    except OSError:
        return []


def plugin_folders(home: Path) -> tuple[str, ...]:
    """The entries of ``home``'s ``plugins/`` (plugin roots, categories, sidecar folders, records)."""
    return tuple(p.name for p in _entries(home / "plugins"))


def plan_uninstall(home: Path) -> RemovalPlan:
    """The plan of ``hermes uninstall`` for the environment of ``home``."""
    env_home = environment_home(Path(home).expanduser().absolute())
    remove = tuple(p for p in _entries(env_home / "pm") if p.name not in _KEPT_IN_PM)
    keep = tuple(p for p in _entries(env_home) if p.name != "pm") + tuple(
        p for p in _entries(env_home / "pm") if p.name == "receipts")
    blockers = tuple(f"generation {gid} is in use by pid {pid} (a running hermes process); stop it, then retry"
                     for pid, gid in sorted(leases.live(env_home).items()))
    return RemovalPlan("uninstall", env_home, remove, keep, plugin_folders(env_home), blockers)


def plan_profile_delete(home: Path, name: str, *, remove_plugins: bool = False) -> RemovalPlan:
    """The plan of deleting profile ``name`` of ``home``'s environment (or of finishing its
    deletion, when a killed run began it)."""
    check_name(name, "profile name")
    env_home = environment_home(Path(home).expanduser().absolute())
    if (resumed := _interrupted(env_home, name)) is not None:
        return resumed
    profiles = env_home / "profiles"
    known = [p.name for p in _entries(profiles) if p.is_dir() and not p.name.startswith(".")]
    profile = profiles / name
    if name not in known or profile.is_symlink():
        raise NoSuchProfile(env_home, name, known)
    plugins = plugin_folders(profile)
    blockers: tuple[str, ...] = ()
    steps: tuple[str, ...] = ()
    if plugins and not remove_plugins:
        blockers = (f"profile {name!r} has plugins in {profile / 'plugins'}: {', '.join(plugins)} "
                    "(pm removes plugins only when asked by name)",)
        steps = (hermes("profile", "delete", name, "--remove-plugins", home=env_home),
                 *(hermes("plugins", "remove", p, home=profile) for p in plugins if not p.startswith(".")))
    kept = tuple(p for p in (env_home / "plugins",) if p.is_dir())
    return RemovalPlan("profile-delete", profile, (profile,), kept, plugins, blockers, steps)


def uninstall(home: Path, options: Options | None = None, reporter: Reporter = SILENT, *,
              dry_run: bool = False) -> Result:
    """``hermes uninstall``: remove pm's environment state of ``home`` (module docstring)."""
    def work(txn: Transaction) -> None:
        plan = _checked(plan_uninstall(txn.home), txn, dry_run)
        if not dry_run:
            for path in plan.remove:
                txn.store.remove_tree(path)
            txn.draft.step(hermes("pm", "sync", home=txn.options.shown_home),
                             "build the environment again from config.yaml and plugins/")
        txn.finish("ok", EXIT_OK, _done(plan, dry_run))

    txn = transaction(home, "uninstall", work, options, reporter, command="uninstall", gather_inputs=False, needs_config=False)
    return Result(txn.receipt)


def profile_delete(home: Path, name: str, options: Options | None = None, reporter: Reporter = SILENT, *,
                   dry_run: bool = False, remove_plugins: bool = False) -> Result:
    """Delete profile ``name`` (module docstring); then sync the environment when one is selected."""
    def work(txn: Transaction) -> None:
        plan = _checked(plan_profile_delete(txn.home, name, remove_plugins=remove_plugins), txn, dry_run)
        message = _done(plan, dry_run)
        if dry_run:
            txn.finish("ok", EXIT_OK, message)
            return
        _remove(txn, plan)
        if generations.selected(txn.home) is None:
            pending.clear(txn.home, txn.store, name)
            txn.finish("ok", EXIT_OK, message)
            return
        txn.draft.record(profile_deleted=str(plan.target))
        try:
            obtained = obtain(txn, txn.gather(), lambda: resolve_in(txn))
        except PmError:
            txn.draft.warnings.append(f"{message}, but the rebuild without it did not finish; the previous "
                                        "generation stays selected (run `hermes pm sync`)")
            raise
        if obtained is not None:
            select_generation(txn, obtained, f"{message}; the environment was rebuilt without it")

    txn = transaction(home, "profile-delete", work, options, reporter, candidate=name, command="profile-delete",
                      gather_inputs=False)
    return Result(txn.receipt, txn.inputs)


def _checked(plan: RemovalPlan, txn: Transaction, dry_run: bool) -> RemovalPlan:
    """Record ``plan`` in the receipt; refuse (nothing removed) when something blocks it."""
    txn.draft.record(plan=plan.to_json())
    txn.draft.record(dry_run=dry_run)
    for step in plan.steps:
        txn.draft.step(step, "then delete the profile again" if "plugins remove" in step else
                         "delete the profile and the plugins listed, by name")
    if plan.blockers:
        raise RemovalRefused("uninstall" if plan.what == "uninstall" else f"deleting profile {plan.target.name!r}",
                             list(plan.blockers))
    return plan


def _interrupted(env_home: Path, name: str) -> RemovalPlan | None:
    """The plan of finishing a deletion of ``name`` a killed run began (:mod:`.pending`): its
    record is there and the profile is out of ``profiles/`` already."""
    profile = env_home / "profiles" / name
    if name not in pending.pending(env_home) or profile.exists() or profile.is_symlink():
        return None
    return RemovalPlan("profile-delete", profile, tuple(pending.leftovers(env_home, name)),
                       tuple(p for p in (env_home / "plugins",) if p.is_dir()), resumed=True)


def _remove(txn: Transaction, plan: RemovalPlan) -> None:
    """Record the intent, then remove the profile (or what a killed run left of it)."""
    from pm.env.build import pause_point

    name = plan.target.name
    if plan.resumed:
        pending.sweep(txn.home, name)
    else:
        pending.record(txn.home, txn.store, name)
        pause_point("profile-delete-recorded", txn.home, txn.store)
        _remove_profile(txn.home, plan.target)
    pause_point("profile-delete-removed", txn.home, txn.store)


def _remove_profile(env_home: Path, profile: Path) -> None:
    """Rename the profile out of ``profiles/`` first (one step, so no half profile is ever read
    as live), then remove the renamed folder."""
    store = Store(env_home / "profiles")
    doomed = profile.parent / f".deleting-{profile.name}-{os.getpid()}"
    store.check(doomed)
    try:
        os.replace(profile, doomed)
    except OSError as exc:
        raise PmError(f"{profile}: cannot delete the profile: {exc.strerror or exc}") from exc
    from pm.env.build import pause_point

    pause_point("profile-delete-renamed", env_home, Store.for_home(env_home))
    store.remove_tree(doomed)


def _done(plan: RemovalPlan, dry_run: bool) -> str:
    if plan.resumed:
        verb = "would finish deleting" if dry_run else "finished deleting"
        return f"{verb} profile {plan.target.name!r} ({plan.target}), which an interrupted run had begun"
    verb = "would remove" if dry_run else "removed"
    if plan.what == "uninstall":
        if not plan.remove:
            return f"nothing to remove: pm has built nothing in {plan.target}"
        return f"{verb} pm's environment of {plan.target} ({len(plan.remove)} item(s) under {plan.target / 'pm'})"
    return f"{verb} profile {plan.target.name!r} ({plan.target})"

