"""packse resolver scenarios as values: load, judge for one target, turn into an index spec.

A scenario file (TOML, YAML or JSON, packse's format) names packages with versions — each version
with ``requires``, ``requires_python``, ``extras``, ``wheel_tags``, ``sdist``/``wheel`` flags and
``yanked`` — a root requirement set, ``resolver_options`` and ``environment`` describing the
target, and the expected outcome. Unknown keys raise ``ValueError``, as in packse itself, so a new
packse field can never be ignored silently.

packse's implicit defaults describe "the current interpreter": a default ``environment.python``
and a default ``requires_python = ">=<that version>"`` on every version. Here "the current
interpreter" is the test interpreter, so a version without an explicit ``requires_python``
publishes no Requires-Python, and a scenario targets another interpreter only when it says so
(``resolver_options.python``, else ``environment.python``, ``python_platform``,
``required_environments``).

Package names are prefixed with the scenario name (``{scenario}-{package}``, as packse does), so
every scenario's packages share one index without collisions, and a package name in a conflict
message is a token no English word can match.
"""

from __future__ import annotations

import json
import os
import platform
import re
import sys
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from packaging.requirements import InvalidRequirement, Requirement
from packaging.tags import parse_tag, sys_tags
from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import Version

#: ``../shared/external/packse/scenarios`` beside the repository (docs/design.md, "Conformance data").
SCENARIOS_DIR = Path(
    os.environ.get("HERMES_PM_PACKSE_SCENARIOS")
    or Path(__file__).resolve().parents[3] / "shared" / "external" / "packse" / "scenarios"
)

_SCENARIO_KEYS = {"name", "description", "packages", "root", "expected", "resolver_options",
                  "environment", "template"}
_VERSION_KEYS = {"requires", "requires_python", "extras", "sdist", "wheel", "yanked", "wheel_tags",
                 "description"}
_OPTION_KEYS = {"python", "prereleases", "no_build", "no_binary", "universal", "python_platform",
                "required_environments"}
_ENVIRONMENT_KEYS = {"python", "additional_python"}
_EXPECTED_KEYS = {"satisfiable", "packages", "explanation"}
_ROOT_KEYS = {"requires", "requires_python"}


@dataclass(frozen=True)
class Release:
    """One version of one scenario package, with packse's defaults (wheel and sdist published)."""

    version: str
    requires: tuple[str, ...] = ()
    requires_python: str | None = None  # None: packse's implicit "current interpreter" default
    extras: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    wheel_tags: tuple[str, ...] = ()  # () = one py3-none-any wheel
    sdist: bool = True
    wheel: bool = True
    yanked: bool = False

    @classmethod
    def parse(cls, version: object, data: Mapping[str, Any] | None) -> Release:
        data = _checked(data or {}, _VERSION_KEYS, f"version {version!r}")
        return cls(
            version=str(version),
            requires=tuple(data.get("requires", ())),
            requires_python=data.get("requires_python"),
            extras={extra: tuple(reqs) for extra, reqs in data.get("extras", {}).items()},
            wheel_tags=tuple(data.get("wheel_tags", ())),
            sdist=bool(data.get("sdist", True)),
            wheel=bool(data.get("wheel", True)),
            yanked=bool(data.get("yanked", False)),
        )


