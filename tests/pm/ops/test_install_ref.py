"""``hermes plugins install --ref REF`` and GitHub's ``owner/repo[/subdir]`` shorthand: each made
into the one git source pm installs, ``git+URL@<40-hex commit>``, once, at install time. Real git
repositories on disk (no network: the shorthand's expansion is tested by its parsing)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from agent.cli import main as hermes
from pm.env.git_source import GitSource, pinned_source, resolve_ref, shorthand
from pm.env.plugin_fetch import InstallError
from pm.env.plugin_install import installed_records
from pm.testing import make_home
from pm.testing.catalogs import GIT, plugin_repo, recommit


def git(repo: Path, *argv: str) -> str:
    return subprocess.run([*GIT, *argv], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "none"))
    return make_home(tmp_path / "home")


def test_the_shorthand_is_a_github_repository_and_its_subdirectory(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    assert shorthand("hermes-agent/plugins") == GitSource("https://github.com/hermes-agent/plugins")
    assert shorthand("owner/repo.git/memory/honcho") == GitSource("https://github.com/owner/repo", "memory/honcho")
    assert shorthand("owner/repo/") == GitSource("https://github.com/owner/repo")
    for not_it in ("web", "./web", "owner/../etc", "-owner/repo", "git+https://x/y.git@abc", "https://github.com/o/r",
                   "owner/repo@main"):
        assert shorthand(not_it) is None, not_it
    monkeypatch.chdir(tmp_path)
    (tmp_path / "owner" / "repo").mkdir(parents=True)
    assert shorthand("owner/repo") is None  # a folder of that name wins
    assert GitSource("https://github.com/o/r", "sub").at("a" * 40) == f"git+https://github.com/o/r@{'a' * 40}#subdirectory=sub"


def test_the_shorthand_needs_a_ref_and_a_ref_needs_a_git_source(tmp_path: Path) -> None:
    with pytest.raises(InstallError, match="--ref REF"):
        pinned_source("owner/repo", None)
    with pytest.raises(InstallError, match="is not a git source"):
        pinned_source(str(tmp_path), "main")
    with pytest.raises(InstallError, match="one too many"):
        pinned_source(f"git+https://example.org/r.git@{'a' * 40}", "main")
    assert pinned_source(str(tmp_path), None) == str(tmp_path)


def test_refs_resolve_to_their_commits(tmp_path: Path) -> None:
    repo, first = plugin_repo(tmp_path, "web", [])
    git(repo, "tag", "-a", "v1", "-m", "first")  # annotated: peeled to its commit
    second = recommit(repo, "web", ["tinyhttp"])
    git(repo, "tag", "light")
    url = repo.as_uri()
    assert (resolve_ref(url, "v1"), resolve_ref(url, "main"), resolve_ref(url, "light")) == (first, second, second)
    assert resolve_ref(url, first) == first
    with pytest.raises(InstallError, match="no branch or tag"):
        resolve_ref(url, "nope")


def test_install_ref_pins_a_local_repository_and_its_subdirectory(tmp_path: Path, home: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    mono = tmp_path / "mono.git"
    (mono / "plugins" / "web").mkdir(parents=True)
    (mono / "plugins" / "web" / "plugin.yaml").write_text(json.dumps({"name": "web", "pip_dependencies": []}))
    (mono / "plugins" / "web" / "__init__.py").write_text("")
    git(mono.parent, "init", "--quiet", str(mono))
    git(mono, "add", ".")
    git(mono, "commit", "--quiet", "-m", "one")
    git(mono, "tag", "v1")
    commit = git(mono, "rev-parse", "HEAD")
    assert hermes(["plugins", "install", f"git+{mono.as_uri()}#subdirectory=plugins/web", "--ref", "v1",
                   "--home", str(home)]) == 0
    record = installed_records(home)["web"]
    assert (record["source"], record["commit"], record["subdir"]) == ("git", commit, "plugins/web")
    assert (home / "plugins" / "web" / "plugin.yaml").is_file()
    capsys.readouterr()
    assert hermes(["plugins", "install", "owner/repo", "--home", str(home)]) != 0
    assert "--ref REF" in capsys.readouterr().err
