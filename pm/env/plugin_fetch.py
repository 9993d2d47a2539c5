"""Fetching a plugin's source for ``hermes plugins install`` and ``catalog check``: a catalog entry at its
pin (a git commit or an archive with its sha256), a git URL at a 40-hex commit, or a local folder,
each into a staging folder, with its provenance record. Nothing is trusted on the way: git runs
with a deadline and without the user's credentials helpers, archives are bounded in size, members
and time, and no member or link may lead out of the plugin's root.
"""

from __future__ import annotations

import contextlib
import hashlib
import lzma
import os
import re
import shutil
import signal
import subprocess
import time
import zlib
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pm.base.errors import PmError, quote
from pm.base.urls import redact_url
from pm.base.uv import die_with_parent
from pm.index.base import IndexFailure
from pm.index.network import split_credentials
from pm.index.responses import HashingSink
from pm.inputs.catalog import Entry

GIT_SOURCE = re.compile(r"^(?:git\+)?(?P<url>.+?)@(?P<commit>[0-9a-f]{40})$")


class InstallError(PmError):
    kind = "install"
    outcome = "refused"



def fetch_source(entry: Entry | None, spec: str, staging: Path) -> tuple[Path, dict[str, Any]]:
    """The plugin root of SOURCE fetched into ``staging`` (a catalog entry at its pin, a git URL at
    its commit, or a copied folder) and its provenance record; also what ``catalog check`` fetches."""
    now = datetime.now(timezone.utc).isoformat()
    if entry is not None and entry.git:
        src = _git(entry.git, entry.commit or "", staging / "src")
        return _inside(src, entry.subdir, redact_url(entry.git)), {
            "source": "catalog", "name": entry.name, "git": redact_url(entry.git), "commit": entry.commit,
            "subdir": entry.subdir, "pin": entry.pin, "tier": entry.tier, "capabilities": list(entry.capabilities),
            "installed_at": now}
    if entry is not None:
        src = _archive(entry.archive or "", entry.sha256 or "", staging / "src")
        return _inside(src, entry.subdir, redact_url(entry.archive or "")), {
            "source": "catalog", "name": entry.name, "archive": redact_url(entry.archive or ""),
            "sha256": entry.sha256, "subdir": entry.subdir, "pin": entry.pin, "tier": entry.tier, "installed_at": now}
    body, _, subdir = spec.partition("#subdirectory=")  # pm.env.git_source writes it
    match = GIT_SOURCE.match(body)
    if match and not is_dir(Path(spec)):
        src = _git(match["url"], match["commit"], staging / "src")
        _refuse_escaping_links(src, redact_url(match["url"]))
        return _inside(src, subdir, redact_url(match["url"])) if subdir else src, {
            "source": "git", "git": redact_url(match["url"]), "commit": match["commit"], "installed_at": now} | (
            {"subdir": subdir} if subdir else {})
    folder = Path(spec).expanduser().resolve()
    if not is_dir(folder):
        raise InstallError(f"{quote(spec)}: no such folder")
    plugins = staging.parent.resolve()
    if plugins == folder or plugins.is_relative_to(folder):
        raise InstallError(f"{spec}: holds {plugins} itself; refusing to install a folder that contains the "
                           "plugins folder (give the plugin's own folder)")
    target = staging / "src"
    shutil.copytree(folder, target, symlinks=True, ignore=shutil.ignore_patterns(".git", "__pycache__", ".staging-*", ".removing-*"))
    _refuse_escaping_links(target, str(folder))
    return target, {"source": "folder", "path": str(folder), "sha256": tree_sha256(target), "installed_at": now}


class SharedFetch:
    """Catalog entries fetched for ``catalog check``, each source once: entries that share a
    repository at one commit (or one archive at one sha256) share one checkout in ``scratch``, and
    each entry is its own subdir of it (a catalog of many plugins in one repository costs one clone,
    not one per entry). A source that cannot be fetched is each of its entries' failure."""

    def __init__(self, scratch: Path) -> None:
        self.scratch = scratch
        self.sources: dict[tuple[str, str], Path | InstallError] = {}

    def staging(self, entry: Entry) -> Path:
        """The folder the entry's source is (or will be) fetched into: its tree is ``<staging>/src``."""
        key = _source_key(entry)
        known = list(self.sources)
        return self.scratch / f"source-{known.index(key) if key in known else len(known)}"

    def root(self, entry: Entry) -> Path:
        """The entry's plugin root (its subdir of the shared checkout)."""
        key = _source_key(entry)
        if key not in self.sources:
            staging = self.staging(entry)
            staging.mkdir()
            try:
                self.sources[key] = (_git(entry.git, entry.commit or "", staging / "src") if entry.git
                                     else _archive(entry.archive or "", entry.sha256 or "", staging / "src"))
            except InstallError as exc:
                self.sources[key] = exc
        src = self.sources[key]
        if isinstance(src, InstallError):
            raise src
        return _inside(src, entry.subdir, redact_url(entry.git or entry.archive or ""))


