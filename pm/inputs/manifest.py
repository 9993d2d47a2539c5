"""The plugin manifest: ``plugin.yaml`` (or ``plugin.yml``; ``plugin.json`` only when neither exists).

Parsed at the boundary into a frozen :class:`Manifest`; every problem of a manifest is collected
and raised once as :class:`~pm.base.errors.InputError`, each naming the file and the key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from pm.base import yamlfile as _yaml
from pm.base.errors import InputError, Problem, quote
from pm.base.files import TextFile, read_text
from pm.base.watch import UNWATCHED, Watch

MANIFEST_NAMES = ("plugin.yaml", "plugin.yml", "plugin.json")
SUPPORTED_MANIFEST_VERSION = 2

#: Keys pm knows. The host and plugins may carry more (hooks, tools, author, ...): unknown keys
#: are not an error, but a near-miss of one of these gets a "did you mean" warning.
KNOWN_KEYS = frozenset(
    {
        "name", "version", "description", "author", "kind", "manifest_version",
        "pip_dependencies", "python_dependencies", "python_runtime", "requires_hermes",
        "requires_env", "provides_tools", "provides_hooks", "hooks", "tools", "homepage",
        "license", "entry", "platforms",
    }
)
#: The keys pm itself acts on.
PM_KEYS = frozenset(
    {"manifest_version", "pip_dependencies", "python_dependencies", "python_runtime", "requires_hermes"}
)
PYTHON_RUNTIMES = ("host", "external")


@dataclass(frozen=True)
class Manifest:
    """What pm reads from one manifest; ``file`` is None for a root with no manifest."""

    file: Path | None
    sha256: str | None = None
    name: str | None = None
    kind: str | None = None
    manifest_version: int = 1
    pip_dependencies: tuple[str, ...] = ()
    python_dependencies: tuple[str, ...] = ()
    has_dependency_keys: bool = False
    python_runtime: str = "host"
    requires_hermes: SpecifierSet | None = None
    warnings: tuple[str, ...] = ()
    key_lines: tuple[tuple[str, int], ...] = ()  # (key, line) of the YAML form: where each key is

    def line_of(self, key: str) -> int | None:
        """The line (1-based) of ``key`` (``pip_dependencies[1]`` for a list's item) in the file."""
        return dict(self.key_lines).get(key)

    @property
    def external(self) -> bool:
        return self.python_runtime == "external"


def find_manifest(root: Path, *, watch: Watch = UNWATCHED) -> Path | None:
    """The manifest file of a plugin root, by docs/design.md's order, or None."""
    watch.folder(root)
    for name in MANIFEST_NAMES:
        candidate = root / name
        if candidate.is_file():
            return candidate
    return None


def read_manifest(root: Path, *, watch: Watch = UNWATCHED) -> Manifest:
    """Read and validate the manifest of ``root`` (an empty Manifest when it has none)."""
    path = find_manifest(root, watch=watch)
    if path is None:
        return Manifest(file=None)
    source = read_text(path, within=root, watch=watch)
    return parse_manifest(source)


def parse_manifest(source: TextFile) -> Manifest:
    data, lines = _load(source)
    problems: list[Problem] = []
    path = source.path

    def problem(key: str | None, message: str) -> None:
        problems.append(Problem(path, key, message, lines.get(key) if key else None))

    version = data.get("manifest_version", 1)
    if isinstance(version, bool) or not isinstance(version, int):
        problem("manifest_version", f"must be an integer, got {quote(version)}")
        version = 1
    elif version > SUPPORTED_MANIFEST_VERSION or version < 1:
        problem(
            "manifest_version",
            f"{quote(version)} is not supported (this pm reads versions 1 to {SUPPORTED_MANIFEST_VERSION})",
        )
    pip = _string_list(data, "pip_dependencies", problem)
    python = _string_list(data, "python_dependencies", problem)
    runtime = data.get("python_runtime", "host")
    if runtime not in PYTHON_RUNTIMES:
        problem("python_runtime", f"must be one of {', '.join(map(repr, PYTHON_RUNTIMES))}, got {quote(runtime)}")
        runtime = "host"
    requires_hermes = _specifier(data.get("requires_hermes"), problem)
    name = data.get("name")
    if name is not None and not isinstance(name, str):
        problem("name", f"must be a string, got {quote(name)}")
        name = None
    kind = data.get("kind")
    if kind is not None and not isinstance(kind, str):
        problem("kind", f"must be a string, got {quote(kind)}")
        kind = None
    misspelt, unknown = _unknown_keys(path, data, lines)
    problems.extend(misspelt)
    if problems:
        raise InputError(problems)
    return Manifest(
        file=path,
        sha256=source.sha256,
        name=name,
        kind=kind,
        manifest_version=version,
        pip_dependencies=pip,
        python_dependencies=python,
        has_dependency_keys="pip_dependencies" in data or "python_dependencies" in data,
        python_runtime=runtime,
        requires_hermes=requires_hermes,
        warnings=tuple(unknown),
        key_lines=tuple(lines.items()),
    )


def _load(source: TextFile) -> tuple[dict[str, Any], dict[str, int]]:
    """The manifest's mapping, and the line of each key (YAML; none for JSON)."""
    lines: dict[str, int] = {}
    try:
        if source.path.suffix == ".json":
            data = json.loads(source.text)
        else:
            data, lines = _yaml.load_located(source.text)
    except RecursionError:  # the json module recurses once per level of nesting
        raise InputError.one(source.path, None, "is not valid JSON: it nests too deeply") from None
    except (_yaml.Error, ValueError) as exc:
        detail = _yaml.describe(exc) if isinstance(exc, _yaml.Error) else str(exc).replace("\n", " ")
        raise InputError.one(source.path, None, f"is not valid {source.path.suffix[1:].upper()}: {detail}") from exc
    if data is None:
        return {}, {}
    if not isinstance(data, dict):
        raise InputError.one(source.path, None, f"must be a mapping at the top level, got {type(data).__name__}")
    return data, lines


def _string_list(data: dict[str, Any], key: str, problem: Any) -> tuple[str, ...]:
    value = data.get(key)
    if value is None:
        return ()
    if not isinstance(value, list):
        problem(key, f"must be a list of requirement strings, got {type(value).__name__} {quote(value)}")
        return ()
    bad = [item for item in value if not isinstance(item, str)]
    if bad:
        problem(key, f"must be a list of requirement strings; {quote(bad[0])} is a {type(bad[0]).__name__}")
        return ()
    return tuple(value)


def _specifier(value: Any, problem: Any) -> SpecifierSet | None:
    if value is None:
        return None
    if not isinstance(value, str):
        problem("requires_hermes", f"must be a version specifier string, got {quote(value)}")
        return None
    try:
        return SpecifierSet(value)
    except InvalidSpecifier:
        problem("requires_hermes", f"{quote(value)} is not a valid version specifier (e.g. '>=0.4')")
        return None


def _near_miss(key: object) -> str | None:
    if not isinstance(key, str) or key in KNOWN_KEYS:
        return None
    import difflib  # only when there is an unknown key to explain: most commands never load it

    close = difflib.get_close_matches(key, KNOWN_KEYS, n=1, cutoff=0.8)
    return close[0] if close else None


def _unknown_keys(path: Path, data: dict[str, Any], lines: dict[str, int]) -> tuple[list[Problem], list[str]]:
    """Near-misses of known keys, looked up once: of a key pm acts on an error (a typo must not
    silently drop requirements), of any other known key a warning."""
    problems, warnings = [], []
    for key in data:
        close = _near_miss(key)
        if close in PM_KEYS:
            problems.append(Problem(path, key, f"unknown key; did you mean {quote(close)}?", lines.get(key)))
        elif close is not None:
            warnings.append(f"{path}: unknown key {quote(key)}; did you mean {quote(close)}?")
    return problems, warnings
