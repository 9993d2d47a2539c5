"""The built wheel, installed as users install it: into a fresh venv outside the checkout.

``uv build`` makes the sdist and, from it, the wheel; ``uv pip install`` puts the wheel into a
venv under a temporary folder; the commands then run from another temporary folder with no
``PYTHONPATH`` and no ``HERMES_BUNDLED_PLUGINS``, so nothing of the checkout can leak in. The
bundled memory providers and every data file must come from the wheel itself (issue 14,
finding 1). uv's cache makes a rerun take seconds; the first run may fetch setuptools and pm's
own requirements from the default index.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import uv

from pm.base.files import read_text
from pm.base.tomlfile import load as load_toml
from pm.testing import NO_TOOL_FILES, add_plugin, index_from_spec, make_home

ROOT = Path(__file__).resolve().parents[2]
UV = uv.find_uv_bin()
BUNDLED = sorted(p.name for p in (ROOT / "plugins" / "memory").iterdir() if (p / "__init__.py").is_file())


def _run(argv: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=240, **kwargs)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    done = _run([UV, "build", "--quiet", "--out-dir", str(out), str(ROOT)])
    assert done.returncode == 0, done.stderr
    (wheel,) = out.glob("hermes_pm-*.whl")
    return wheel


@pytest.fixture(scope="module")
def venv(built: Path, tmp_path_factory) -> Path:
    venv = tmp_path_factory.mktemp("venv") / "v"
    for argv in (
        [UV, "venv", "--quiet", "--python", sys.executable, str(venv)],
        [UV, "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"), str(built)],
    ):
        done = _run(argv)
        assert done.returncode == 0, done.stderr
    return venv


def _env(home: Path, tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HERMES_", "PYTHON", "UV_INDEX", "PIP_", "VIRTUAL_ENV"))}
    return {**env, **NO_TOOL_FILES, "HERMES_HOME": str(home), "HERMES_PM_CACHE_DIR": str(tmp / "cache")}


def test_the_wheel_carries_the_bundled_providers_and_every_data_file(built: Path):
    names = set(zipfile.ZipFile(built).namelist())
    for name in BUNDLED:
        assert f"pm/data/plugins/memory/{name}/__init__.py" in names
        assert f"pm/data/plugins/memory/{name}/plugin.yaml" in names
    tracked = _run(["git", "ls-files", "pm", "agent"], cwd=ROOT).stdout.split()
    data = [p for p in tracked if not p.endswith(".py")]
    assert data and not [p for p in data if p not in names]
    assert "agent/__main__.py" in names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


def test_installed_wheel_scans_reports_memory_and_resolves_from_outside_the_checkout(venv, tmp_path):
    bin_dir = venv / "bin"
    home = make_home(tmp_path / "home", config={
        "memory": {"provider": "sqlite_fts"},
        "plugins": {"enabled": ["maps", "jsonl_journal"]},
    })
    add_plugin(home / "plugins", "maps", style="manifest", dependencies=["alpha>=1"])
    (tmp_path / "core.toml").write_text("[project]\nname = 'host'\ndependencies = []\n")
    (tmp_path / "lock.txt").write_text("")
    env, cwd = _env(home, tmp_path), tmp_path

    scan = _run([str(bin_dir / "hermes"), "pm", "scan", "--json"], env=env, cwd=cwd)
    assert scan.returncode == 0, scan.stderr
    plugins = {p["name"]: p for p in json.loads(scan.stdout)["plugins"]}
    assert {"sqlite_fts", "jsonl_journal", "markdown_notes", "sidecar_echo", "maps"} <= set(plugins)
    assert plugins["jsonl_journal"]["source"] == "bundled"
    assert str(venv) in plugins["jsonl_journal"]["root"]

    status = _run([str(bin_dir / "hermes"), "memory", "status"], env=env, cwd=cwd)
    assert status.returncode == 0, status.stderr
    assert "sqlite_fts" in status.stdout and "not installed" not in status.stdout + status.stderr

    version = _run([str(bin_dir / "hermes"), "--version"], env=env, cwd=cwd)
    declared = load_toml(ROOT / "pyproject.toml", read_text(ROOT / "pyproject.toml").text)["project"]["version"]
    assert (version.returncode, version.stdout) == (0, f"hermes (hermes-pm {declared})\n")

    as_module = _run([str(bin_dir / "python"), "-m", "agent", "pm", "status"], env=env, cwd=cwd)
    assert as_module.returncode == 0, as_module.stderr

    spec = {"alpha": {"1.0": [], "2.0": []}, "pyyaml": {"6.0.2": []}}
    with index_from_spec(tmp_path / "dists", spec) as index:
        resolve = _run([str(bin_dir / "hermes"), "pm", "resolve", "--json", "--index-url", index.url,
                        "--core", str(tmp_path / "core.toml"), "--core-lock", str(tmp_path / "lock.txt")],
                       env=env, cwd=cwd)
    assert resolve.returncode == 0, resolve.stderr
    pins = {p["name"]: p["version"] for p in json.loads(resolve.stdout)["resolution"]["packages"]}
    assert pins == {"alpha": "2.0", "pyyaml": "6.0.2"}
