"""The catalog: reviewed, pinned plugins that ``hermes plugins install NAME`` and ``hermes update``
may install. Two forms:

- one file: ``entries`` (``{name, kind, source: {git, commit} | {archive, sha256}, subdir,
  description, requires_hermes}``) and ``removed`` (names that are blocked);
- a directory, as the real Hermes keeps it: one YAML file per entry (``name``, ``repo`` — https,
  or file:// for a local mirror —, ``sha`` — the 40-hex commit, mandatory —, ``subdir``,
  ``description``, ``maintainer``, ``tier``, ``requires_hermes``, ``platforms``, ``capabilities``,
  ``kind``) and ``removed.yaml``, the kill list: the real shape ``removed: [{name, repo, reason,
  date}]``, or a list of names, or of ``{name, reason}``; an entry blocks the plugin it names and
  every entry whose repository its ``repo`` names (:func:`repo_key`: scheme, user, host case, a
  trailing ``/`` or ``.git`` do not matter).

Every problem is reported at once, each naming its file and key. ``requires_hermes`` and
``platforms`` are honoured at install (:func:`refusal_here`). Names are compared as
:func:`catalog_name` writes them (case and runs of ``-``, ``_``, ``.`` ignored): two entries whose
names compare equal are refused, naming both, as are two kill-list names that do; a kill-list
name blocks the entry it compares equal to (``removed: [Good]`` blocks ``good``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pm.base import yamlfile as _yaml
from pm.base.errors import InputError, PmError, Problem, quote
from pm.base.files import read_text
from pm.base.watch import UNWATCHED, Watch

SHIPPED = Path(__file__).resolve().parents[1] / "data" / "catalog.yaml"
_HEX40 = re.compile(r"^[0-9a-f]{40}$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_ENTRY_KEYS = {"name", "kind", "source", "subdir", "description", "requires_hermes"}


def catalog_name(name: str) -> str:
    """``name`` as catalog names are compared: lowercased, each run of ``-``, ``_`` and ``.`` one
    ``-`` (PEP 503's rule for project names)."""
    return _SEPARATORS.sub("-", name).lower()


_SEPARATORS = re.compile(r"[-_.]+")


class CatalogRefusal(PmError):
    """A catalog install that is not allowed (removed, unknown, pin mismatch)."""

    kind = "install"
    outcome = "refused"


@dataclass(frozen=True)
class Entry:
    name: str
    kind: str
    git: str | None
    commit: str | None
    archive: str | None
    sha256: str | None
    subdir: str
    description: str
    requires_hermes: str | None
    maintainer: str = ""
    tier: str = ""
    platforms: tuple[str, ...] = ()  # empty: every platform
    capabilities: tuple[str, ...] = ()
    file: str = ""  # the entry's own file, in the directory form

    @property
    def pin(self) -> str:
        return f"commit {self.commit}" if self.git else f"sha256 {self.sha256}"


@dataclass(frozen=True)
class Catalog:
    file: Path
    entries: tuple[Entry, ...]
    removed: tuple[str, ...]
    notes: tuple[str, ...] = ()  # what a live catalog fetch said (stale copy, unreachable)
    reasons: tuple[tuple[str, str], ...] = ()  # (name, why it was removed), when removed.yaml says
    #: (repository as :func:`repo_key` writes it, why) for each kill-list entry that names a repo.
    killed_repos: tuple[tuple[str, str], ...] = ()

    def killed_repo(self, url: str) -> tuple[str, str] | None:
        """(the repository as compared, the reason) when a kill-list ``repo`` names the one ``url`` is."""
        key = repo_key(url)
        return next(((key, why) for repo, why in self.killed_repos if repo == key), None)

    def is_removed(self, name: str) -> bool:
        """Whether the kill list names ``name`` (compared as :func:`catalog_name` writes them)."""
        wanted = catalog_name(name)
        return any(catalog_name(r) == wanted for r in self.removed)

    def why_removed(self, name: str) -> str:
        """`` (reason: …)`` when the kill list gives one for ``name``, else empty."""
        wanted = catalog_name(name)
        reason = next((why for n, why in self.reasons if catalog_name(n) == wanted), None)
        return f" (reason: {reason})" if reason else ""

    def find(self, name: str) -> Entry | None:
        """The entry ``name`` means (its exact name, else the one it compares equal to); refused
        when the kill list names it."""
        if self.is_removed(name):
            raise CatalogRefusal(f"{self.file}: plugin {name!r} was removed from the catalog{self.why_removed(name)} "
                                 "and cannot be installed")
        exact = next((e for e in self.entries if e.name == name), None)
        return exact or next((e for e in self.entries if catalog_name(e.name) == catalog_name(name)), None)


def load_catalog(path: Path | None = None, *, watch: Watch = UNWATCHED) -> Catalog:
    """Read and validate a catalog (every problem reported at once, each naming its key)."""
    path = path or SHIPPED
    if path.is_dir():
        return _load_directory(path, watch=watch)
    return catalog_from_text(path, read_text(path, watch=watch).text)


def catalog_from_text(path: Path, text: str) -> Catalog:
    """The one-file catalog in ``text`` (YAML or JSON), validated; ``path`` names it in errors."""
    try:
        data = _yaml.load(text) or {}
    except _yaml.Error as exc:
        raise InputError.one(path, None, f"is not valid YAML: {_yaml.describe(exc)}") from exc
    if not isinstance(data, dict):
        raise InputError.one(path, None, "must be a mapping with 'entries' and 'removed'")
    problems: list[Problem] = []
    entries = [_entry(path, i, raw, problems) for i, raw in enumerate(data.get("entries") or [])]
    removed = data.get("removed") or []
    if not isinstance(removed, list) or not all(isinstance(r, str) for r in removed):
        problems.append(Problem(path, "removed", f"must be a list of names, got {removed!r}"))
        removed = []
    kept = tuple(e for e in entries if e is not None)
    problems += _same_names(path, [(f"entries[{i}]", e.name) for i, e in enumerate(entries) if e is not None],
                            "entries")
    problems += _same_names(path, [(f"removed[{i}]", n) for i, n in enumerate(removed)], "kill-list names")
    if problems:
        raise InputError(problems)
    return Catalog(path, kept, tuple(removed))


def _same_names(path: Path, named: list[tuple[str, str]], what: str) -> list[Problem]:
    """A problem for each name that more than one of ``named`` (``(where, name)``) compares
    equal to, naming every one of them."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for where, name in named:
        groups.setdefault(catalog_name(name), []).append((where, name))
    return [Problem(path, group[0][0], f"{what} {' and '.join(f'{w} {n!r}' for w, n in group)} name the same "
                    f"plugin {key!r} (names are compared ignoring case and '-', '_', '.'); keep one")
            for key, group in groups.items() if len(group) > 1]


def _entry(path: Path, i: int, raw: Any, problems: list[Problem]) -> Entry | None:
    key = f"entries[{i}]"
    if not isinstance(raw, dict):
        problems.append(Problem(path, key, f"must be a mapping, got {raw!r}"))
        return None
    unknown = sorted(set(raw) - _ENTRY_KEYS)
    if unknown:
        problems.append(Problem(path, key, f"unknown key(s) {', '.join(map(repr, unknown))}"))
    name, source = raw.get("name"), raw.get("source")
    if not isinstance(name, str) or not name or "/" in name or name.startswith((".", "_")):
        problems.append(Problem(path, f"{key}.name", f"must be a plugin name, got {name!r}"))
        return None
    if not isinstance(source, dict):
        problems.append(Problem(path, f"{key}.source", "must be {git, commit} or {archive, sha256}"))
        return None
    git, commit = source.get("git"), source.get("commit")
    archive, sha256 = source.get("archive"), source.get("sha256")
    if git is not None and (not isinstance(git, str) or not git or git.startswith("-")):
        problems.append(Problem(path, f"{key}.source.git", f"must be a repository URL (not starting with '-'), "
                                f"got {quote(git)}"))
    elif git is not None and not (isinstance(commit, str) and _HEX40.match(commit)):
        problems.append(Problem(path, f"{key}.source.commit", f"must be a 40-hex commit, got {commit!r}"
                                + _quote_it(commit)))
    elif git is None and not (isinstance(archive, str) and isinstance(sha256, str) and _HEX64.match(sha256)):
        problems.append(Problem(path, f"{key}.source", "must be {git, commit} or {archive, sha256 (64 hex)}"))
    subdir = raw.get("subdir") or ""
    if not isinstance(subdir, str) or ".." in Path(subdir).parts or subdir.startswith("/"):
        problems.append(Problem(path, f"{key}.subdir", f"must be a relative folder inside the source, got {subdir!r}"))
        subdir = ""
    return Entry(name, str(raw.get("kind") or "plugin"), git, commit, archive, sha256, subdir,
                 str(raw.get("description") or ""), raw.get("requires_hermes"))


_DIR_KEYS = {"name", "repo", "sha", "subdir", "description", "maintainer", "tier", "requires_hermes", "platforms",
             "capabilities", "kind"}
_SYSTEMS = {"linux", "macos", "windows"}


def _load_directory(folder: Path, *, watch: Watch = UNWATCHED) -> Catalog:
    """The directory form: one YAML file per entry, ``removed.yaml`` the kill list."""
    problems: list[Problem] = []
    entries = []
    watch.folder(folder)  # an entry file added or removed
    for path in sorted(p for p in folder.iterdir() if p.suffix in (".yaml", ".yml") and p.stem != "removed"):
        data = _mapping(path, problems, watch=watch)
        if data is not None and (entry := _dir_entry(path, data, problems)) is not None:
            entries.append(entry)
    killed = _removed(folder / "removed.yaml", problems, watch=watch)
    removed, reasons = _kill_names(entries, killed)
    problems += _same_names(folder, [(Path(e.file).name, e.name) for e in entries], "entry files")
    problems += _same_names(folder / "removed.yaml", [(f"[{i}]", k.name) for i, k in enumerate(killed) if k.name],
                            "kill-list names")
    if problems:
        raise InputError(problems)
    return Catalog(folder, tuple(entries), removed, reasons=reasons,
                   killed_repos=tuple((repo_key(k.repo), k.reason) for k in killed if k.repo))


def _mapping(path: Path, problems: list[Problem], *, watch: Watch = UNWATCHED) -> dict[str, Any] | None:
    try:
        data = _yaml.load(read_text(path, watch=watch).text)
    except _yaml.Error as exc:
        problems.append(Problem(path, None, f"is not valid YAML: {_yaml.describe(exc)}"))
        return None
    if not isinstance(data, dict):
        problems.append(Problem(path, None, "must be a mapping (one catalog entry)"))
        return None
    return data


def _text(path: Path, data: dict[str, Any], key: str, problems: list[Problem], *, required: bool = False) -> str:
    value = data.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value):
        problems.append(Problem(path, key, f"must be a {'non-empty ' if required else ''}string, got {value!r}"
                                + _quote_it(value)))
        return ""
    return value


def _quote_it(value: Any) -> str:
    """The did-you-mean for a value YAML read as a number (an all-digit sha, a version): quote it."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return " (YAML read the unquoted value as a number, so its digits may have changed: quote it)"
    return ""


def _names(path: Path, data: dict[str, Any], key: str, problems: list[Problem]) -> tuple[str, ...]:
    value = data.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        problems.append(Problem(path, key, f"must be a list of names, got {value!r}"))
        return ()
    return tuple(value)


def _dir_entry(path: Path, data: dict[str, Any], problems: list[Problem]) -> Entry | None:
    before = len(problems)
    for key in sorted(set(data) - _DIR_KEYS):
        problems.append(Problem(path, key, f"unknown key (known: {', '.join(sorted(_DIR_KEYS))})"))
    name = _text(path, data, "name", problems, required=True)
    if name and ("/" in name or name.startswith((".", "_"))):
        problems.append(Problem(path, "name", f"must be a plugin name, got {name!r}"))
    repo = _text(path, data, "repo", problems, required=True)
    if repo and not repo.startswith(("https://", "file://")):
        problems.append(Problem(path, "repo", f"must be an https:// URL (file:// for a local mirror), got {repo!r}"))
    sha = _text(path, data, "sha", problems, required=True)
    if sha and not _HEX40.match(sha):
        problems.append(Problem(path, "sha", f"must be a 40-hex commit, got {sha!r}"))
    subdir = _text(path, data, "subdir", problems)
    if ".." in Path(subdir).parts or subdir.startswith("/"):
        problems.append(Problem(path, "subdir", f"must be a relative folder inside the repository, got {subdir!r}"))
    platforms = _names(path, data, "platforms", problems)
    for unknown in sorted(set(platforms) - _SYSTEMS):
        problems.append(Problem(path, "platforms", f"{unknown!r} is not one of {', '.join(sorted(_SYSTEMS))}"))
    requires_hermes = _text(path, data, "requires_hermes", problems) or None
    if requires_hermes is not None:
        from packaging.specifiers import InvalidSpecifier, SpecifierSet

        try:
            SpecifierSet(requires_hermes)
        except InvalidSpecifier:
            problems.append(Problem(path, "requires_hermes", f"{requires_hermes!r} is not a version specifier"))
    fields = (_text(path, data, "description", problems), _text(path, data, "maintainer", problems),
              _text(path, data, "tier", problems), _names(path, data, "capabilities", problems),
              _text(path, data, "kind", problems) or "plugin")
    if len(problems) > before:
        return None
    description, maintainer, tier, capabilities, kind = fields
    return Entry(name, kind, repo, sha, None, None, subdir, description, requires_hermes, maintainer, tier,
                 platforms, capabilities, str(path))


#: The keys of a kill-list entry in ``removed.yaml`` (the real shape: ``removed: [{name, repo, reason, date}]``).
_REMOVED_KEYS = ("name", "repo", "reason", "date")
_SCP_LIKE = re.compile(r"^[A-Za-z0-9._-]+@([^:/]+):(.+)$")


def repo_key(url: str) -> str:
    """A repository URL as the kill list compares it: scheme and user dropped, a trailing ``/`` and
    ``.git`` dropped, lower-cased (hosts are, and the forges' owner/repo paths compare so: a kill
    list errs on the side of blocking); ``git@host:owner/repo``, ``ssh://git@host/owner/repo`` and
    ``https://host/owner/repo`` are one repository. A ``file://`` one stays a path, case kept."""
    from urllib.parse import urlsplit

    text = url.strip()
    scp = _SCP_LIKE.match(text)
    if scp is not None and "://" not in text:
        host, path = scp.group(1), scp.group(2)
    else:
        parts = urlsplit(text)
        host = "" if parts.scheme.lower() == "file" else parts.hostname or ""
        host += f":{parts.port}" if parts.hostname and parts.port else ""
        path = parts.path
    path = path.strip("/")
    path = (path[:-4] if path.lower().endswith(".git") else path).rstrip("/")
    return f"{host}/{path}".lower() if host else f"file:///{path}"


@dataclass(frozen=True)
class Killed:
    """One kill-list entry: a plugin name, a repository URL, or both (either one blocks)."""

    name: str | None
    repo: str | None
    reason: str


def _removed(path: Path, problems: list[Problem], *, watch: Watch = UNWATCHED) -> tuple[Killed, ...]:
    """The kill list of ``removed.yaml``: the real shape (``removed: [{name, repo, reason, date}]``)
    or the short ones (a list of names, or of ``{name, reason}``)."""
    if not path.exists():
        watch.file(path)  # absent: one that appears is a change
        return ()
    try:
        data = _yaml.load(read_text(path, watch=watch).text) or []
    except _yaml.Error as exc:
        problems.append(Problem(path, None, f"is not valid YAML: {_yaml.describe(exc)}"))
        return ()
    prefix = ""
    if isinstance(data, dict) and set(data) <= {"removed"}:
        data, prefix = data.get("removed") or [], "removed"
        if not isinstance(data, list):
            problems.append(Problem(path, "removed", f"must be a list of {{name, repo, reason, date}}, got {data!r}"))
            return ()
    found = [_killed(path, f"{prefix}[{i}]", item, problems) for i, item in enumerate(data if isinstance(data, list) else [data])]
    return tuple(k for k in found if k is not None)


def _killed(path: Path, key: str, item: Any, problems: list[Problem]) -> Killed | None:
    if isinstance(item, str) and item:
        return Killed(item, None, "")
    shape = f"must be a name or {{{', '.join(_REMOVED_KEYS)}}}, got {item!r}"
    if not isinstance(item, dict):
        problems.append(Problem(path, key, shape))
        return None
    before = len(problems)
    problems += [Problem(path, f"{key}.{k}", f"unknown key (known: {', '.join(_REMOVED_KEYS)})")
                 for k in item if k not in _REMOVED_KEYS]
    name, repo, reason = item.get("name"), item.get("repo"), item.get("reason")
    for field, value in (("name", name), ("repo", repo), ("reason", reason)):
        if value is not None and not (isinstance(value, str) and value):
            problems.append(Problem(path, f"{key}.{field}", f"must be a non-empty string, got {value!r}"))
    if name is None and repo is None:
        problems.append(Problem(path, key, f"{shape} (it needs a name or a repo)"))
    if len(problems) > before:
        return None
    return Killed(name, repo, reason or "")


def kill_by_repo(catalog: Catalog) -> Catalog:
    """``catalog`` with every entry whose repository its kill list names among the removed (for a
    catalog whose entries came from elsewhere: a live copy's, :mod:`pm.inputs.catalog_live`)."""
    from dataclasses import replace

    hit = [(e.name, why) for e in catalog.entries if e.git and (why := dict(catalog.killed_repos).get(repo_key(e.git)))
           is not None and e.name not in catalog.removed]
    return replace(catalog, removed=(*catalog.removed, *(name for name, _ in hit)),
                   reasons=(*catalog.reasons, *((name, why) for name, why in hit if why)))


def _kill_names(entries: Sequence[Entry], killed: Sequence[Killed]) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """The names the kill list blocks (each name it gives, and every entry whose repository one of
    its repos names, compared by :func:`repo_key`) and the reasons it gives for them."""
    names = [k.name for k in killed if k.name]
    reasons = [(k.name, k.reason) for k in killed if k.name and k.reason]
    by_repo = {repo_key(k.repo): k for k in killed if k.repo}
    for entry in entries:
        kill = by_repo.get(repo_key(entry.git)) if entry.git else None
        if kill is not None and catalog_name(entry.name) not in {catalog_name(n) for n in names}:
            names.append(entry.name)
            reasons += [(entry.name, kill.reason)] if kill.reason else []
    return tuple(names), tuple(reasons)


def refusal_here(entry: Entry, host_version: str, system: str) -> str | None:
    """Why ``entry`` cannot be installed on this host (``requires_hermes``) and system
    (``platforms``: linux, macos, windows), or None."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    if entry.requires_hermes and not SpecifierSet(entry.requires_hermes).contains(Version(host_version),
                                                                                  prereleases=True):
        return f"it requires hermes {entry.requires_hermes}, and this host is {host_version}"
    if entry.platforms and system not in entry.platforms:
        return f"it supports {', '.join(entry.platforms)}, not {system}"
    return None
