"""Externally managed installs: when someone else owns the environment (NixOS, an image build, an
administrator), every command that would change it refuses at once and says how to change the
plugin set declaratively. ``scan``, ``resolve``, ``check``, ``why``, ``status``, ``export``,
``generations`` and ``diff`` work.

An environment is managed when (first match wins):

1. ``HERMES_PM_MANAGED=<name>`` is set (non-empty);
2. the marker file ``<home>/pm/generations/MANAGED`` exists: its first line names the manager, the
   lines after it (if any) say how to change the plugin set, shown verbatim;
3. the generations folder (or, before it exists, ``<home>/pm``) is not writable by this process
   and is on a read-only mount or belongs to another user — a read-only store. (A folder this user
   owns but made unwritable is a permission problem, reported by the store as such.)

The manager's own runs (its activation script) set ``HERMES_PM_MANAGER=<the same name>`` and
pass. The refusal's receipt is the operation's (:func:`pm.ops.transaction.transaction`). Cost on every mutating command: one environment lookup, one ``open`` and at most two ``access``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pm.base.errors import PmError
from pm.base.watch import UNWATCHED, Watch
from pm.env import generations

ENV = "HERMES_PM_MANAGED"
SELF_ENV = "HERMES_PM_MANAGER"
MARKER = "MANAGED"
#: Commands (``args.command`` of ``hermes pm …`` and of the host's groups) that change the environment.
MUTATING = frozenset({"sync", "gc", "rollback", "plugins-enable", "plugins-disable", "plugins-install",
                      "plugins-remove", "update", "memory-setup", "uninstall",
                      "profile-delete"})
READ_ONLY = ("scan", "resolve", "check", "why", "status", "export", "outdated", "generations", "diff")
_NIX_NAMES = frozenset({"nix", "nixos", "home-manager", "nix-darwin"})
_NIX_HOW = "change the plugin set in your Nix configuration (services.hermes.plugins) and rebuild"
_MAX_MARKER_BYTES = 4096


@dataclass(frozen=True)
class Manager:
    """Who manages the environment, how pm knows, and the declarative way to change the set."""

    name: str
    evidence: str
    how: str


class Managed(PmError):
    """A mutating command refused because the environment is managed by someone else."""

    kind = "managed"
    outcome = "refused"

    def __init__(self, manager: Manager, command: str) -> None:
        self.manager = manager
        self.command = command
        super().__init__(
            f"`{shown(command)}` would change this environment, which is managed by "
            f"{manager.name} ({manager.evidence}); {manager.how}. "
            f"Read-only commands still work: {', '.join(READ_ONLY)}")


def shown(command: str) -> str:
    """The command as a person typed it: ``hermes pm sync``, ``hermes plugins enable``,
    ``hermes memory setup``, ``hermes update``."""
    group, _, sub = command.partition("-")
    if group in ("plugins", "memory") and sub:
        return f"hermes {group} {sub}"
    return "hermes update" if command == "update" else f"hermes pm {command}"


def manager_of(home: Path, env: Mapping[str, str] | None = None, *, watch: Watch = UNWATCHED) -> Manager | None:
    """The manager of ``home``'s environment, or None when pm may change it."""
    env = os.environ if env is None else env
    name = env.get(ENV, "").strip()
    if name:
        return Manager(_clean(name), f"set by the environment variable {ENV}", _how(_clean(name)))
    folder = generations.root(home)
    marker = _read_marker(folder / MARKER, watch=watch)
    if marker is not None:
        name, how = marker
        return Manager(name, f"marker file {folder / MARKER}", how or _how(name))
    return _unwritable(folder)


def check(home: Path, command: str, env: Mapping[str, str] | None = None, *, watch: Watch = UNWATCHED) -> None:
    """Raise :class:`Managed` when ``command`` would change a managed environment, unless the
    process is the manager itself (``HERMES_PM_MANAGER`` equals the manager's name: e.g. the
    NixOS activation that runs ``hermes pm sync --from``)."""
    if command not in MUTATING:
        return
    env = os.environ if env is None else env
    manager = manager_of(home, env, watch=watch)
    if manager is None:
        return
    itself = env.get(SELF_ENV, "").strip()
    if not itself or _clean(itself) != manager.name:
        raise Managed(manager, command)


def _how(name: str) -> str:
    if name.lower() in _NIX_NAMES:
        return _NIX_HOW
    return f"change the plugin set where {name} declares it and let {name} rebuild the environment"


def _clean(text: str) -> str:
    """One printable line of at most 80 characters."""
    printable = "".join(c if c.isprintable() else "?" for c in text.strip())
    return printable[:80] or "an external manager"


def _read_marker(path: Path, *, watch: Watch = UNWATCHED) -> tuple[str, str] | None:
    watch.file(path)  # (pm.cli.shortcut) a marker that appears or changes is a change
    try:
        with path.open("rb") as handle:
            data = handle.read(_MAX_MARKER_BYTES)
    except FileNotFoundError:
        return None
    except OSError:  # there, but unreadable: still a marker
        return "an external manager", ""
    lines = [line.strip() for line in data.decode("utf-8", "replace").splitlines() if line.strip()]
    if not lines:
        return "an external manager", ""
    how = " ".join("".join(c for c in line if c.isprintable()) for line in lines[1:])
    return _clean(lines[0]), how.rstrip(".")


def _unwritable(folder: Path) -> Manager | None:
    """The generations folder (or, before it exists, ``<home>/pm``) on a read-only mount, or not
    writable here and owned by another user. A folder this user owns but cannot write is a local
    permission problem, left to the store's own error."""
    for candidate in (folder, folder.parent):
        if not candidate.is_dir():
            continue
        if os.access(candidate, os.W_OK | os.X_OK):
            return None
        if _read_only_mount(candidate):
            return Manager("a read-only file system", f"{candidate} is on a read-only mount",
                           "change the plugin set where that file system is built, and rebuild it")
        owner = _owner(candidate)
        if owner is None:
            return None
        return Manager(f"user {owner!r}", f"{candidate} belongs to {owner!r} and is not writable here",
                       f"ask {owner!r} to change the plugin set, or use a home you own (--home DIR)")
    return None


def _read_only_mount(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


def _owner(path: Path) -> str | None:
    """The name of the user owning ``path`` when that is not this process's user, else None."""
    try:
        uid = path.stat().st_uid
    except OSError:
        return None
    if uid == os.geteuid():
        return None
    try:
        import pwd

        return pwd.getpwuid(uid).pw_name
    except (ImportError, KeyError):
        return str(uid)
