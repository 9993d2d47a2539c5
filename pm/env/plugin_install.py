"""``hermes plugins install`` / ``remove``: the only code that writes under ``<home>/plugins/``.

Every install is staged in ``<home>/plugins/.staging-<id>/``, validated (manifest and
declaration, with the same rules as discovery), then moved into place by rename. An existing,
different plugin is replaced only with ``force``, and its old copy is kept as a backup until the
new one is in place. Provenance (source, commit or sha256, time) goes to
``<home>/plugins/.install-metadata.json``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pm import __version__
from pm.base.errors import PmError, quote
from pm.base.names import BadName, check_name
from pm.base.store import Store
from pm.base.urls import redact_url
from pm.base.watch import UNWATCHED, Watch
from pm.env.plugin_fetch import GIT_SOURCE, InstallError, fetch_source, tree_sha256
from pm.inputs.catalog import Catalog, CatalogRefusal, Entry, refusal_here
from pm.inputs.discover import PluginRoot, is_plugin_name
from pm.inputs.plugin import inspect

METADATA_FILE = ".install-metadata.json"


@dataclass(frozen=True)
class Installed:
    name: str
    root: Path
    provenance: dict[str, Any]
    replaced: bool
    unchanged: bool = False


#: Looks at a fetched tree (its name, its root) before it is placed, and raises to stop it (the scan).
Check = Callable[[str, Path], None]


def install(home: Path, spec: str, catalog: Catalog, *, force: bool = False, check: Check | None = None) -> Installed:
    """Install SOURCE (a catalog name, a local folder, or ``git+URL@<40-hex commit>``); ``check``
    sees the fetched tree before it is placed (:mod:`pm.env.plugin_scan`)."""
    _refuse_unpinned_git(spec)
    _refuse_killed_repo(spec, catalog)
    located = "/" in spec or "@" in spec or _exists(spec)
    entry = None if located else catalog.find(spec)
    if entry is None and not located:
        raise CatalogRefusal(f"{quote(redact_url(spec))} is not in the catalog ({catalog.file}), not a folder, and not a "
                             "git URL with a 40-hex commit (git+URL@COMMIT)")
    _refuse_here(entry, catalog)
    with staging_folder(home) as staging:
        fetched, provenance = fetch_source(entry, spec, staging)
        return place(home, spec, entry, catalog, Fetched(fetched, provenance, staging), force=force, check=check)


@dataclass(frozen=True)
class Fetched:
    """A plugin's source fetched into ``staging`` (a :func:`staging_folder`): its plugin root and
    provenance record, as :func:`pm.env.plugin_fetch.fetch_source` returns them."""

    root: Path
    provenance: dict[str, Any]
    staging: Path


@contextlib.contextmanager
def staging_folder(home: Path) -> Iterator[Path]:
    """A new ``<home>/plugins/.staging-<id>/`` (beside the plugins: placing one is a rename),
    removed afterwards; what a killed process leaves there :func:`sweep` removes."""
    plugins = home / "plugins"
    store = Store(plugins)
    store.mkdir(plugins)
    staging = store.mkdir(plugins / f".staging-{uuid.uuid4().hex[:12]}")
    try:
        yield staging
    finally:
        store.remove_tree(staging)


def place(home: Path, spec: str, entry: Entry | None, catalog: Catalog, fetched: Fetched, *,
          force: bool = False, check: Check | None = None) -> Installed:
    """Install a source already fetched into a :func:`staging_folder` of ``home`` (a re-pin
    fetches the new pin once, reads it, then places it): validated, then moved into place."""
    _refuse_here(entry, catalog)
    plugins = home / "plugins"
    provenance = dict(fetched.provenance)
    if entry is not None:
        provenance["catalog"] = str(catalog.file)
    name = entry.name if entry else _name_of(fetched.root, spec)
    _validate(name, fetched.root, fetched.staging, entry, catalog)
    if check is not None:
        check(name, fetched.root)
    return _move_into_place(Store(plugins), plugins, name, fetched.root, provenance, force)


def _refuse_here(entry: Entry | None, catalog: Catalog) -> None:
    if entry is not None and (why := refusal_here(entry, __version__, this_system())) is not None:
        raise CatalogRefusal(f"{catalog.file}: plugin {entry.name!r} cannot be installed here: {why}")


def this_system() -> str:
    """linux, macos or windows: the catalog's ``platforms`` words for the running system."""
    return {"darwin": "macos", "win32": "windows"}.get(sys.platform, "linux")


