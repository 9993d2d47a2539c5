"""Catalogs for tests and benchmarks: real git repositories, one plugin each, and the index they
need, shaped like a real catalog's troubles (issue 23's bench):

- pairs that collide (``pairN-a`` needs ``libN<2``, ``pairN-b`` needs ``libN>=2``);
- one group of three where any two fit and all three do not (``trio-1..3`` each exclude one of
  ``tri``'s three versions);
- one entry whose package has a macOS wheel and otherwise only a source distribution
  (``native``: refused alone on Linux, where pm does not build unless allowed);
- one entry whose package requires Python < 3.13 (``oldpy``: refused alone on 3.13);
- one entry needing a project no index has (``ghost``: refused alone, missing project);
- one entry needing what core's own requirement excludes (``corefight`` needs ``corelib>=2``, core
  ``corelib<2``: write :attr:`MadeCatalog.core` as core's dependencies);
- fillers that fit everything (``fine-N``).

:func:`make_catalog` writes the directory form (one YAML file per entry) and returns what each
entry is expected to do.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

GIT = ["git", "-c", "user.name=pm-testing", "-c", "user.email=pm-testing@example.invalid",
       "-c", "init.defaultBranch=main"]


@dataclass
class MadeCatalog:
    folder: Path
    spec: dict[str, dict[str, Any]]  # for build_packages / index_from_spec
    pairs: list[tuple[str, str]] = field(default_factory=list)
    trio: tuple[str, ...] = ()
    repos: dict[str, Path] = field(default_factory=dict)
    core: list[str] = field(default_factory=lambda: ["corelib<2"])  # core's dependencies, for corefight

    def core_pyproject(self) -> str:
        """Core's ``pyproject.toml`` for this catalog."""
        return f"[project]\nname = 'host'\ndependencies = {json.dumps(self.core)}\n"


def plugin_repo(parent: Path, name: str, requirements: list[str]) -> tuple[Path, str]:
    """A real git repository holding one plugin (a manifest declaring ``requirements``)."""
    repo = parent / f"{name}.git"
    repo.mkdir(parents=True)
    (repo / "plugin.yaml").write_text(json.dumps({"name": name, "pip_dependencies": requirements}))
    (repo / "__init__.py").write_text("")
    for argv in (["init", "--quiet"], ["add", "."], ["commit", "--quiet", "-m", name]):
        subprocess.run([*GIT, *argv], cwd=repo, check=True)
    commit = subprocess.run([*GIT, "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True, text=True)
    return repo, commit.stdout.strip()


def recommit(repo: Path, name: str, requirements: list[str]) -> str:
    """A new commit of ``repo`` declaring ``requirements``; its hash."""
    (repo / "plugin.yaml").write_text(json.dumps({"name": name, "pip_dependencies": requirements}))
    subprocess.run([*GIT, "commit", "--quiet", "-am", "new pin"], cwd=repo, check=True)
    return subprocess.run([*GIT, "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True,
                          text=True).stdout.strip()


def make_catalog(root: Path, entries: int = 50) -> MadeCatalog:
    """A catalog directory of ``entries`` entries (at least 10) and its index spec."""
    pairs = max(1, (entries - 5) // 4)
    spec: dict[str, dict[str, Any]] = {
        "base": {"1.0": []},
        "tri": {"1.0": [], "2.0": [], "3.0": []},
        "native": {"1.0": {"tags": ["py3-none-macosx_11_0_arm64", "py3-none-macosx_10_9_x86_64"], "sdist": True}},
        "oldpy": {"1.0": {"requires_python": "<3.13"}},
        "corelib": {"1.0": [], "2.0": []},
    }
    declared: dict[str, list[str]] = {}
    made = MadeCatalog(root / "catalog.d", spec)
    for i in range(pairs):
        spec[f"lib{i}"] = {"1.0": [], "2.0": []}
        declared[f"pair{i}-a"], declared[f"pair{i}-b"] = [f"lib{i}<2"], [f"lib{i}>=2"]
        made.pairs.append((f"pair{i}-a", f"pair{i}-b"))
    for i, version in enumerate(("1.0", "2.0", "3.0"), 1):
        declared[f"trio-{i}"] = [f"tri!={version}"]
    made.trio = ("trio-1", "trio-2", "trio-3")
    declared["native"], declared["oldpy"] = ["native"], ["oldpy"]
    declared["ghost"], declared["corefight"] = ["no-such-project-anywhere"], ["corelib>=2"]
    for i in range(entries - len(declared)):
        declared[f"fine-{i}"] = ["base"]
    made.folder.mkdir(parents=True)
    for name, requirements in declared.items():
        repo, commit = plugin_repo(root / "repos", name, requirements)
        made.repos[name] = repo
        (made.folder / f"{name}.yaml").write_text(json.dumps({"name": name, "repo": f"file://{repo}", "sha": commit}))
    return made


@dataclass
class ScaleCatalog:
    folder: Path
    spec: dict[str, dict[str, Any]]
    core: list[str]  # core's requirements
    lock: dict[str, str]  # core's lock: name -> version
    requirements: dict[str, list[str]]  # entry -> its declared requirements


def make_scale_catalog(root: Path, entries: int = 1000) -> ScaleCatalog:
    """A catalog shaped like a big real one (Home Assistant's integrations): ``entries`` plugins in
    subdirs of ONE repository at one commit, each pinning its own libraries exactly
    (``acme-client-17==2.4.1``) over a shared pool (``http-base``, ``async-util``, ...) with
    ranges, against a core with a lock; every entry fits alone and together (the gate's cost, not
    its findings, is measured)."""
    shared = [f"shared-{i}" for i in range(40)]
    spec: dict[str, dict[str, Any]] = {name: {f"{major}.{minor}.0": [] for major in (1, 2) for minor in range(3)}
                                       for name in shared}
    core = [f"{shared[i]}>=1" for i in range(8)]
    lock = {shared[i]: "2.2.0" for i in range(8)}
    requirements: dict[str, list[str]] = {}
    repo = root / "integrations.git"
    for n in range(entries):
        own = [f"client-{n}-{k}" for k in range(1 + n % 3)]
        for k, name in enumerate(own):
            spec[name] = {f"{v}.{k}.{n % 7}": [f"{shared[(n + k) % 40]}>=1", f"{shared[(n * 7 + k) % 40]}<3"]
                          for v in (1, 2, 3)}
        requirements[f"integration-{n}"] = [f"{name}=={2}.{k}.{n % 7}" for k, name in enumerate(own)] + (
            [f"{shared[n % 40]}>=1.1"] if n % 4 == 0 else [])
    for name, declared in requirements.items():
        (repo / name).mkdir(parents=True)
        (repo / name / "plugin.yaml").write_text(json.dumps({"name": name, "pip_dependencies": declared}))
        (repo / name / "__init__.py").write_text("")
    for argv in (["init", "--quiet"], ["add", "."], ["commit", "--quiet", "-m", "integrations"]):
        subprocess.run([*GIT, *argv], cwd=repo, check=True)
    commit = subprocess.run([*GIT, "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True,
                            text=True).stdout.strip()
    folder = root / "catalog.d"
    folder.mkdir(parents=True)
    for name in requirements:
        (folder / f"{name}.yaml").write_text(json.dumps({"name": name, "repo": f"file://{repo}", "sha": commit,
                                                         "subdir": name}))
    return ScaleCatalog(folder, spec, core, lock, requirements)
