"""Benchmark workloads: package specs (for :func:`pm.testing.build_packages`), homes and core files.

- :func:`realistic` — an agent-sized graph: 16 root requirements (core + 3 plugins) that resolve
  to about 40 packages, with ranges, markers, an extra, a Requires-Python cut, core pins that
  hold packages below their newest release, and backtracking whose answer is unique (every
  conflict is against a root constraint or a single-version package), so any two correct
  resolvers that prefer newest versions pin the same set.
- :func:`pool` — a seeded pool of packages with a dependency DAG and a hidden reference solution,
  and :func:`pool_plugins` — N plugins whose requirements are drawn from that pool (every range
  contains the reference version, so the union always resolves).

Everything is deterministic for a given seed. The big-pages workload (projects with thousands of
files, like numpy or grpcio, served from a cached tree) lives in :mod:`bigpages`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pm.testing import add_plugin, make_home

Spec = dict[str, dict[str, Any]]

_NO_PY = ">=3.99"  # a Requires-Python no interpreter meets: that release must be skipped

REALISTIC_SPEC: Spec = {
    "webclient": {
        v: [
            "charset-detect>=2,<4",
            "idna-codec>=2.5,<4",
            "urllib-pool>=1.21.1,<3",
            "certstore>=2017.4.17",
        ]
        for v in ("2.28.2", "2.31.0", "2.32.3")
    },
    "charset-detect": {v: [] for v in ("2.1.1", "3.0.1", "3.3.2", "3.4.0")},
    "idna-codec": {v: [] for v in ("3.4", "3.6", "3.7")},
    "urllib-pool": {"1.26.18": [], "2.0.7": [], "2.2.1": [], "2.2.2": []},
    "certstore": {v: [] for v in ("2023.7.22", "2024.2.2", "2024.6.2")},
    "asynchttp": {
        "0.24.1": ["certstore", "httpcore-lite>=0.17,<0.18", "idna-codec", "sniffer"],
        "0.25.2": ["anyio-core", "certstore", "httpcore-lite==1.*", "idna-codec", "sniffer"],
        "0.27.0": {
            "requires": ["anyio-core", "certstore", "httpcore-lite==1.*", "idna-codec", "sniffer"],
            "extras": {"http2": ["h2-proto>=3,<5"]},
        },
        "0.28.1": {
            "requires": ["anyio-core", "certstore", "httpcore-lite==1.*", "idna-codec"],
            "extras": {"http2": ["h2-proto>=3,<5"]},
        },
    },
    "httpcore-lite": {
        "0.17.3": ["h11-proto>=0.13,<0.15", "certstore"],
        "1.0.2": ["h11-proto>=0.13,<0.15", "certstore"],
        "1.0.5": ["h11-proto>=0.13,<0.15", "certstore"],
    },
    "h11-proto": {"0.13.0": [], "0.14.0": []},
    "h2-proto": {
        "3.2.0": ["hyperframe-x>=5.2,<6", "hpack-x>=3,<4"],
        "4.1.0": ["hyperframe-x>=6,<7", "hpack-x>=4,<5"],
    },
    "hyperframe-x": {v: [] for v in ("5.2.0", "6.0.1")},
    "hpack-x": {v: [] for v in ("3.0.0", "4.0.0")},
    "anyio-core": {
        "3.7.1": ["idna-codec>=2.8", "sniffer>=1.1"],
        "4.3.0": ["idna-codec>=2.8", "sniffer>=1.1", "typing-ext>=4.1"],
        "4.4.0": [
            "idna-codec>=2.8",
            "sniffer>=1.1",
            "typing-ext>=4.1",
            "exceptiongroup-x>=1.0.2; python_version < '3.11'",
        ],
    },
    "exceptiongroup-x": {"1.2.0": []},
    "sniffer": {v: [] for v in ("1.2.0", "1.3.0", "1.3.1")},
    "typing-ext": {v: [] for v in ("4.5.0", "4.7.1", "4.9.0", "4.12.2")},
    "modelkit": {
        "1.10.13": ["typing-ext>=4.2"],
        "2.5.3": ["annotated-types>=0.4", "modelkit-core==2.14.5", "typing-ext>=4.6.1"],
        "2.7.4": ["annotated-types>=0.4", "modelkit-core==2.18.4", "typing-ext>=4.6.1"],
        "2.8.2": ["annotated-types>=0.4", "modelkit-core==2.20.1", "typing-ext>=4.6.1"],
    },
    "modelkit-core": {v: ["typing-ext>=4.6,!=4.7.0"] for v in ("2.14.5", "2.18.4", "2.20.1")},
    "annotated-types": {v: [] for v in ("0.5.0", "0.6.0", "0.7.0")},
    "yamlish": {v: [] for v in ("5.4.1", "6.0", "6.0.1")},
    "templating": {
        "3.0.3": ["markupsafe-x>=2.0"],
        "3.1.2": ["markupsafe-x>=2.0"],
        "3.1.4": ["markupsafe-x>=2.0"],
    },
    "markupsafe-x": {"2.0.1": [], "2.1.5": [], "3.0.0": {"requires_python": _NO_PY}},
    "clickish": {v: ["colorama-x; sys_platform == 'win32'"] for v in ("8.0.4", "8.1.3", "8.1.7")},
    "colorama-x": {"0.4.6": []},
    "richtext": {
        "12.6.0": ["markdown-it-x>=2.2,<3", "pygmentize>=2.6,<3"],
        "13.3.5": ["markdown-it-x>=2.2", "pygmentize>=2.13,<3"],
        "13.7.1": ["markdown-it-x>=3", "pygmentize>=2.13,<3"],
    },
    "markdown-it-x": {"2.2.0": ["mdurl-x~=0.1"], "3.0.0": ["mdurl-x~=0.1"]},
    "mdurl-x": {v: [] for v in ("0.1.0", "0.1.2")},
    "pygmentize": {v: [] for v in ("2.15.1", "2.17.2", "2.18.0")},
    "tokenizer-lib": {
        "0.5.2": ["regexlib>=2022.1.18", "webclient>=2.26"],
        "0.6.0": ["regexlib>=2022.1.18", "webclient>=2.26"],
        "0.7.0": ["regexlib>=2024.1", "webclient>=2.26"],
    },
    "regexlib": {v: [] for v in ("2023.10.3", "2023.12.25", "2024.5.15")},
    "openai-sdk": {
        "1.10.0": [
            "anyio-core>=3.5,<5",
            "distro-x>=1.7,<2",
            "asynchttp>=0.23,<1",
            "modelkit>=1.9,<3",
            "sniffer",
            "tqdm-x>4",
            "typing-ext>=4.7,<5",
        ],
        "1.30.5": [
            "anyio-core>=3.5,<5",
            "distro-x>=1.7,<2",
            "asynchttp>=0.23,<1",
            "modelkit>=1.9,<3",
            "sniffer",
            "tqdm-x>4",
            "typing-ext>=4.7,<5",
        ],
        "1.35.3": [
            "anyio-core>=3.5,<5",
            "distro-x>=1.7,<2",
            "asynchttp>=0.23,<1",
            "modelkit>=1.9,<3",
            "sniffer",
            "tqdm-x>4",
            "typing-ext>=4.11,<5",
            "jiter-x>=0.4,<1",
        ],
    },
    "distro-x": {v: [] for v in ("1.8.0", "1.9.0")},
    "tqdm-x": {v: ["colorama-x; platform_system == 'Windows'"] for v in ("4.65.0", "4.66.4")},
    "jiter-x": {v: [] for v in ("0.4.2", "0.5.0")},
    "numeric": {"1.24.4": [], "1.26.4": [], "2.0.0": {"requires_python": ">=3.9"}},
    "dataframe": {
        "2.0.3": ["numeric>=1.21", "dateutil-x>=2.8.2", "tz-x>=2020.1", "tzdata-x>=2022.1"],
        "2.1.4": ["numeric>=1.23.2", "dateutil-x>=2.8.2", "tz-x>=2020.1", "tzdata-x>=2022.1"],
        "2.2.2": ["numeric>=1.26", "dateutil-x>=2.8.2", "tz-x>=2020.1", "tzdata-x>=2022.7"],
    },
    "dateutil-x": {v: ["six-x>=1.5"] for v in ("2.8.2", "2.9.0")},
    "six-x": {"1.16.0": []},
    "tz-x": {v: [] for v in ("2023.3", "2024.1")},
    "tzdata-x": {v: [] for v in ("2023.3", "2024.1")},
    "vectorstore": {
        "0.4.24": ["numeric>=1.22.5,<2", "modelkit>=1.9", "orjson-x>=3.9"],
        "0.5.0": ["numeric>=1.22.5,<2", "modelkit>=1.9", "orjson-x>=3.9.12", "tokenizer-lib>=0.5"],
    },
    "orjson-x": {v: [] for v in ("3.9.10", "3.9.15", "3.10.3")},
    "sqlbuilder": {
        v: [
            "typing-ext>=4.6",
            "greenlet-x!=0.4.17; platform_machine == 'x86_64' "
            "or platform_machine == 'aarch64' or platform_machine == 'AMD64'",
            "tomli-x; python_version < '3.10'",
        ]
        for v in ("1.4.52", "2.0.25", "2.0.30")
    },
    "greenlet-x": {v: [] for v in ("3.0.1", "3.0.3")},
    "tomli-x": {"2.0.1": []},
    "retrying": {v: [] for v in ("8.2.3", "8.3.0", "8.5.0")},
    "filelock-x": {v: [] for v in ("3.12.4", "3.13.4", "3.15.4")},
}

#: Core of the realistic workload: (requirements, lock). The lock holds two packages below newest.
REALISTIC_CORE = (
    ["webclient>=2.28", "yamlish>=6", "modelkit>=2", "clickish>=8.1"],
    {
        "webclient": "2.32.3",
        "charset-detect": "3.3.2",
        "idna-codec": "3.7",
        "urllib-pool": "2.2.1",
        "certstore": "2024.6.2",
        "yamlish": "6.0.1",
        "modelkit": "2.7.4",
        "modelkit-core": "2.18.4",
        "typing-ext": "4.12.2",
        "annotated-types": "0.7.0",
        "clickish": "8.1.7",
    },
)

#: Plugins of the realistic workload (12 requirements; 16 roots with core's 4).
REALISTIC_PLUGINS: dict[str, list[str]] = {
    "assistant-llm": [
        "openai-sdk>=1.10",
        "tokenizer-lib>=0.5",
        "regexlib<2024",
        "asynchttp[http2]<0.28",
    ],
    "memory-vectors": ["vectorstore>=0.4", "dataframe>=2", "filelock-x>=3.12", "retrying>=8.2"],
    "notes-render": ["templating>=3.1", "richtext>=12", "markdown-it-x<3", "sqlbuilder>=2"],
}


@dataclass(frozen=True)
class Workload:
    """One benchmark input: packages to serve, core, and plugins (name -> requirements)."""

    name: str
    spec: Spec
    core_requires: list[str]
    core_lock: dict[str, str]
    plugins: dict[str, list[str]]

    @property
    def roots(self) -> list[str]:
        """Every root requirement (core, plugins, core's lock pins): what uv pip compile gets."""
        plugin_reqs = [r for reqs in self.plugins.values() for r in reqs]
        pins = [f"{n}=={v}" for n, v in self.core_lock.items()]
        return [*self.core_requires, *plugin_reqs, *pins]


def realistic() -> Workload:
    return Workload("realistic", REALISTIC_SPEC, *REALISTIC_CORE, REALISTIC_PLUGINS)


def _versions(rng: random.Random) -> list[str]:
    major = rng.randint(0, 3)
    count = rng.randint(3, 6)
    minors = sorted(rng.sample(range(0, 12), count))
    return [f"{major + i // 3}.{minor}.{rng.randint(0, 3)}" for i, minor in enumerate(minors)]


def _range(rng: random.Random, versions: list[str], ref: str) -> str:
    """A specifier on a package with ``versions`` that admits ``ref``."""
    at = versions.index(ref)
    shape = rng.random()
    if shape < 0.3:
        return ""
    lower = f">={versions[rng.randint(0, at)]}"
    if shape < 0.75 or at == len(versions) - 1:
        return lower
    return f"{lower},<{versions[rng.randint(at + 1, len(versions) - 1)]}"


def pool(size: int = 80, seed: int = 7) -> tuple[Spec, dict[str, str]]:
    """A pool of ``size`` packages and its reference solution (name -> version).

    Package ``i`` depends only on packages ``j > i`` (a DAG). The reference version is the newest
    for most packages, the second newest for one in five. A reference release's dependency
    ranges admit the dependency's reference version; releases newer than the reference may demand
    the dependency's newest release, which forces the resolver to backtrack when the reference
    is not the newest.
    """
    rng = random.Random(seed)
    names = [f"pool-{i:03d}" for i in range(size)]
    versions = {name: _versions(rng) for name in names}
    ref = {n: v[-1] if rng.random() > 0.2 else v[-2] for n, v in versions.items()}
    spec: Spec = {}
    for i, name in enumerate(names):
        later = names[i + 1 :]
        deps = rng.sample(later, min(len(later), rng.randint(0, 3)))
        spec[name] = {}
        for version in versions[name]:
            newer = versions[name].index(version) > versions[name].index(ref[name])
            reqs = [
                f"{d}>={versions[d][-1]}" if newer else f"{d}{_range(rng, versions[d], ref[d])}"
                for d in deps
            ]
            spec[name][version] = reqs
    return spec, ref


def pool_plugins(
    spec: Spec, ref: dict[str, str], count: int, seed: int = 11
) -> dict[str, list[str]]:
    """``count`` plugins, each requiring 2-5 pool packages with ranges that admit the reference."""
    rng = random.Random(seed * 1000 + count)
    names = sorted(spec)
    plugins = {}
    for i in range(count):
        wanted = rng.sample(names, rng.randint(2, 5))
        plugins[f"plugin-{i:03d}"] = [f"{n}{_range(rng, list(spec[n]), ref[n])}" for n in wanted]
    return plugins


def pooled(count: int, spec: Spec, ref: dict[str, str]) -> Workload:
    return Workload(f"{count} plugins", spec, [], {}, pool_plugins(spec, ref, count))


@dataclass(frozen=True)
class Layout:
    """Where a workload was written: the home and core's files."""

    home: Path
    core: Path
    core_lock: Path
    requirements_in: Path


def write(workload: Workload, folder: Path) -> Layout:
    """Write a home (every plugin a manifest plugin, all enabled), core and requirements.in."""
    folder.mkdir(parents=True, exist_ok=True)
    home = make_home(folder / "home", config={"plugins": {"enabled": list(workload.plugins)}})
    for name, requirements in workload.plugins.items():
        add_plugin(home / "plugins", name, style="manifest", dependencies=requirements)
    core = folder / "core.toml"
    deps = ", ".join(f'"{r}"' for r in workload.core_requires)
    core.write_text(f'[project]\nname = "bench-host"\nversion = "1.0"\ndependencies = [{deps}]\n')
    lock = folder / "core-lock.txt"
    lock.write_text("".join(f"{n}=={v}\n" for n, v in workload.core_lock.items()))
    requirements_in = folder / "requirements.in"
    requirements_in.write_text("\n".join(workload.roots) + "\n")
    return Layout(home, core, lock, requirements_in)