def _refuse_killed_repo(spec: str, catalog: Catalog) -> None:
    """A ``git+URL@COMMIT`` whose repository the catalog's kill list names is refused, as the
    catalog entries of that repository are (compared by :func:`pm.inputs.catalog.repo_key`)."""
    if not spec.startswith("git+"):
        return
    killed = catalog.killed_repo(spec[len("git+"):].rpartition("@")[0])
    if killed is not None:
        why = f" (reason: {killed[1]})" if killed[1] else ""
        raise CatalogRefusal(f"{catalog.file}: the repository of {redact_url(spec)} ({killed[0]}) was removed from "
                             f"the catalog{why} and cannot be installed")


def _refuse_unpinned_git(spec: str) -> None:
    """A ``git+`` source without a full commit is refused before anything is written: a branch,
    a tag or a short hash can move, and an installed plugin must be reproducible."""
    if spec.startswith("git+") and not GIT_SOURCE.match(spec.partition("#subdirectory=")[0]):
        body = spec[len("git+"):]
        url, at, ref = body.rpartition("@")
        if not at or "/" in ref:  # no ref at all (an @ inside ssh://git@host/... is not one)
            url, ref = body, ""
        got = f" (got {ref!r})" if ref else ""
        raise InstallError(f"{redact_url(spec)}: a git source needs a pinned commit: "
                           f"git+{redact_url(url)}@<40-hex commit>{got}")


def remove(home: Path, name: str) -> Path:
    """Remove the installed plugin ``name`` (a link: the link only). A remove that was interrupted
    after the folder went and before the install record was updated is finished here."""
    plugins = home / "plugins"
    store = Store(plugins)
    target = plugins / name
    valid = is_plugin_name(name) and "/" not in name and ".." not in name
    if valid and not target.exists() and not target.is_symlink() and name in _records(plugins):
        _record(store, plugins, name, None)
        return target
    if not valid or not target.is_dir():
        raise InstallError(f"no installed plugin named {name!r} in {plugins}")
    if target.is_symlink():
        target.unlink()  # the link only: what it points to is not pm's to delete
    else:
        trash = plugins / f".removing-{uuid.uuid4().hex[:12]}"
        os.rename(target, trash)
        store.remove_tree(trash)
    _record(store, plugins, name, None)
    return target


def _name_of(root: Path, spec: str) -> str:
    from pm.inputs.manifest import read_manifest

    manifest = read_manifest(root)
    name = manifest.name or Path(spec.split("@")[0].rstrip("/")).name.removesuffix(".git")
    try:
        check_name(name)
    except BadName as exc:  # config.yaml could never enable it
        raise InstallError(f"{quote(redact_url(spec))}: cannot name the plugin: {exc}") from None
    if not is_plugin_name(name) or "/" in name:
        raise InstallError(f"{quote(redact_url(spec))}: cannot name the plugin from {quote(name)}")
    return name


def _exists(spec: str) -> bool:
    """Whether ``spec`` names an existing path (a name too long or holding NUL names none)."""
    try:
        return Path(spec).exists()
    except (OSError, ValueError):
        return False


def _validate(name: str, root: Path, staging: Path, entry: Entry | None, catalog: Catalog) -> None:
    if not root.is_dir():
        if entry is not None:
            raise InstallError(f"{catalog.file}: entry {name!r}: subdir {entry.subdir!r} does not exist in "
                               f"{entry.git or entry.archive} at {entry.pin}; refused")
        raise InstallError(f"{root.relative_to(staging)}: the source has no such folder")
    plugin = inspect(PluginRoot(name, root, "user", staging))
    if plugin.problems:
        raise InstallError(f"plugin {name!r} is invalid; not installed: " + "; ".join(plugin.problems))
    if plugin.manifest is None or plugin.manifest.file is None:
        if plugin.declaration is None:
            raise InstallError(f"plugin {name!r} has neither a manifest nor a pyproject.toml; not installed")


