"""Issue 15 finding 18: `hermes memory status` imported the provider and wrote `__pycache__`
into `<home>/plugins/<provider>/` — the one command that changed the plugins tree."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from agent.testing import ROOT


def test_memory_status_writes_no_bytecode_in_the_plugins_tree(tmp_path: Path) -> None:
    home = tmp_path / "home"
    root = home / "plugins" / "mynotes"
    shutil.copytree(ROOT / "plugins/memory/markdown_notes", root, ignore=shutil.ignore_patterns("__pycache__"))
    manifest = (root / "plugin.yaml").read_text()
    manifest = manifest.replace("name: markdown_notes", "name: mynotes")
    manifest = manifest.replace("pip_dependencies:\n  - packaging>=22", "pip_dependencies: []")
    (root / "plugin.yaml").write_text(manifest)
    for path in root.glob("*.py"):
        path.write_text(path.read_text().replace('"markdown_notes"', '"mynotes"'))
    (home / "config.yaml").write_text("memory:\n  provider: mynotes\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    done = subprocess.run([sys.executable, "-m", "agent.cli", "memory", "status", "--home", str(home)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "available:       yes" in done.stdout
    assert sorted(p.relative_to(home) for p in home.rglob("__pycache__")) == []
