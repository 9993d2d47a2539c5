"""A repository shared by many catalog entries is fetched once per commit (issue 35, scale): the
gate clones it once, whatever number of entries live in it, and each entry reads only its own
subdir's declaration. Counted from git's own trace (``GIT_TRACE2_EVENT``: one event line per
git process, with its argv), on real git repositories."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path

from pm.cli import main
from pm.testing import index_from_spec, make_home
from pm.testing.catalogs import GIT


def _monorepo(root: Path, plugins: dict[str, list[str]]) -> tuple[Path, str]:
    repo = root / "plugins.git"
    for name, requirements in plugins.items():
        (repo / name).mkdir(parents=True)
        (repo / name / "plugin.yaml").write_text(json.dumps({"name": name, "pip_dependencies": requirements}))
        (repo / name / "__init__.py").write_text("")
    for argv in (["init", "--quiet"], ["add", "."], ["commit", "--quiet", "-m", "plugins"]):
        subprocess.run([*GIT, *argv], cwd=repo, check=True)
    head = subprocess.run([*GIT, "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True, text=True)
    return repo, head.stdout.strip()


def _clones(trace: Path) -> list[str]:
    """The URL of every ``git clone`` git's trace saw."""
    urls = []
    for line in trace.read_text().splitlines():
        event = json.loads(line)
        if event.get("event") == "start" and event["argv"][1:2] == ["clone"]:
            urls.append(event["argv"][-2])
    return urls


def test_entries_sharing_a_repository_and_commit_clone_it_once(tmp_path, monkeypatch, capsys) -> None:
    plugins = {f"p{i}": [f"lib{i % 2}=={1 + i % 2}.0"] for i in range(6)}
    repo, commit = _monorepo(tmp_path, plugins)
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    for name in plugins:
        (catalog / f"{name}.yaml").write_text(json.dumps({"name": name, "repo": f"file://{repo}", "sha": commit,
                                                          "subdir": name}))
    other, other_commit = _monorepo(tmp_path / "second", {"q": ["lib0"]})
    (catalog / "q.yaml").write_text(json.dumps({"name": "q", "repo": f"file://{other}", "sha": other_commit,
                                                "subdir": "q"}))
    trace = tmp_path / "trace.jsonl"
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "none"))
    (tmp_path / "core.toml").write_text("[project]\nname = 'host'\ndependencies = []\n")
    (tmp_path / "lock.txt").write_text("")
    with index_from_spec(tmp_path / "dists", {"lib0": {"1.0": [], "2.0": []}, "lib1": {"1.0": [], "2.0": []}}) as index:
        code = main(["catalog", "check", str(catalog), "--home", str(make_home(tmp_path / "home")), "--index-url",
                     index.url, "--core", str(tmp_path / "core.toml"), "--core-lock", str(tmp_path / "lock.txt"),
                     "--json"])
    assert code == 0, capsys.readouterr()
    report = json.loads(capsys.readouterr().out)
    # one clone per repository, not one per entry
    assert Counter(_clones(trace)) == {f"file://{repo}": 1, f"file://{other}": 1}
    for i, name in enumerate(plugins):  # each entry read its own subdir's declaration
        assert report["requirements"][name] == [f"lib{i % 2}=={1 + i % 2}.0"]
    assert report["requirements"]["q"] == ["lib0"]