def _source_key(entry: Entry) -> tuple[str, str]:
    return (entry.git, entry.commit or "") if entry.git else (entry.archive or "", entry.sha256 or "")


def _inside(src: Path, subdir: str, source: str) -> Path:
    """The plugin root ``subdir`` of a fetched tree, refused when it (or a folder on the way) is a
    link or leads outside the tree, or when a link inside it does."""
    root = src / subdir if subdir not in ("", ".") else src
    part = src
    for name in Path(subdir).parts:
        part = part / name
        if part.is_symlink():
            raise InstallError(f"{source}: subdir {subdir!r} passes through a symlink ({part.relative_to(src)}); "
                               "refused: the plugin must be a folder of the source itself")
    if not root.resolve().is_relative_to(src.resolve()):
        raise InstallError(f"{source}: subdir {subdir!r} leads outside the source; refused")
    if root.is_dir():
        _refuse_escaping_links(root, source)
    return root


def _refuse_escaping_links(root: Path, source: str) -> None:
    """The rule archives follow (tarfile's data filter), for git and folder sources too: a symlink
    may point only at something inside the plugin — not at an absolute path, not up and out with
    ``..`` (a link to ``../../config.yaml`` would hand a plugin the user's settings)."""
    top = root.resolve()
    for folder, subfolders, files in os.walk(root):
        for name in (*subfolders, *files):
            path = Path(folder) / name
            if not path.is_symlink():
                continue
            target = os.readlink(path)
            try:
                inside = not os.path.isabs(target) and (path.parent / target).resolve().is_relative_to(top)
            except (RuntimeError, OSError):  # a loop of links: nothing it could lead to is known
                inside = False
            if not inside:
                raise InstallError(f"{source}: {path.relative_to(root)} is a link to {target!r}, outside the "
                                   "plugin; refused")


#: Seconds one git command may run (a clone of a big repository over a slow link included).
GIT_DEADLINE = 600.0


def git_access(url: str) -> tuple[str, dict[str, str], str]:
    """How git is given ``url``: the URL without credentials, git's environment (no prompt, no
    system config; a password or token as an HTTP header, never on git's command line), and the
    URL as messages show it. A URL that starts with '-' (git would read it as an option) is refused."""
    clean, authorization = split_credentials(url)
    shown = redact_url(url)
    if clean.startswith("-"):
        raise InstallError(f"{quote(shown)}: a git URL cannot start with '-' (git would read it as an option); refused")
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1"}
    if authorization:
        env |= {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "http.extraHeader",
                "GIT_CONFIG_VALUE_0": f"Authorization: {authorization}"}
    return clean, env, shown


def _git(url: str, commit: str, dest: Path) -> Path:
    """Clone ``url`` and check out exactly ``commit`` into ``dest`` (its ``.git`` removed). A
    password or token in the URL reaches git as an HTTP header in its environment, never on its
    command line, in ``.git/config`` or in a message; git dies with pm and within GIT_DEADLINE."""
    clean, env, shown = git_access(url)
    _run_git(["clone", "--quiet", "--no-checkout", "--", clean, str(dest)], env, shown)  # `--`: no URL is an option
    try:
        _run_git(["checkout", "--quiet", "--detach", commit, "--"], env, shown, cwd=dest)
    except InstallError:
        raise InstallError(f"{shown}: commit {commit} is not in the repository; refused (the catalog pin must match)") from None
    head = _run_git(["rev-parse", "HEAD"], env, shown, cwd=dest)
    if head != commit:
        raise InstallError(f"{shown}: checked out {head}, expected {commit}; refused")
    shutil.rmtree(dest / ".git")
    return dest


