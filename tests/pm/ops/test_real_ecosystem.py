"""A catalog in the real Hermes shape (one YAML per entry, the real ``removed.yaml``) with a
``kind: exclusive`` provider: ``hermes update`` installs and prepares it, ``hermes plugins list``
shows it ready, and the kill list refuses an entry by its repository (issue 36)."""

from __future__ import annotations

import json
from pathlib import Path

from agent.cli import main

from .conftest import git, plugin


def _repo(tmp_path: Path, name: str, kind: str | None, requirements: list[str]) -> tuple[Path, str]:
    repo = tmp_path / f"{name}-repo"
    repo.mkdir()
    git("init", "--quiet", cwd=repo)
    plugin(repo / "providers", name, requirements, kind=kind)
    git("add", ".", cwd=repo)
    git("commit", "--quiet", "-m", name, cwd=repo)
    return repo, git("rev-parse", "HEAD", cwd=repo)


def test_a_real_shaped_catalog_carries_over(env, capsys):
    soul_repo, soul_sha = _repo(env, "soullink", "exclusive", ["extra-lib>=1"])
    gone_repo, gone_sha = _repo(env, "fading", None, [])
    catalog = env / "catalog.d"
    catalog.mkdir()
    (catalog / "soullink.yaml").write_text(f"name: soullink\nrepo: file://{soul_repo}\nsha: {soul_sha}\n"
                                           "subdir: providers/soullink\nkind: exclusive\ntier: community\n")
    (catalog / "fading-tools.yaml").write_text(f"name: fading-tools\nrepo: file://{gone_repo}\nsha: {gone_sha}\n"
                                               "subdir: providers/fading\n")
    (catalog / "removed.yaml").write_text(f"removed:\n  - repo: file://{gone_repo}.git/\n    reason: abandoned\n"
                                          "    date: 2025-05-01\n")
    home = env / "home"
    (home / "plugins").mkdir(parents=True)
    (home / "config.yaml").write_text(f"memory:\n  provider: soullink\npm:\n  catalog: {catalog}\n")
    assert main(["update", "--home", str(home)]) == 0, capsys.readouterr().err
    said = capsys.readouterr().err
    assert "is installed" not in said and "WITHOUT its memory" not in said, said
    assert (home / "plugins" / "soullink" / "plugin.yaml").is_file()
    assert main(["plugins", "list", "--home", str(home), "--json"]) == 0
    listed = {p["name"]: p for p in json.loads(capsys.readouterr().out)["plugins"]}
    assert (listed["soullink"]["memory_provider"], listed["soullink"]["status"], listed["soullink"]["ready"]) == (
        True, "member", True)
    assert main(["plugins", "install", "fading-tools", "--home", str(home)]) == 1
    assert (f"{catalog}: plugin 'fading-tools' was removed from the catalog (reason: abandoned) and cannot be "
            "installed") in capsys.readouterr().err
    assert not (home / "plugins" / "fading-tools").exists()
