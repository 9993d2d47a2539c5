"""Settings of one operation: a flag beats the environment, which beats config.yaml, which beats the default."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from pm.base.errors import UsageError, quote
from pm.base.urls import redact_url  # noqa: F401 - the one redaction, named here for the inputs' users
from pm.base.watch import UNWATCHED, Watch
from pm.inputs.config import HomeConfig
from pm.inputs.index_settings import Chosen, choose, split_find_links  # noqa: F401 - split_find_links: its old home
from pm.inputs.overrides import Imposed, choose_imposed

DEFAULT_INDEX_URL = "https://pypi.org/simple/"


@dataclass(frozen=True)
class Flags:
    """What the command line said (None = not given)."""

    home: str | None = None
    python: str | None = None
    python_version: str | None = None  # --python-version: resolve for another CPython (pm.inputs.foreign)
    platform: str | None = None  # --platform: resolve for another system (uv's --python-platform names)
    core: str | None = None
    core_lock: str | None = None
    index_url: str | None = None
    extra_index_urls: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()
    no_index: bool = False
    offline: bool = False
    refresh: bool = False
    prereleases: str | None = None
    exclude_newer: str | None = None
    allow_builds: tuple[str, ...] = ()
    constraints: tuple[str, ...] = ()  # --constraint FILE (repeatable): pm.inputs.overrides
    overrides: tuple[str, ...] = ()  # --override FILE (repeatable)


@dataclass(frozen=True)
class Settings:
    python: str | None
    core: Path | None
    core_lock: Path | None
    index_urls: tuple[str, ...]
    find_links: tuple[Path | str, ...]  # folders, and pages of links (http(s) URLs, as given)
    offline: bool
    prereleases: str | None = None
    exclude_newer: str | None = None
    allow_builds: tuple[str, ...] = field(default=())
    cutoff: datetime | None = None  # exclude_newer parsed once ("N days" counts from that moment)
    refresh: bool = False  # every page asked again once in this operation, and nothing reused without it
    sources: tuple[tuple[str, str], ...] = ()  # (setting, where it came from): pm.inputs.index_settings
    warnings: tuple[str, ...] = ()  # what the environment gives that pm does not honour, each naming its place
    python_version: str | None = None  # a foreign target (pm.inputs.foreign): flags only
    platform: str | None = None
    constraints: tuple[Imposed, ...] = ()  # the operator's (pm.inputs.overrides)
    overrides: tuple[Imposed, ...] = ()

    @property
    def find_link_folders(self) -> tuple[Path, ...]:
        """The find-links entries that are folders."""
        return tuple(f for f in self.find_links if isinstance(f, Path))

    @property
    def find_link_pages(self) -> tuple[str, ...]:
        """The find-links entries that are pages over HTTP(S), credentials and all."""
        return tuple(f for f in self.find_links if isinstance(f, str))

    def fingerprint_part(self) -> dict[str, Any]:
        """The settings that change a resolution (paths of files are covered by their digests)."""
        return {
            "index_urls": list(self.index_urls),
            "find_links": [str(p) for p in self.find_links],
            "prereleases": self.prereleases,
            "exclude_newer": self.exclude_newer if not (self.exclude_newer or "").endswith(("day", "days"))
            else str(self.cutoff.date()) if self.cutoff else None,
            "allow_builds": sorted(self.allow_builds),
        } | {kind: [str(item) for item in given] for kind, given in
             (("constraints", self.constraints), ("overrides", self.overrides)) if given}


def find_link(value: str, relative_to: Path, key: str) -> Path | str:
    """A find-links entry: a folder (a path relative to ``relative_to``, or a ``file://`` URL), or
    an ``http(s)://`` URL of a page of links, kept as given (credentials included: the index client
    takes them, receipts show them redacted). Any other scheme is a usage error naming ``key``."""
    from urllib.parse import unquote, urlsplit

    text = str(value)
    if text.startswith("file://"):
        return Path(unquote(urlsplit(text).path))
    if text.lower().startswith(("http://", "https://")):
        return text
    if "://" in text:
        raise UsageError(f"{key} {redact_url(text)}: a find-links entry is a folder, a file:// URL or an "
                         "http(s):// URL of a page of links")
    return (relative_to / Path(text).expanduser()).absolute()


def search_order(index_url: str, extra_index_urls: tuple[str, ...]) -> tuple[str, ...]:
    """The index URLs in the order they are searched, as uv does: the extra indexes first, the
    index URL last. A project is taken from the first index that has it and never from a later
    one (uv's first-index rule: a public index cannot shadow a private project's name)."""
    return tuple(dict.fromkeys([*extra_index_urls, index_url]))


def parse_cutoff(value: str | None, *, key: str = "pm.exclude_newer") -> datetime | None:
    """``exclude_newer`` as a UTC datetime: an ISO date or date-time, or "N days" (ago)."""
    if not value:
        return None
    text = value.strip()
    parts = text.split()
    if len(parts) == 2 and parts[0].isdigit() and parts[1] in ("day", "days"):
        try:
            return datetime.now(timezone.utc) - timedelta(days=int(parts[0]))
        except OverflowError:
            raise UsageError(f"{key}: {quote(value)} reaches back before the year 1") from None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"{key}: {quote(value)} is neither a date (2026-01-31), a date-time, nor 'N days'") from None
    if len(text) == 10:  # a bare date means the end of that day
        moment = moment + timedelta(days=1)
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def resolve_home(flag: str | None, env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if flag:
        return Path(flag).expanduser().absolute()
    if env.get("HERMES_HOME"):
        return Path(env["HERMES_HOME"]).expanduser().absolute()
    return Path.home() / ".hermes"


def environment_home(home: Path, *, watch: Watch = UNWATCHED) -> Path:
    """The home whose ``pm/`` state (generations, lock, receipts) serves ``home``: the primary
    home for a profile at ``<primary>/profiles/<name>`` (when ``<primary>/config.yaml`` exists),
    else ``home``. Profiles share their primary's environment."""
    home = Path(home).expanduser().absolute()
    if home.parent.name == "profiles":
        watch.file(home.parent.parent / "config.yaml")
    if home.parent.name == "profiles" and (home.parent.parent / "config.yaml").is_file():
        return home.parent.parent
    return home


