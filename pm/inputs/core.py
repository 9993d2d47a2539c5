"""Core: the host's own requirements and its lock.

Core's locked versions bind: a plugin can add packages, never move a core package. By default
core is the installed ``hermes-pm`` distribution's requirements, locked at the versions installed
in the running interpreter (its whole installed closure). ``--core PYPROJECT`` and
``--core-lock FILE`` (a PEP 751 ``pylock.toml`` or ``name==version`` lines) override both.
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.markers import InvalidMarker, Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import InvalidVersion, Version

from pm.base.errors import InputError, Problem
from pm.base.files import read_text
from pm.base.tomlfile import load as load_toml
from pm.base.watch import UNWATCHED, Watch
from pm.inputs.declaration import HOST_DISTRIBUTION, project_table
from pm.inputs.target import running_environment

_REPO_PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


@dataclass(frozen=True)
class Core:
    """Core's requirements, its lock (name -> version), and where both came from."""

    requirements: tuple[Requirement, ...]
    lock: tuple[tuple[NormalizedName, Version], ...]
    source: str
    lock_source: str | None

    @property
    def locked(self) -> dict[NormalizedName, Version]:
        return dict(self.lock)

    def digest(self) -> str:
        blob = "\n".join([*map(str, self.requirements), "--", *(f"{n}=={v}" for n, v in self.lock)])
        return hashlib.sha256(blob.encode()).hexdigest()


def load_core(pyproject: Path | None = None, lock_file: Path | None = None,
              environment: dict[str, str] | None = None, *, watch: Watch = UNWATCHED) -> Core:
    """Core from explicit files, else from the installed host distribution."""
    if pyproject is not None:
        requirements = read_pyproject_requirements(pyproject, watch=watch)
        source = str(pyproject)
    else:
        requirements, source = _installed_host_requirements(watch=watch)
    if lock_file is not None:
        lock = read_lock(lock_file, environment, watch=watch)
        lock_source: str | None = str(lock_file)
    elif pyproject is None:
        lock = _installed_closure(requirements, watch=watch)
        lock_source = f"installed in {sys.executable}"
    else:
        lock, lock_source = {}, None
    return Core(tuple(requirements), tuple(sorted(lock.items())), source, lock_source)


def read_pyproject_requirements(path: Path, *, watch: Watch = UNWATCHED) -> list[Requirement]:
    """The host's ``[project].dependencies``, every one kept (core may require what plugins may not)."""
    project = project_table(read_text(path, watch=watch)) or {}
    raw = project.get("dependencies", [])
    if not isinstance(raw, list):
        raise InputError.one(path, "project.dependencies", f"must be a list, got {raw!r}")
    problems, requirements = [], []
    for i, text in enumerate(raw):
        try:
            requirements.append(Requirement(text))
        except (InvalidRequirement, TypeError) as exc:
            problems.append(Problem(path, f"project.dependencies[{i}]", f"{text!r} is not valid PEP 508: {exc}"))
    if problems:
        raise InputError(problems)
    return requirements


def read_lock(path: Path, environment: dict[str, str] | None = None, *, watch: Watch = UNWATCHED) -> dict[NormalizedName, Version]:
    """Pins from a PEP 751 lock (``packages[].name/version``, entries whose ``marker`` does not
    apply to ``environment`` skipped) or from ``name==version`` lines (``--hash`` options, backslash
    continuations and comments allowed, as ``hermes pm export --format requirements`` writes).
    Two pins of one name that both apply are an error, never a silent last-one-wins."""
    source = read_text(path, watch=watch)
    entries = _toml_entries(path, source.text, environment) if path.suffix == ".toml" else _line_entries(source.text)
    lock: dict[NormalizedName, Version] = {}
    where: dict[NormalizedName, str] = {}
    problems = []
    for key, name, version in entries:
        try:
            if not isinstance(name, str) or not isinstance(version, str):
                raise InvalidVersion
            pinned = canonicalize_name(name)
            if pinned in lock:
                problems.append(Problem(path, key, f"pins {pinned} again (also {where[pinned]}); one pin per package"))
                continue
            lock[pinned], where[pinned] = Version(version), key
        except InvalidVersion:
            problems.append(Problem(path, key, f"must be a pin 'name==version', got name={name!r} version={version!r}"))
    if problems:
        raise InputError(problems)
    return lock


def _toml_entries(path: Path, text: str, environment: dict[str, str] | None) -> list[tuple[str, Any, Any]]:
    data = load_toml(path, text)
    entries = []
    for i, package in enumerate(data.get("packages", [])):
        marker = package.get("marker")
        if marker and environment is not None:
            try:
                if not Marker(marker).evaluate({**environment, "extra": ""}):
                    continue
            except InvalidMarker as exc:
                raise InputError.one(path, f"packages[{i}].marker", f"{marker!r} is not a PEP 508 marker: {exc}") from exc
        entries.append((f"packages[{i}]", package.get("name"), package.get("version")))
    return entries


def _line_entries(text: str) -> list[tuple[str, Any, Any]]:
    entries: list[tuple[str, Any, Any]] = []
    for number, raw in enumerate(text.replace("\\\n", " ").splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        pin = line.split(" --", 1)[0].split(";", 1)[0].strip()
        name, _, version = pin.partition("==")
        entries.append((f"line {number}", name.strip() or None, version.strip() or None))
    return entries


def _installed_host_requirements(*, watch: Watch = UNWATCHED) -> tuple[list[Requirement], str]:
    import importlib.metadata as md  # only the default core needs it

    watch.import_path()
    try:
        host = md.distribution(HOST_DISTRIBUTION)
        watch.distribution(host, *_METADATA_FILES)
        raw = host.requires or []
        source = f"installed distribution {HOST_DISTRIBUTION} {host.version}"
    except md.PackageNotFoundError:
        return read_pyproject_requirements(_REPO_PYPROJECT, watch=watch), str(_REPO_PYPROJECT)
    requirements = [Requirement(text) for text in raw]
    env = running_environment(extra="")
    return [r for r in requirements if r.marker is None or "extra" not in str(r.marker) or r.marker.evaluate(env)], source


def _installed_closure(requirements: list[Requirement], *, watch: Watch = UNWATCHED) -> dict[NormalizedName, Version]:
    """Installed versions of every distribution the requirements pull in, transitively."""
    import importlib.metadata as md

    watch.import_path()
    lock: dict[NormalizedName, Version] = {}
    todo = [(r, "") for r in requirements]
    while todo:
        requirement, extra = todo.pop()
        env = running_environment(extra=extra)
        if requirement.marker is not None and not requirement.marker.evaluate(env):
            continue
        name = canonicalize_name(requirement.name)
        if name in lock:
            continue
        try:
            dist = md.distribution(name)
        except md.PackageNotFoundError:
            continue
        watch.distribution(dist, *_METADATA_FILES)
        lock[name] = Version(dist.version)
        for text in dist.requires or []:
            for wanted in requirement.extras or {""}:
                todo.append((Requirement(text), wanted))
    return lock


#: The files of a distribution its requirements and version are read from (.dist-info, .egg-info).
_METADATA_FILES = ("METADATA", "PKG-INFO", "requires.txt")
