"""Selection: which plugins are members of the union, and why each other root is not.

For every home (the primary one and each profile with a ``config.yaml``):
``plugins.enabled`` (ordered allow-list) minus ``plugins.disabled`` (deny-list, also by bare leaf
name), plus ``memory.provider`` when that plugin exists. A plugin enabled in several homes is one
member. An unreadable primary config is an error; an unreadable profile is skipped with a notice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from pm.base.errors import InputError
from pm.base.files import is_within
from pm.base.names import BUILTIN_PROVIDER
from pm.base.watch import UNWATCHED, Watch
from pm.inputs.config import HomeConfig, read_config
from pm.inputs.declaration import HOST_DISTRIBUTIONS
from pm.inputs.discover import PluginSources, discover
from pm.inputs.plugin import Plugin, apply_precedence, inspect


class Status(StrEnum):
    """Every status a plugin root can have, best first (between homes, the best one stands).
    A closed set: code asks the predicates below, never lists of names."""

    MEMBER = "member"
    SITS_OUT = "sits-out"
    EXTERNAL = "external"
    SIDECAR_ONLY = "sidecar-only"
    DISABLED = "disabled"
    NOT_ENABLED = "not-enabled"
    INVALID = "invalid"
    SHADOWED = "shadowed"

    @property
    def joins(self) -> bool:
        """Enabled and part of the environment's selection (a member, or a plugin that brings
        its own environment): enabling it again has nothing to do."""
        return self in (Status.MEMBER, Status.SIDECAR_ONLY, Status.EXTERNAL)

    @property
    def enabled(self) -> bool:
        """A selection enables it (even if it sits out of the union for now)."""
        return self.joins or self is Status.SITS_OUT

    @property
    def named(self) -> bool:
        """A selection names it: enabled, or listed in plugins.disabled."""
        return self.enabled or self is Status.DISABLED

    @property
    def can_join(self) -> bool:
        """Whether it could join the union if enabled: not invalid, not sitting out, not shadowed."""
        return self not in (Status.INVALID, Status.SITS_OUT, Status.SHADOWED)


#: Every status a plugin root can have, best first.
STATUSES = tuple(Status)


@dataclass(frozen=True)
class PluginStatus:
    """A plugin and its verdict for the union."""

    plugin: Plugin
    status: Status
    reason: str
    homes: tuple[str, ...] = ()  # the homes (paths) whose selection names it

    @property
    def is_member(self) -> bool:
        return self.status is Status.MEMBER

    @property
    def enabled_but_invalid(self) -> bool:
        """Named by a selection yet unusable: never silently left out (readiness says not ready)."""
        return self.status is Status.INVALID and bool(self.homes)


@dataclass(frozen=True)
class HomeSelection:
    home: Path
    name: str  # "" for the primary home, else the profile name
    config: HomeConfig
    members: tuple[str, ...]  # member keys in selection order
    missing_provider: str | None = None  # memory.provider when nothing here provides it


@dataclass(frozen=True)
class Selection:
    """The selection across the home and its profiles."""

    homes: tuple[HomeSelection, ...]
    plugins: tuple[PluginStatus, ...]
    notices: tuple[str, ...] = field(default=())

    @property
    def members(self) -> tuple[PluginStatus, ...]:
        return tuple(p for p in self.plugins if p.is_member)


def profile_homes(home: Path, *, watch: Watch = UNWATCHED) -> tuple[list[Path], list[str]]:
    """The profiles of ``home`` (``profiles/<name>/`` holding a config.yaml), in name order, and a
    notice for each one refused because it is a symlink leading out of the home: a profile that
    escapes would let another folder's plugins join this home's union."""
    kept, notices = [], []
    watch.folder(home / "profiles")
    for folder in _listed(home / "profiles"):
        watch.folder(folder)
    for config in sorted((home / "profiles").glob("*/config.yaml")):
        if config.parent.name.startswith("."):
            continue  # not a profile: one being deleted (.deleting-NAME-PID), or hidden
        if is_within(config.parent, home, watch=watch):
            kept.append(config.parent)
        else:
            notices.append(f"profile {config.parent.name!r} skipped: it is a symlink that leaves {home}")
    return kept, notices


def candidate_home(home: Path, name: str, *, watch: Watch = UNWATCHED) -> Path:
    """The home a proposed plugin belongs to: the profile whose own ``plugins/`` holds it (and the
    primary's does not), else the primary home (bundled and project plugins serve every home)."""
    def holds(folder: Path) -> bool:
        watch.folder(folder)
        for inner in _listed(folder):
            watch.folder(inner)
        if (folder / name).is_dir():
            return True
        return "/" not in name and any(p.is_dir() for p in folder.glob(f"*/{name}"))

    if holds(home / "plugins"):
        return home
    for profile in profile_homes(home, watch=watch)[0]:
        if holds(profile / "plugins"):
            return profile
    return home


def _propose(config: HomeConfig, candidate: str) -> HomeConfig:
    leaf = candidate.rsplit("/", 1)[-1]
    return replace(config, enabled=(*config.enabled, candidate),
                   disabled=tuple(d for d in config.disabled if d not in (candidate, leaf)))


#: The entry-point group of memory providers that are installed packages (not plugin roots).
ENTRY_POINT_GROUP = "hermes_agent.memory_providers"


def provides(plugins: list[Plugin], provider: str, *, watch: Watch = UNWATCHED) -> bool:
    """Whether memory provider ``provider`` is installed: a memory plugin root of that name, or an
    entry point of that name (the host loads those; pm neither discovers nor installs them), or
    the host's own ``builtin`` provider."""
    if provider == BUILTIN_PROVIDER:
        return True
    return any(p.is_memory and provider in (p.provider_name, p.key) for p in plugins) \
        or provider in _entry_point_providers(watch=watch)


def _entry_point_providers(*, watch: Watch = UNWATCHED) -> frozenset[str]:
    return entry_point_names(ENTRY_POINT_GROUP, watch=watch)


#: The entry-point group of general plugins that are installed packages (the host lists them).
PLUGIN_ENTRY_POINT_GROUP = "hermes_agent.plugins"


def entry_point_names(group: str, *, watch: Watch = UNWATCHED) -> frozenset[str]:
    """The names of the entry points of ``group``, read from the installed distributions'
    ``entry_points.txt``; nothing is loaded or imported."""
    from importlib.metadata import distributions, entry_points  # only when a name needs looking up

    watch.import_path()  # where they are installed, and what each says (pm.base.watch)
    for dist in distributions():
        watch.distribution(dist, "entry_points.txt")
    return frozenset(ep.name for ep in entry_points(group=group))


def is_safe_key(key: str) -> bool:
    """A plugin key from config never contains ``..``, a backslash, or starts absolute."""
    return ".." not in key.split("/") and not key.startswith(("/", "~")) and "\\" not in key


def select(
    home: Path,
    *,
    python_version: Version,
    host_version: Version,
    sources: Callable[[Path], PluginSources] | None = None,
    candidate: str | None = None,
    owner: Path | None = None,
    primary: HomeConfig | None = None, watch: Watch = UNWATCHED
) -> Selection:
    """Compute the selection of ``home`` and every profile. Raises ConfigError for the primary.

    ``candidate`` is a plugin proposed for the home that holds it (:func:`candidate_home`):
    selected as if it were listed in that home's ``plugins.enabled`` and not in its
    ``plugins.disabled`` (nothing is written); ``owner`` names that home instead (a profile
    asking for a bundled plugin, e.g. ``hermes memory setup`` on a profile).
    """
    primary = read_config(home, watch=watch) if primary is None else primary
    homes = [(home, "", primary)]
    profiles, notices = profile_homes(home, watch=watch)
    for profile in profiles:
        try:
            homes.append((profile, profile.name, read_config(profile, watch=watch)))
        except InputError as exc:
            notices.append(f"profile {profile.name!r} skipped: {exc}")
    if candidate is not None:
        owner = owner or candidate_home(home, candidate, watch=watch)
        homes = [(path, name, _propose(config, candidate) if path == owner else config)
                 for path, name, config in homes]
    verdicts: dict[Path, PluginStatus] = {}
    home_selections = []
    inspected: dict[Path, Plugin] = {}  # bundled and project roots serve every home: read them once
    for path, name, config in homes:
        found = PluginSources.for_home(path, watch=watch) if sources is None else sources(path)
        roots = discover(found, watch=watch)
        plugins = apply_precedence([inspected.get(r.path) or inspected.setdefault(r.path, inspect(r, watch=watch))
                                    for r in roots])
        judged = [_judge(p, config, python_version, host_version) for p in plugins]
        notices += _config_notices(config, plugins, name, watch=watch)
        members = tuple(s.plugin.key for s in _in_selection_order(judged, config) if s.is_member)
        provider = config.memory_provider
        missing = provider if provider and is_safe_key(provider) and not provides(plugins, provider, watch=watch) else None
        home_selections.append(HomeSelection(path, name, config, members, missing))
        for verdict in judged:
            _merge(verdicts, verdict, str(path))
    notices += [left_out_notice(v) for v in verdicts.values() if v.enabled_but_invalid]
    notices += [f"plugin {v.plugin.key!r} is enabled but sits out, so it is left out of the environment: {v.reason}"
                for v in verdicts.values() if v.status is Status.SITS_OUT and v.homes]
    return Selection(tuple(home_selections), tuple(verdicts.values()), tuple(notices))


def left_out_notice(verdict: PluginStatus) -> str:
    """The selection's notice for an enabled plugin that is invalid (what a dry run tells; an
    operation that would build refuses instead, :mod:`pm.ops.invalid`)."""
    return f"plugin {verdict.plugin.key!r} is enabled but invalid, so it is left out of the environment: {verdict.reason}"


def _merge(verdicts: dict[Path, PluginStatus], verdict: PluginStatus, home_label: str) -> None:
    named = verdict.status.named or verdict.enabled_but_invalid
    homes = (home_label,) if named else ()
    key = verdict.plugin.root.path
    seen = verdicts.get(key)
    if seen is None:
        verdicts[key] = PluginStatus(verdict.plugin, verdict.status, verdict.reason, homes)
        return
    best = min(seen, verdict, key=lambda v: STATUSES.index(v.status))
    verdicts[key] = PluginStatus(best.plugin, best.status, best.reason, seen.homes + homes)


def _in_selection_order(judged: list[PluginStatus], config: HomeConfig) -> list[PluginStatus]:
    order = {name: i for i, name in enumerate(config.enabled)}
    return sorted(judged, key=lambda s: order.get(s.plugin.key, order.get(s.plugin.root.leaf, len(order))))


def _judge(plugin: Plugin, config: HomeConfig, python_version: Version, host_version: Version) -> PluginStatus:
    key, leaf = plugin.key, plugin.root.leaf
    if plugin.shadowed_by is not None:
        return PluginStatus(plugin, Status.SHADOWED, f"shadowed by {plugin.shadowed_by} (same name, earlier source wins)"
                            if plugin.is_memory else f"shadowed by {plugin.shadowed_by} (same key, later source wins)")
    wanted = _enabled_by(plugin, config)
    if plugin.problems:
        return PluginStatus(plugin, Status.INVALID, "; ".join(plugin.problems), ("enabled",) if wanted else ())
    if wanted is None:
        return PluginStatus(plugin, Status.NOT_ENABLED, "not in plugins.enabled" + (" nor memory.provider" if plugin.is_memory else ""))
    if key in config.disabled or leaf in config.disabled:
        return PluginStatus(plugin, Status.DISABLED, f"listed in plugins.disabled of {config.file}")
    if plugin.manifest is not None and plugin.manifest.external:
        return PluginStatus(plugin, Status.EXTERNAL, "python_runtime: external (brings its own interpreter)")
    if plugin.declaration is None:
        return PluginStatus(plugin, Status.SIDECAR_ONLY, "no declaration at the plugin root (no [project] in "
                            "pyproject.toml, no pip_dependencies/python_dependencies in the manifest)")
    sits_out = _sits_out(plugin, python_version, host_version)
    if sits_out:
        return PluginStatus(plugin, Status.SITS_OUT, sits_out)
    return PluginStatus(plugin, Status.MEMBER, wanted)


def _enabled_by(plugin: Plugin, config: HomeConfig) -> str | None:
    if plugin.key in config.enabled:
        return "in plugins.enabled"
    if plugin.root.leaf in config.enabled and "/" in plugin.key:
        return "in plugins.enabled (by leaf name)"
    if plugin.is_memory and config.memory_provider in (plugin.provider_name, plugin.key):
        return "memory.provider"
    return None


def _sits_out(plugin: Plugin, python_version: Version, host_version: Version) -> str | None:
    manifest, declaration = plugin.manifest, plugin.declaration
    assert declaration is not None
    if manifest is not None and manifest.requires_hermes is not None:
        if not manifest.requires_hermes.contains(host_version, prereleases=True):
            return f"requires_hermes {str(manifest.requires_hermes)!r} excludes this host ({host_version})"
    for excluded in declaration.excluded:
        requirement = Requirement(excluded.requirement)
        if canonicalize_name(requirement.name) in HOST_DISTRIBUTIONS and requirement.specifier and \
                not requirement.specifier.contains(host_version, prereleases=True):
            return f"requires {excluded.requirement!r} but this host is {host_version}"
    if declaration.requires_python is not None and \
            not declaration.requires_python.contains(python_version, prereleases=True):
        return f"requires-python {str(declaration.requires_python)!r} excludes the target Python {python_version}"
    return None


def _config_notices(config: HomeConfig, plugins: list[Plugin], profile: str, *, watch: Watch = UNWATCHED) -> list[str]:
    where = f"{config.file}"
    keys = {p.key for p in plugins} | {p.root.leaf for p in plugins}
    notices = []
    for entry in (*config.enabled, *config.disabled):
        if not is_safe_key(entry):
            notices.append(f"{where}: plugin key {entry!r} refused: it contains '..' or is an absolute path")
        elif entry in config.enabled and entry not in keys and \
                entry not in entry_point_names(PLUGIN_ENTRY_POINT_GROUP, watch=watch):  # an installed package's
            notices.append(f"{where}: plugins.enabled names {entry!r}, but no plugin root has that name")
    provider = config.memory_provider
    if provider is not None:
        if not is_safe_key(provider):
            notices.append(f"{where}: memory.provider {provider!r} refused: it contains '..' or is an absolute path")
        elif not provides(plugins, provider, watch=watch):
            notices.append(missing_provider_notice(config.file, provider))
    return notices


def missing_provider_notice(config_file: Path, provider: str) -> str:
    """The selection's notice for a ``memory.provider`` nothing provides (what installs it, if
    anything does, is the operations' to say: :func:`pm.ops.providers.provider_remedy`)."""
    return f"{config_file}: memory.provider names {provider!r}, but no memory provider of that name is installed"


def _listed(folder: Path) -> list[Path]:
    """The folders in ``folder`` (none when it cannot be listed)."""
    try:
        return [p for p in folder.iterdir() if p.is_dir()]
    except OSError:
        return []
