"""``hermes plugins install`` / ``remove``: the only code that writes under ``<home>/plugins/``.

Every install is staged in ``<home>/plugins/.staging-<id>/``, validated (manifest and
declaration, with the same rules as discovery), then moved into place by rename. An existing,
different plugin is replaced only with ``force``, and its old copy is kept as a backup until the
new one is in place. Provenance (source, commit or sha256, time) goes to
``<home>/plugins/.install-metadata.json``.
"""

from __future__ import annotations

import hashlib
import json
import lzma
import os
import re
import shutil
import subprocess
import tarfile
import urllib.request
import uuid
import zipfile
import zlib
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .catalog import Catalog, CatalogRefusal, Entry
from .discover import PluginRoot, is_plugin_name
from .errors import PmError, quote
from .names import BadName, check_name
from .plugin import inspect
from .store import Store

METADATA_FILE = ".install-metadata.json"
_GIT_SOURCE = re.compile(r"^(?:git\+)?(?P<url>.+?)@(?P<commit>[0-9a-f]{40})$")


class InstallError(PmError):
    pass


@dataclass(frozen=True)
class Installed:
    name: str
    root: Path
    provenance: dict[str, Any]
    replaced: bool
    unchanged: bool = False


def install(home: Path, spec: str, catalog: Catalog, *, force: bool = False) -> Installed:
    """Install SOURCE (a catalog name, a local folder, or ``git+URL@<40-hex commit>``)."""
    _refuse_unpinned_git(spec)
    located = "/" in spec or "@" in spec or _exists(spec)
    entry = None if located else catalog.find(spec)
    if entry is None and not located:
        raise CatalogRefusal(f"{quote(spec)} is not in the catalog ({catalog.file}), not a folder, and not a "
                             "git URL with a 40-hex commit (git+URL@COMMIT)")
    plugins = home / "plugins"
    store = Store(plugins)
    store.mkdir(plugins)
    staging = store.mkdir(plugins / f".staging-{uuid.uuid4().hex[:12]}")
    try:
        fetched, provenance = _fetch(entry, spec, staging)
        name = entry.name if entry else _name_of(fetched, spec)
        _validate(name, fetched, staging, entry, catalog)
        return _move_into_place(store, plugins, name, fetched, provenance, force)
    finally:
        store.remove_tree(staging)


def _refuse_unpinned_git(spec: str) -> None:
    """A ``git+`` source without a full commit is refused before anything is written: a branch,
    a tag or a short hash can move, and an installed plugin must be reproducible."""
    if spec.startswith("git+") and not _GIT_SOURCE.match(spec):
        body = spec[len("git+"):]
        url, at, ref = body.rpartition("@")
        if not at or "/" in ref:  # no ref at all (an @ inside ssh://git@host/... is not one)
            url, ref = body, ""
        got = f" (got {ref!r})" if ref else ""
        raise InstallError(f"{spec}: a git source needs a pinned commit: git+{url}@<40-hex commit>{got}")


def remove(home: Path, name: str) -> Path:
    plugins = home / "plugins"
    store = Store(plugins)
    target = plugins / name
    if not is_plugin_name(name) or "/" in name or ".." in name or not target.is_dir():
        raise InstallError(f"no installed plugin named {name!r} in {plugins}")
    if target.is_symlink():
        target.unlink()  # the link only: what it points to is not pm's to delete
    else:
        trash = plugins / f".removing-{uuid.uuid4().hex[:12]}"
        os.rename(target, trash)
        store.remove_tree(trash)
    _record(store, plugins, name, None)
    return target


def _fetch(entry: Entry | None, spec: str, staging: Path) -> tuple[Path, dict[str, Any]]:
    now = datetime.now(timezone.utc).isoformat()
    if entry is not None and entry.git:
        src = _git(entry.git, entry.commit or "", staging / "src")
        return src / entry.subdir, {"source": "catalog", "name": entry.name, "git": entry.git,
                                    "commit": entry.commit, "subdir": entry.subdir, "installed_at": now}
    if entry is not None:
        src = _archive(entry.archive or "", entry.sha256 or "", staging / "src")
        return src / entry.subdir, {"source": "catalog", "name": entry.name, "archive": entry.archive,
                                    "sha256": entry.sha256, "subdir": entry.subdir, "installed_at": now}
    match = _GIT_SOURCE.match(spec)
    if match and not _is_dir(Path(spec)):
        src = _git(match["url"], match["commit"], staging / "src")
        return src, {"source": "git", "git": match["url"], "commit": match["commit"], "installed_at": now}
    folder = Path(spec).expanduser().resolve()
    if not _is_dir(folder):
        raise InstallError(f"{quote(spec)}: no such folder")
    plugins = staging.parent.resolve()
    if plugins == folder or plugins.is_relative_to(folder):
        raise InstallError(f"{spec}: holds {plugins} itself; refusing to install a folder that contains the "
                           "plugins folder (give the plugin's own folder)")
    target = staging / "src"
    shutil.copytree(folder, target, symlinks=True, ignore=shutil.ignore_patterns(".git", "__pycache__", ".staging-*", ".removing-*"))
    return target, {"source": "folder", "path": str(folder), "sha256": _tree_sha256(target), "installed_at": now}


