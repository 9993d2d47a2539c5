"""Generated git repositories with links: a plugin installed from git holds no link that leads
outside it, whatever links its repository carries — the install is refused naming the link, or
every installed link resolves inside the plugin."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pm.env.plugin_install import InstallError, install
from pm.inputs.catalog import load_catalog

_PARTS = st.sampled_from(["..", ".", "a", "b", "plugin.yaml", "sub", "/", "/etc", "x y", "l1", "l2"])
_TARGETS = st.lists(_PARTS, min_size=1, max_size=5).map(lambda parts: os.path.join(*parts))
_LINKS = st.dictionaries(st.sampled_from(["l1", "sub/l2", "sub/deeper/l3"]), _TARGETS, max_size=3)


def _git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                          capture_output=True, text=True)
    return done.stdout.strip()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_LINKS)
def test_no_installed_link_leads_outside_the_plugin(links: dict[str, str]) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch)
        repo = base / "repo"
        (repo / "sub" / "deeper").mkdir(parents=True)
        (repo / "plugin.yaml").write_text("name: linky\npip_dependencies: []\n")
        for where, target in links.items():
            (repo / where).symlink_to(target)
        _git("init", "--quiet", cwd=repo)
        _git("add", "-A", cwd=repo)
        _git("commit", "--quiet", "-m", "x", cwd=repo)
        commit = _git("rev-parse", "HEAD", cwd=repo)
        home = base / "home"
        (home / "plugins").mkdir(parents=True)
        try:
            installed = install(home, f"git+{repo}@{commit}", load_catalog(None))
        except InstallError as refused:
            assert "outside the plugin; refused" in str(refused), refused
            assert not (home / "plugins" / "linky").exists()
            return
        top = installed.root.resolve()
        for folder, names, files in os.walk(installed.root):
            for name in (*names, *files):
                path = Path(folder) / name
                if path.is_symlink():
                    target = os.readlink(path)
                    assert not os.path.isabs(target) and (path.parent / target).resolve(strict=False).is_relative_to(top)
