"""Fixtures for admission and update: a real index, a home, and a real git repository of plugins."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from pm.testing import index_from_spec

SPEC = {"sharedlib": {"1.4.0": [], "1.5.0": [], "2.0.0": []}, "extra-lib": {"1.0": []}}


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    with index_from_spec(tmp_path_factory.mktemp("dists"), SPEC) as served:
        yield served


@pytest.fixture
def env(index, tmp_path, monkeypatch):
    core = tmp_path / "core.toml"
    core.write_text("[project]\nname='host'\ndependencies=[]\n")
    (tmp_path / "lock.txt").write_text("")
    monkeypatch.setenv("HERMES_PM_INDEX_URL", index.url)
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HERMES_PM_CORE", str(core))
    monkeypatch.setenv("HERMES_PM_CORE_LOCK", str(tmp_path / "lock.txt"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "no-bundled"))
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("HERMES_HOME", raising=False)
    monkeypatch.delenv("HERMES_DISABLE_LAZY_INSTALLS", raising=False)
    return tmp_path


def plugin(folder: Path, name: str, requirements: list[str], *, marker: Path | None = None,
           kind: str | None = None) -> Path:
    root = folder / name
    root.mkdir(parents=True, exist_ok=True)
    manifest = {"name": name, "manifest_version": 2, "pip_dependencies": requirements}
    if kind:
        manifest["kind"] = kind
    (root / "plugin.yaml").write_text(json.dumps(manifest))
    trap = f"open({str(marker)!r}, 'w').write('imported')\n" if marker else ""
    (root / "__init__.py").write_text(trap + "def register(ctx):\n    pass\n")
    return root


def git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd,
                          capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture
def provider_repo(tmp_path) -> tuple[Path, str]:
    """A real git repository holding a memory provider under providers/honcho; (path, commit)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git("init", "--quiet", cwd=repo)
    plugin(repo / "providers", "honcho", ["extra-lib>=1"], kind="memory")
    git("add", ".", cwd=repo)
    git("commit", "--quiet", "-m", "honcho", cwd=repo)
    return repo, git("rev-parse", "HEAD", cwd=repo)