@dataclass(frozen=True)
class Scenario:
    """One packse scenario; ``id`` is ``<folder>/<file stem>`` (plus the format when not TOML)."""

    id: str
    name: str
    description: str
    packages: Mapping[str, tuple[Release, ...]]
    root_requires: tuple[str, ...]
    root_requires_python: str | None
    satisfiable: bool
    expected_packages: Mapping[str, str]
    explanation: str | None
    options: Mapping[str, Any]
    environment: Mapping[str, Any]

    @classmethod
    def parse(cls, scenario_id: str, data: Mapping[str, Any]) -> Scenario:
        where = f"scenario {scenario_id}"
        data = _checked(data, _SCENARIO_KEYS, where)
        root = _checked(data.get("root", {}), _ROOT_KEYS, f"{where}: root")
        expected = _checked(data["expected"], _EXPECTED_KEYS, f"{where}: expected")
        packages = {
            name: tuple(Release.parse(v, info) for v, info in _checked(
                package, {"versions"}, f"{where}: package {name!r}").get("versions", {}).items())
            for name, package in (data.get("packages") or {}).items()
        }
        return cls(
            id=scenario_id,
            name=data["name"],
            description=data.get("description", ""),
            packages=packages,
            root_requires=tuple(root.get("requires", ())),
            root_requires_python=root.get("requires_python"),
            satisfiable=bool(expected["satisfiable"]),
            expected_packages={k: str(v) for k, v in expected.get("packages", {}).items()},
            explanation=expected.get("explanation"),
            options=_checked(data.get("resolver_options", {}), _OPTION_KEYS,
                             f"{where}: resolver_options"),
            environment=_checked(data.get("environment", {}), _ENVIRONMENT_KEYS,
                                 f"{where}: environment"),
        )

    # -- names ------------------------------------------------------------------------------------

    def prefixed(self, name: str) -> NormalizedName:
        """The name a scenario package is published under on the shared index."""
        return canonicalize_name(f"{self.name}-{name}")

    def rename(self, requirement: str) -> str:
        """``requirement`` with its project name prefixed (extras, specifier, marker kept)."""
        parsed = Requirement(requirement)
        parsed.name = self.prefixed(parsed.name)
        return str(parsed)

    def known_names(self) -> set[NormalizedName]:
        """Every project name the scenario mentions: its packages and what anything requires."""
        texts = list(self.root_requires)
        for release in (r for releases in self.packages.values() for r in releases):
            texts += release.requires
            texts += [text for extra in release.extras.values() for text in extra]
        names = {canonicalize_name(n) for n in self.packages}
        return names | {canonicalize_name(Requirement(t).name) for t in texts}

    def explained_names(self) -> list[NormalizedName]:
        """Packages the explanation names in backticks (`` `b` ``, `` `b==2.0.0` ``), in order."""
        found: dict[NormalizedName, None] = {}
        for token in re.findall(r"`([^`]+)`", self.explanation or ""):
            try:
                name = canonicalize_name(Requirement(token).name)
            except InvalidRequirement:
                continue  # `2.x`, `==1.2.3`: not a package
            if name in self.known_names():
                found[name] = None
        return list(found)

    # -- the index --------------------------------------------------------------------------------

    def index_spec(self) -> dict[str, dict[str, dict[str, Any]]]:
        """The scenario as a :func:`pm.testing.build_packages` spec, names prefixed.

        ``resolver_options.no_binary`` names packages whose wheels may not be used; pm has no
        such setting, so those wheels are not published (to the resolver, the same thing).
        ``no_build`` is honoured by :meth:`allow_builds`. Every sdist has an in-tree backend
        (:func:`pm.testing.sdists.backend_sdist`), so building one needs no download. A version
        with neither a usable wheel nor an sdist publishes nothing.
        """
        no_binary = {canonicalize_name(n) for n in self.options.get("no_binary", ())}
        spec: dict[str, dict[str, dict[str, Any]]] = {}
        for name, releases in self.packages.items():
            versions = spec.setdefault(self.prefixed(name), {})
            for release in releases:
                wheels = release.wheel and canonicalize_name(name) not in no_binary
                if not wheels and not release.sdist:
                    continue
                info: dict[str, Any] = {
                    "requires": [self.rename(r) for r in release.requires],
                    "extras": {e: [self.rename(r) for r in rs] for e, rs in release.extras.items()},
                    "yanked": release.yanked,
                }
                if release.requires_python is not None:
                    info["requires_python"] = release.requires_python
                if wheels:
                    info["tags"] = list(release.wheel_tags) or ["py3-none-any"]
                    info["sdist"] = release.sdist
                else:
                    info["sdist_only"] = True
                if release.sdist:
                    info["sdist_backend"] = "in-tree"  # builds offline, metadata only by building
                versions[release.version] = info
        return spec

    def allow_builds(self) -> list[NormalizedName]:
        """The ``pm.allow_builds`` that stands here for uv's default (build any sdist not in
        ``no_build``): the prefixed names of packages with a version that this interpreter can
        use only as an sdist (no wheel, wheels forbidden by ``no_binary``, or none of its wheel
        tags supported here), minus ``no_build``. Packages with a usable wheel for every version
        gain nothing from a build (pm prefers a wheel to an sdist of the same version), so they
        stay wheels-only, and a scenario that needs no build gets ``[]``.
        """
        no_binary = {canonicalize_name(n) for n in self.options.get("no_binary", ())}
        no_build = {canonicalize_name(n) for n in self.options.get("no_build", ())}
        names = [
            name for name, releases in self.packages.items()
            if canonicalize_name(name) not in no_build and any(
                r.sdist and (not r.wheel or canonicalize_name(name) in no_binary
                             or not _has_wheel_here(r)) for r in releases)
        ]
        return sorted(self.prefixed(name) for name in names)

    # -- the target -------------------------------------------------------------------------------

    def other_target(self) -> str | None:
        """Why this scenario describes a target other than the test interpreter, or None."""
        if self.id.startswith("fork/"):
            return "fork/: universal (multi-platform) lock resolution, not a single target"
        if self.options.get("universal"):
            return "resolver_options.universal: universal resolution, not a single target"
        python = self.options.get("python") or self.environment.get("python")
        if python is not None and not _is_test_python(str(python)):
            key = "resolver_options.python" if self.options.get("python") else "environment.python"
            return (f"{key} = {python!r}: targets Python {python}; "
                    f"the test interpreter is {_RUNNING}")
        platform_tag = self.options.get("python_platform")
        if platform_tag is not None and not _is_test_platform(str(platform_tag)):
            return (f"resolver_options.python_platform = {platform_tag!r}; "
                    f"the test interpreter runs on {sys.platform} {platform.machine()}")
        if self.options.get("required_environments"):
            return ("resolver_options.required_environments: several environments, "
                    "not a single target")
        return None


