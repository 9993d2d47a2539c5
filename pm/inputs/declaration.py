"""Declarations: what a plugin root says it needs.

A root ``pyproject.toml`` **with a ``[project]`` table** owns the declaration (``dependencies``,
``requires-python``). Otherwise the manifest's ``pip_dependencies`` + ``python_dependencies``
(same meaning, concatenated, de-duplicated in order) are the declaration. A tooling-only pyproject
declares nothing; a ``pyproject.toml`` below the root is never read. A root with neither is
sidecar-only (:func:`read_declaration` returns None).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name

from pm.base.errors import InputError, Problem, quote
from pm.base.files import TextFile, read_text
from pm.base.tomlfile import load as load_toml
from pm.base.watch import UNWATCHED, Watch
from pm.inputs.manifest import Manifest

#: The host's installed distribution (its requirements are core's by default).
HOST_DISTRIBUTION = "hermes-pm"
#: Distributions that are the host itself: a plugin requiring them gets the running host.
HOST_DISTRIBUTIONS = frozenset({HOST_DISTRIBUTION, "hermes-agent"})


@dataclass(frozen=True)
class Excluded:
    """A declared requirement kept out of the union, and why."""

    requirement: str
    reason: str


@dataclass(frozen=True)
class Declaration:
    """The parsed declaration of one plugin root."""

    file: Path
    style: str  # "pyproject" or "manifest"
    sha256: str
    requirements: tuple[Requirement, ...]
    excluded: tuple[Excluded, ...] = ()
    requires_python: SpecifierSet | None = None
    warnings: tuple[str, ...] = ()
    entry_points: tuple[str, ...] = ()  # entry point groups (project.entry-points, scripts, gui-scripts)


def read_declaration(root: Path, manifest: Manifest, *, watch: Watch = UNWATCHED) -> Declaration | None:
    """The declaration at ``root`` per docs/design.md, or None for a sidecar-only root.

    Raises :class:`InputError` listing every problem of the owning file.
    """
    pyproject = root / "pyproject.toml"
    watch.folder(root)
    if pyproject.is_file():
        source = read_text(pyproject, within=root, watch=watch)
        project = project_table(source)
        if project is not None:
            warnings: tuple[str, ...] = ()
            if manifest.has_dependency_keys:
                warnings = (
                    f"{manifest.file}: pip_dependencies/python_dependencies are ignored because "
                    f"{pyproject} has a [project] table, which owns the declaration",
                )
            return _from_pyproject(source, project, warnings)
    if manifest.file is not None and manifest.has_dependency_keys:
        return _from_manifest(manifest)
    return None


def project_table(source: TextFile) -> dict[str, Any] | None:
    """The ``[project]`` table of a pyproject.toml (None when it has none), checked to be a table."""
    data = load_toml(source.path, source.text)
    project = data.get("project")
    if project is None:
        return None
    if not isinstance(project, dict):
        raise InputError.one(source.path, "project", f"must be a table, got {type(project).__name__}")
    return project


def _from_pyproject(source: TextFile, project: dict[str, Any], warnings: tuple[str, ...]) -> Declaration:
    path = source.path
    problems: list[Problem] = []
    dynamic = project.get("dynamic") or []
    if not isinstance(dynamic, list) or not all(isinstance(item, str) for item in dynamic):
        problems.append(Problem(path, "project.dynamic", f"must be a list of field names, got {quote(dynamic)}"))
    elif "dependencies" in dynamic:
        problems.append(
            Problem(path, "project.dynamic", "lists 'dependencies'; pm reads declarations statically, "
                    "so list them in project.dependencies")
        )
    raw = project.get("dependencies", [])
    if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
        problems.append(Problem(path, "project.dependencies", f"must be a list of requirement strings, got {quote(raw)}"))
        raw = []
    requires_python = None
    rp = project.get("requires-python")
    if rp is not None:
        try:
            if not isinstance(rp, str):
                raise InvalidSpecifier(rp)
            requires_python = SpecifierSet(rp)
        except InvalidSpecifier:
            problems.append(Problem(path, "project.requires-python", f"{quote(rp)} is not a valid version specifier"))
    entries = [(f"project.dependencies[{i}]", text) for i, text in enumerate(raw)]
    requirements, excluded = _parse_requirements(path, entries, problems)
    groups = _entry_point_groups(path, project, problems)
    if problems:
        raise InputError(problems)
    return Declaration(path, "pyproject", source.sha256, requirements, excluded, requires_python, warnings, groups)


def _entry_point_groups(path: Path, project: dict[str, Any], problems: list[Problem]) -> tuple[str, ...]:
    """The entry point groups ``project`` declares: its ``entry-points`` tables, ``console_scripts``
    for ``scripts`` and ``gui_scripts`` for ``gui-scripts`` (PEP 621)."""
    groups: list[str] = []
    tables = project.get("entry-points", {})
    if not isinstance(tables, dict) or not all(isinstance(t, dict) for t in tables.values()):
        problems.append(Problem(path, "project.entry-points", f"must be a table of tables, got {quote(tables)}"))
    else:
        groups += sorted(tables)
    for key, group in (("scripts", "console_scripts"), ("gui-scripts", "gui_scripts")):
        table = project.get(key)
        if table is not None and not isinstance(table, dict):
            problems.append(Problem(path, f"project.{key}", f"must be a table, got {quote(table)}"))
        elif table:
            groups.append(group)
    return tuple(groups)


def _from_manifest(manifest: Manifest) -> Declaration:
    assert manifest.file is not None and manifest.sha256 is not None
    entries = [(f"pip_dependencies[{i}]", t) for i, t in enumerate(manifest.pip_dependencies)]
    entries += [(f"python_dependencies[{i}]", t) for i, t in enumerate(manifest.python_dependencies)]
    problems: list[Problem] = []
    requirements, excluded = _parse_requirements(manifest.file, entries, problems, manifest.line_of)
    if problems:
        raise InputError(problems)
    return Declaration(manifest.file, "manifest", manifest.sha256, requirements, excluded)


def _parse_requirements(
    path: Path, entries: list[tuple[str, str]], problems: list[Problem],
    line_of: Callable[[str], int | None] = lambda key: None,
) -> tuple[tuple[Requirement, ...], tuple[Excluded, ...]]:
    kept: dict[str, Requirement] = {}
    excluded: list[Excluded] = []
    for key, text in entries:
        try:
            requirement = Requirement(text)
        except InvalidRequirement as exc:
            problems.append(Problem(path, key, f"{quote(text)} is not a valid PEP 508 requirement: "
                                    f"{quote(str(exc).splitlines()[0])[1:-1]}", line_of(key)))
            continue
        if requirement.url:
            excluded.append(Excluded(text, "direct URL requirements are not installed by pm; "
                                           "publish the package to an index or ask the plugin author"))
        elif canonicalize_name(requirement.name) in HOST_DISTRIBUTIONS:
            excluded.append(Excluded(text, "a requirement on the host itself is satisfied by the running host"))
        else:
            kept.setdefault(str(requirement), requirement)
    return tuple(kept.values()), tuple(excluded)