def _git(url: str, commit: str, dest: Path) -> Path:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1"}

    def git(*args: str, cwd: Path | None = None) -> str:
        done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False,
                              stdin=subprocess.DEVNULL, timeout=600)
        if done.returncode != 0:
            raise InstallError(f"git {args[0]} {url}: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else 'failed'}")
        return done.stdout.strip()

    git("clone", "--quiet", "--no-checkout", url, str(dest))
    try:
        git("checkout", "--quiet", "--detach", commit, cwd=dest)
    except InstallError:
        raise InstallError(f"{url}: commit {commit} is not in the repository; refused (the catalog pin must match)") from None
    head = git("rev-parse", "HEAD", cwd=dest)
    if head != commit:
        raise InstallError(f"{url}: checked out {head}, expected {commit}; refused")
    shutil.rmtree(dest / ".git")
    return dest


def _archive(location: str, sha256: str, dest: Path) -> Path:
    data = Path(location).read_bytes() if Path(location).exists() else _download(location)
    digest = hashlib.sha256(data).hexdigest()
    if digest != sha256:
        raise InstallError(f"{location}: sha256 {digest} does not match the catalog's {sha256}; refused")
    archive = dest.parent / "archive"
    archive.write_bytes(data)
    dest.mkdir()
    if zipfile.is_zipfile(archive):
        _unzip(archive, dest)
    else:
        _untar(archive, dest, location)
    return dest


#: Most bytes and members a catalog archive may unpack to (a plugin is source files, not data).
MAX_UNPACKED_BYTES = 256 * 1024 * 1024
MAX_MEMBERS = 20_000


def _unzip(archive: Path, dest: Path) -> None:
    with zipfile.ZipFile(archive) as zf:
        infos = zf.infolist()
        for info in infos:
            _safe_member(dest, info.filename)
        _check_unpacked(archive, len(infos), sum(i.file_size for i in infos))
        zf.extractall(dest)  # symlinks in a zip come out as plain files holding the link text


def _untar(archive: Path, dest: Path, location: str) -> None:
    """Extract with the ``data`` filter (no absolute or ``..`` paths, no links out, no devices),
    counting sizes header by header so a bomb is refused before its bytes are inflated."""
    try:
        with tarfile.open(archive) as tf:
            members, total = [], 0
            for member in tf:
                _safe_member(dest, member.name)
                members.append(member)
                total += member.size
                _check_unpacked(archive, len(members), total)
            tf.extractall(dest, members=members, filter="data")
    except tarfile.FilterError as exc:
        raise InstallError(f"{location}: archive member {quote(exc.tarinfo.name)} would escape the plugin "
                           f"folder ({exc.__class__.__name__}); refused") from None
    except (tarfile.TarError, EOFError, zlib.error, lzma.LZMAError, OSError) as exc:
        raise InstallError(f"{location}: not a readable archive ({exc}); refused") from None


def _check_unpacked(archive: Path, members: int, size: int) -> None:
    if members > MAX_MEMBERS or size > MAX_UNPACKED_BYTES:
        raise InstallError(f"{archive.name}: unpacks to more than {MAX_MEMBERS} members or "
                           f"{MAX_UNPACKED_BYTES} bytes; refused (a plugin is source, not data)")


def _download(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=60) as response:  # noqa: S310 - catalog URLs are reviewed
            return bytes(response.read())
    except OSError as exc:
        raise InstallError(f"{url}: cannot download: {exc}") from exc


def _safe_member(dest: Path, member: str) -> None:
    if member.startswith("/") or ".." in Path(member).parts:
        raise InstallError(f"archive member {quote(member)} would escape {dest}; refused")


def _name_of(root: Path, spec: str) -> str:
    from .manifest import read_manifest

    manifest = read_manifest(root)
    name = manifest.name or Path(spec.split("@")[0].rstrip("/")).name.removesuffix(".git")
    try:
        check_name(name)
    except BadName as exc:  # config.yaml could never enable it
        raise InstallError(f"{quote(spec)}: cannot name the plugin: {exc}") from None
    if not is_plugin_name(name) or "/" in name:
        raise InstallError(f"{quote(spec)}: cannot name the plugin from {quote(name)}")
    return name


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except (OSError, ValueError):
        return False


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
        if _tree_sha256(dest) == _tree_sha256(root):
            _record(store, plugins, name, provenance)
            return Installed(name, dest, provenance, replaced=False, unchanged=True)
        if not force:
            raise InstallError(f"{dest} holds a different plugin {name!r}; use --force to replace it")
        backup = plugins / f".backup-{name}-{uuid.uuid4().hex[:8]}"
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


def _record(store: Store, plugins: Path, name: str, provenance: dict[str, Any] | None) -> None:
    path = plugins / METADATA_FILE
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        data = {}
    if provenance is None:
        data.pop(name, None)
    else:
        data[name] = provenance
    store.write_json(path, data)


def _tree_sha256(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if "__pycache__" in path.parts or ".git" in path.parts:
            continue
        digest.update(str(path.relative_to(root)).encode())
        if path.is_symlink():
            digest.update(b"L" + os.readlink(path).encode())
        elif path.is_file():
            digest.update(b"F" + path.read_bytes())
    return digest.hexdigest()