_RUNNING = ".".join(map(str, sys.version_info[:3]))
_HERE = frozenset(sys_tags())


def _is_test_python(python: str) -> bool:
    release = Version(python).release
    return release == tuple(sys.version_info[: len(release)])


def _has_wheel_here(release: Release) -> bool:
    """Whether one of the release's wheels installs on the test interpreter."""
    return any(tag in _HERE for text in release.wheel_tags or ("py3-none-any",)
               for tag in parse_tag(text))


def _is_test_platform(python_platform: str) -> bool:
    """Whether uv's ``--python-platform`` name (``x86_64-manylinux2014``, ``linux``) is here."""
    text = python_platform.lower()
    if ("musl" in text) != any("musllinux" in str(tag) for tag in sys_tags()):
        return False  # a musl libc target on glibc, or the other way round
    systems = {"linux": ("linux",), "darwin": ("macos", "darwin", "apple"),
               "win32": ("windows", "win")}
    system = next((s for s, words in systems.items() if any(w in text for w in words)), None)
    if system is None or not sys.platform.startswith(system):
        return False
    arch = text.split("-", 1)[0] if "-" in text else None
    aliases = {"amd64": "x86_64", "arm64": "aarch64"}
    machine = aliases.get(platform.machine().lower(), platform.machine().lower())
    return arch is None or aliases.get(arch, arch) == machine


def _checked(data: Any, allowed: set[str], where: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise ValueError(f"{where}: expected a table, got {data!r}")
    unknown = set(data) - allowed
    if unknown:
        raise ValueError(f"{where}: unknown keys {sorted(unknown)!r}")
    return data


def _read(path: Path) -> list[Mapping[str, Any]]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".toml":
        loaded: Any = tomllib.loads(text)
    elif path.suffix == ".json":
        loaded = json.loads(text)
    else:
        loaded = yaml.safe_load(text)
    return loaded if isinstance(loaded, list) else [loaded]


def load_scenarios(root: Path = SCENARIOS_DIR) -> list[Scenario]:
    """Every scenario under ``root`` (``*.toml``, ``*.yaml``, ``*.json``), sorted by id.

    Raises ``ValueError`` for unknown keys or two scenarios sharing a name (their packages would
    share prefixed names on the index).
    """
    scenarios = list(_iter_scenarios(root))
    names: dict[str, str] = {}
    for scenario in scenarios:
        if scenario.name in names:
            raise ValueError(f"{scenario.id} and {names[scenario.name]} share the name "
                             f"{scenario.name!r}")
        names[scenario.name] = scenario.id
    return sorted(scenarios, key=lambda s: s.id)


def _iter_scenarios(root: Path) -> Iterator[Scenario]:
    for path in sorted(p for p in root.rglob("*") if p.suffix in (".toml", ".yaml", ".json")):
        relative = path.relative_to(root)
        toml = path.suffix == ".toml"
        base = relative.with_suffix("").as_posix() if toml else relative.as_posix()
        documents = _read(path)
        for data in documents:
            scenario_id = base if len(documents) == 1 else f"{base}:{data.get('name')}"
            yield Scenario.parse(scenario_id, data)