def _run_git(args: list[str], env: dict[str, str], shown: str, cwd: Path | None = None) -> str:
    """One git command in a process group of its own (killed whole at the deadline), killed by the
    kernel if pm dies first (no orphaned checkout writing into a staging folder)."""
    process = subprocess.Popen(["git", *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True,
                               preexec_fn=die_with_parent())  # noqa: PLW1509 - prctl only, no locks taken
    try:
        out, err = process.communicate(timeout=GIT_DEADLINE)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise InstallError(f"git {args[0]} {shown}: still running after {GIT_DEADLINE:g}s; given up") from None
    except BaseException:  # interrupted (SIGINT, SIGTERM): git stops writing before its folder is removed
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        raise
    if process.returncode != 0:
        last = err.strip().splitlines()[-1] if err.strip() else "failed"
        raise InstallError(f"git {args[0]} {shown}: {last}")  # git never saw the credential: it cannot echo it
    return out.strip()


def _archive(location: str, sha256: str, dest: Path) -> Path:
    import zipfile  # (zipfile and tarfile load where an archive is unpacked: most commands unpack none)

    archive = dest.parent / "archive"
    digest = _copy_archive(location, archive)
    if digest != sha256:
        raise InstallError(f"{redact_url(location)}: sha256 {digest} does not match the catalog's {sha256}; refused")
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
    import zipfile

    with zipfile.ZipFile(archive) as zf:
        infos = zf.infolist()
        for info in infos:
            _safe_member(dest, info.filename)
        _check_unpacked(archive, len(infos), sum(i.file_size for i in infos))
        zf.extractall(dest)  # symlinks in a zip come out as plain files holding the link text


def _untar(archive: Path, dest: Path, location: str) -> None:
    """Extract with the ``data`` filter (no absolute or ``..`` paths, no links out, no devices),
    counting sizes header by header so a bomb is refused before its bytes are inflated."""
    import tarfile

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


#: Largest catalog archive pm downloads (a plugin is source: this is generous), and the seconds
#: one download may take from request to last byte, whatever the server's pace.
MAX_ARCHIVE_BYTES = 64 * 1024 * 1024
ARCHIVE_DEADLINE = 300.0


def _copy_archive(location: str, archive: Path) -> str:
    """Stream ``location`` (a path or a URL) into ``archive``, hashing as it goes, within
    :data:`MAX_ARCHIVE_BYTES` and :data:`ARCHIVE_DEADLINE`; return the sha256 (hex). Nothing is
    held in memory but one chunk."""
    from pm.index.http import HttpClient  # (loaded with a download: pm check imports this module and downloads none)

    url = location if "://" in location else Path(location).absolute().as_uri()
    with archive.open("wb") as file:
        sink = _BoundedSink(file, redact_url(location))
        client = HttpClient(timeout=min(60.0, ARCHIVE_DEADLINE), retries=0)
        try:
            client.get(url, sink=sink)
        except IndexFailure as exc:
            raise InstallError(f"cannot download {exc}") from None
        finally:
            client.close()
    return sink.hash.hexdigest()


class _BoundedSink(HashingSink):
    """A download to a file that stops at :data:`MAX_ARCHIVE_BYTES` or :data:`ARCHIVE_DEADLINE`."""

    def __init__(self, file: Any, shown: str) -> None:
        super().__init__(file)
        self.shown = shown
        self.ends = time.monotonic() + ARCHIVE_DEADLINE

    def write(self, data: bytes) -> int:
        if self.size + len(data) > MAX_ARCHIVE_BYTES:
            raise InstallError(f"{self.shown}: larger than {MAX_ARCHIVE_BYTES} bytes; refused (a plugin is source)")
        if time.monotonic() > self.ends:
            raise InstallError(f"{self.shown}: still downloading after {ARCHIVE_DEADLINE:g}s; given up")
        return super().write(data)


def _safe_member(dest: Path, member: str) -> None:
    if member.startswith("/") or ".." in Path(member).parts:
        raise InstallError(f"archive member {quote(member)} would escape {dest}; refused")


def is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except (OSError, ValueError):
        return False


def tree_sha256(root: Path) -> str:
    """A folder's files and links by relative path (``.git`` and ``__pycache__`` left out): a
    folder source's identity, and how an install tells an unchanged plugin."""
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