def working_folder() -> Path:
    """The folder pm runs in, for paths given relative to it; a :class:`UsageError` when it has
    been deleted (a shell left in a removed folder), asked only when such a path is given."""
    try:
        return Path.cwd()
    except FileNotFoundError:
        raise UsageError("the current folder no longer exists: cd to an existing folder, or give "
                         "absolute paths") from None


def resolve_settings(flags: Flags, config: HomeConfig, env: Mapping[str, str] | None = None, *,
                     watch: Watch = UNWATCHED) -> Settings:
    env = os.environ if env is None else env
    pm = config.pm
    base = config.file.parent

    def path(value: str | None, relative_to: Callable[[], Path]) -> Path | None:
        if not value:
            return None
        given = Path(value).expanduser()
        return given if given.is_absolute() else (relative_to() / given).absolute()

    def in_home() -> Path:
        return base

    core = (path(flags.core, working_folder) or path(env.get("HERMES_PM_CORE"), working_folder)
            or path(pm.get("core"), in_home))
    core_lock = (path(flags.core_lock, working_folder) or path(env.get("HERMES_PM_CORE_LOCK"), working_folder)
                 or path(pm.get("core_lock"), in_home))
    chosen = choose(flags, pm, config.file, env, watch=watch)
    exclude_newer = flags.exclude_newer or pm.get("exclude_newer")
    cutoff = parse_cutoff(exclude_newer, key="--exclude-newer" if flags.exclude_newer else "pm.exclude_newer")
    return Settings(
        python=flags.python,
        python_version=flags.python_version,
        platform=flags.platform,
        core=core,
        core_lock=core_lock,
        index_urls=() if chosen.value("no_index") else search_order(
            chosen.value("index_url", DEFAULT_INDEX_URL), chosen.value("extra_index_urls", ())),
        find_links=_find_links(chosen),
        offline=bool(chosen.value("offline", False)),
        prereleases=_prereleases(flags.prereleases or pm.get("prereleases")),
        exclude_newer=exclude_newer,
        allow_builds=tuple(flags.allow_builds or pm.get("allow_builds") or ()),
        cutoff=cutoff,
        refresh=flags.refresh,
        sources=tuple(chosen.sources().items()),
        warnings=chosen.warnings,
        constraints=_imposed("constraints", flags.constraints, env, config, watch),
        overrides=_imposed("overrides", flags.overrides, env, config, watch),
    )


def _imposed(kind: str, files: tuple[str, ...], env: Mapping[str, str], config: HomeConfig,
             watch: Watch) -> tuple[Imposed, ...]:
    """The constraints or overrides (:mod:`pm.inputs.overrides`); a flag's files are relative to
    the working folder."""
    return choose_imposed(kind, files, env, config.pm, config.file, working_folder() if files else config.file.parent,
                          watch=watch)


def _find_links(chosen: Chosen) -> tuple[Path | str, ...]:
    """The find-links entries as given, each relative path taken from where it was written
    (config.yaml and uv.toml: their folder; a flag, a variable or pip.conf: the working folder)."""
    given = chosen.given.get("find_links")
    if given is None:
        return ()
    base = given.base
    return tuple(find_link(entry, base or working_folder(), given.source) for entry in given.value)  # type: ignore[union-attr]


def _prereleases(value: str | None) -> str | None:
    if value not in (None, "allow", "pep440"):
        raise UsageError(f"pm.prereleases: {quote(value)} is not a policy (use 'allow', or leave it out for PEP 440)")
    return None if value == "pep440" else value