def _move_into_place(store: Store, plugins: Path, name: str, root: Path,
                     provenance: dict[str, Any], force: bool) -> Installed:
    dest = plugins / name
    replaced = False
    if dest.exists():
        if tree_sha256(dest) == tree_sha256(root):
            _record(store, plugins, name, provenance)
            return Installed(name, dest, provenance, replaced=False, unchanged=True)
        if not force:
            raise InstallError(f"{dest} holds a different plugin {name!r}; use --force to replace it")
        backup = plugins / f"{_BACKUP}{name}-{uuid.uuid4().hex[:8]}"
        os.rename(dest, backup)
        try:
            os.rename(root, dest)
        except OSError:
            os.rename(backup, dest)
            raise
        store.remove_tree(backup)
        replaced = True
    else:
        os.rename(root, dest)
    _record(store, plugins, name, provenance)
    return Installed(name, dest, provenance, replaced)


def sweep(home: Path) -> list[str]:
    """Remove what an interrupted install, update or remove left in ``plugins/`` (``.staging-*``
    and ``.removing-*`` folders; never a plugin: their names start with a dot), and put back a
    plugin an interrupted ``--force`` replace had moved aside (``.backup-<name>-*``) when nothing
    took its place. Returns what was swept. The caller holds the home lock (no install runs)."""
    plugins = home / "plugins"
    store = Store(plugins)
    try:
        entries = [e for e in os.scandir(plugins) if e.name.startswith(".") and e.is_dir(follow_symlinks=False)]
    except OSError:
        return []
    swept = []
    for entry in entries:
        path = Path(entry.path)
        if entry.name.startswith(_BACKUP):
            name = entry.name[len(_BACKUP):].rpartition("-")[0]
            if is_plugin_name(name) and "/" not in name and not (plugins / name).exists():
                os.rename(path, plugins / name)
                swept.append(f"{entry.name} (put back as {name})")
                continue
        elif not entry.name.startswith(_LEFTOVERS):
            continue
        store.remove_tree(path)
        swept.append(entry.name)
    return swept


#: Folders an interrupted install or remove leaves behind, and a replaced plugin's backup.
_LEFTOVERS = (".staging-", ".removing-")
_BACKUP = ".backup-"


def removed_installed(home: Path, catalog: Catalog, keep: tuple[str, ...] = (), *, watch: Watch = UNWATCHED) -> list[str]:
    """Warnings for plugins ``home`` installed from a catalog that has since removed them (its kill
    list), unless ``keep`` (``pm.keep_removed``) records the user's explicit choice to keep them."""
    from pm.base.files import read_text  # noted in watch: a changed record is a shortcut miss

    path = home / "plugins" / METADATA_FILE
    try:
        watch.file(path)
        records = json.loads(read_text(path, watch=watch).text) if path.is_file() else {}
    except (PmError, ValueError):
        records = {}
    found = []
    for name, record in sorted((records if isinstance(records, dict) else {}).items()):
        if isinstance(record, dict) and record.get("source") == "catalog" and catalog.is_removed(name) \
                and name not in keep and (home / "plugins" / name).is_dir():
            pinned = record.get("pin") or record.get("commit") or record.get("sha256") or "?"
            found.append(f"plugin {name!r} was installed from the catalog ({pinned}) and has since been removed from "
                         f"it ({catalog.file}){catalog.why_removed(name)}: run `hermes plugins remove {name}`, or list "
                         "it in pm.keep_removed to keep it")
    return found


def installed_records(home: Path) -> dict[str, dict[str, Any]]:
    """What ``home``'s install records say of each plugin pm installed (name -> provenance)."""
    return {k: v for k, v in _records(home / "plugins").items() if isinstance(v, dict)}


def _records(plugins: Path) -> dict[str, Any]:
    try:
        data = json.loads((plugins / METADATA_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _record(store: Store, plugins: Path, name: str, provenance: dict[str, Any] | None) -> None:
    path = plugins / METADATA_FILE
    data = _records(plugins)
    if provenance is None:
        data.pop(name, None)
    else:
        data[name] = provenance
    store.write_json(path, data)
