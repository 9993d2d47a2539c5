"""Exports that work first time (issue 24, item 3): what ``hermes pm export`` writes from a real
home is installed by real uv and real pip into fresh virtual environments, for each kind of place
pm resolved on — a simple index on 127.0.0.1, the same index as a static folder named by a
``file://`` index URL, a find-links folder given as a ``file://`` URL with ``--no-index``, and the
PEP 751 lock — and what they install is exactly the lock's pins.

The tools run with no setting of this machine (``PIP_FIND_LINKS``, ``PIP_INDEX_URL``, config
files) and with every proxy variable pointing at a closed port on 127.0.0.1, 127.0.0.1 itself
exempt: a tool that asks the public index fails loudly instead of reaching it. The bugs this
catches: a lock named ``hermes-pylock.toml`` (refused by uv), and a requirements file without its
index lines (uv and pip then go to the public index)."""

from __future__ import annotations

import hashlib
import html
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from pm.cli import main
from pm.testing import IndexFile, LocalIndex, add_plugin, build_packages, make_home
from pm.testing.environ import NO_TOOL_FILES

SPEC = {
    "alpha": {"1.0": ["beta>=1"], "2.0": ["beta>=2"]},
    "beta": {"1.0": [], "2.0": []},
    "hostlib": {"1.0": [], "1.1": []},
}
PINS = {"alpha": "2.0", "beta": "2.0", "hostlib": "1.0"}
#: Where every proxy variable points: a closed port, so the public index is never reached.
NOWHERE = "http://127.0.0.1:9"
PUBLIC = "pypi.org"


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> list[IndexFile]:
    return build_packages(tmp_path_factory.mktemp("wheels"), SPEC)


@pytest.fixture(scope="module")
def index(files):
    with LocalIndex(files) as served:
        yield served


@pytest.fixture(scope="module")
def static_index(files, tmp_path_factory) -> str:
    """The same files as a static simple index in a folder (``simple/<name>/index.html`` linking
    to ``files/``, each with its sha256), as pip, uv and pm read a ``file://`` index URL."""
    root = tmp_path_factory.mktemp("static")
    (root / "files").mkdir()
    for file in files:
        shutil.copy(file.path, root / "files" / file.filename)
        digest = hashlib.sha256(file.path.read_bytes()).hexdigest()
        page = root / "simple" / file.filename.split("-")[0] / "index.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        with page.open("a") as links:
            links.write(f'<a href="../../files/{html.escape(file.filename)}#sha256={digest}">{file.filename}</a>\n')
    return f"{root.as_uri()}/simple/"


@pytest.fixture
def home(tmp_path: Path, monkeypatch) -> list[str]:
    """A home whose plugin needs alpha, core pinned at hostlib 1.0; pm's arguments, no place yet.
    No index or find-links setting of this machine reaches pm either."""
    for variable in [v for v in os.environ if v.startswith(("UV_", "PIP_", "HERMES_PM_"))]:
        monkeypatch.delenv(variable)
    for variable, value in NO_TOOL_FILES.items():  # nor the machine's uv.toml and pip.conf
        monkeypatch.setenv(variable, value)
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "no-bundled"))
    home = make_home(tmp_path / "home", config={"plugins": {"enabled": ["maps"]}})
    add_plugin(home / "plugins", "maps", style="manifest", dependencies=["alpha"])
    (tmp_path / "core.toml").write_text("[project]\nname = 'host'\ndependencies = ['hostlib']\n")
    (tmp_path / "lock.txt").write_text("hostlib==1.0\n")
    return ["--home", str(home), "--core", str(tmp_path / "core.toml"), "--core-lock", str(tmp_path / "lock.txt")]


def tool_env(tmp_path: Path) -> dict[str, str]:
    """This process's environment without uv's, pip's or a venv's settings, no user config files,
    private caches, and no way out but 127.0.0.1."""
    env = {k: v for k, v in os.environ.items()
           if not k.upper().startswith(("UV_", "PIP_", "VIRTUAL_ENV", "CONDA_", "PYTHON"))
           and k.lower() not in ("http_proxy", "https_proxy", "all_proxy", "no_proxy")}
    env.update(UV_NO_CONFIG="1", UV_PYTHON_DOWNLOADS="never", UV_CACHE_DIR=str(tmp_path / "uv-cache"),
               PIP_CONFIG_FILE=os.devnull, PIP_CACHE_DIR=str(tmp_path / "pip-cache"), PIP_NO_INPUT="1",
               PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_RETRIES="0", UV_HTTP_RETRIES="0", NO_COLOR="1")
    for variable in ("http_proxy", "https_proxy", "all_proxy"):
        env[variable] = env[variable.upper()] = NOWHERE
    env["no_proxy"] = env["NO_PROXY"] = "127.0.0.1,localhost"
    return env


def fresh_venv(uv_bin: str, tmp_path: Path) -> Path:
    """An empty virtual environment (no pip in it: pip installs into it with ``--python``)."""
    venv = tmp_path / "venv"
    subprocess.run([uv_bin, "venv", "--quiet", "--python", sys.executable, str(venv)],
                   env=tool_env(tmp_path), check=True, capture_output=True)
    return venv / "bin" / "python"


def install(tool: str, uv_bin: str, python: Path, file: Path, tmp_path: Path,
            **settings: str) -> subprocess.CompletedProcess[str]:
    """Install ``file`` as the docs say (docs/nix.md section 6), with uv or with pip (``settings``:
    more environment)."""
    hashes = [] if file.suffix == ".toml" else ["--require-hashes"]
    preview = ["--preview-features", "pylock"] if file.suffix == ".toml" else []
    argv = ([uv_bin, "pip", "install", "--python", str(python), *preview, *hashes, "-r", str(file)] if tool == "uv"
            else [sys.executable, "-m", "pip", "--python", str(python), "install", *hashes, "-r", str(file)])
    return subprocess.run(argv, env={**tool_env(tmp_path), **settings}, capture_output=True, text=True, timeout=300)


def installed(python: Path, tmp_path: Path) -> dict[str, str]:
    """What the venv holds, by its own interpreter (pip itself and setuptools left out)."""
    code = "import json, importlib.metadata as m; print(json.dumps({d.name: d.version for d in m.distributions()}))"
    done = subprocess.run([str(python), "-I", "-c", code], env=tool_env(tmp_path), check=True, capture_output=True, text=True)
    return {k: v for k, v in json.loads(done.stdout).items() if k not in ("pip", "setuptools", "wheel")}


def export(argv: list[str], fmt: str, out: Path, capsys) -> Path:
    assert main(["export", "--format", fmt, "-o", str(out), *argv]) == 0, capsys.readouterr()
    capsys.readouterr()
    return out


def pins_of(text: str) -> dict[str, str]:
    """The pins a requirements export lists (``name==version --hash=…`` lines)."""
    return dict(line.split(" ")[0].split("==") for line in text.splitlines()
                if line and not line.startswith(("#", " ", "-")))


def places(kind: str, index: LocalIndex, files: list[IndexFile], static: str = "") -> list[str]:
    """pm's arguments for each kind of place: the served index, the static index as a file://
    URL, or only a folder (as a file:// URL) with no index."""
    if kind in ("index", "file-index"):
        return ["--index-url", index.url if kind == "index" else static]
    return ["--no-index", "--find-links", files[0].path.parent.as_uri()]


@pytest.mark.parametrize("tool", ["uv", "pip"])
@pytest.mark.parametrize("kind", ["index", "file-index", "folder"])
def test_the_requirements_export_installs_the_pins_from_where_pm_resolved(
        kind, tool, index, files, static_index, home, capsys, uv_bin, tmp_path):
    where = places(kind, index, files, static_index)
    requirements = export([*home, *where], "requirements", tmp_path / "requirements.txt", capsys)
    text = requirements.read_text()
    assert pins_of(text) == PINS
    expected = ([f"--index-url {where[1]}"] if kind != "folder"
                else ["--no-index", f"--find-links {files[0].path.parent.as_uri()}"])
    assert [line for line in text.splitlines() if line.startswith("--")] == expected
    index.reset_log()
    python = fresh_venv(uv_bin, tmp_path)

    done = install(tool, uv_bin, python, requirements, tmp_path)

    assert done.returncode == 0, done.stderr
    assert installed(python, tmp_path) == PINS
    asked = [path for _, path in index.requests]
    assert (any(path.endswith(".whl") for path in asked) if kind == "index" else asked == []), asked


@pytest.mark.parametrize("tool", ["uv", "pip"])
def test_the_pylock_export_installs_exactly_its_pins(tool, index, files, home, capsys, uv_bin, tmp_path):
    lock = export([*home, *places("index", index, files)], "pylock", tmp_path / "pylock.hermes.toml", capsys)
    pinned = {p["name"]: p["version"] for p in tomllib.loads(lock.read_text())["packages"]}
    assert pinned == PINS
    python = fresh_venv(uv_bin, tmp_path)

    done = install(tool, uv_bin, python, lock, tmp_path)

    assert done.returncode == 0, done.stderr
    assert installed(python, tmp_path) == pinned


def test_the_old_lock_name_is_refused_by_uv_and_export_warns_about_it(index, files, home, capsys, uv_bin, tmp_path):
    """docs/nix.md said ``-o hermes-pylock.toml`` then ``uv pip install -r hermes-pylock.toml``."""
    old = tmp_path / "hermes-pylock.toml"
    assert main(["export", "--format", "pylock", "-o", str(old), *home, *places("index", index, files)]) == 0
    assert capsys.readouterr().err.splitlines()[1] == (
        "warning: hermes-pylock.toml is not a PEP 751 lock name, so `uv pip install -r` and `pip install -r` "
        "refuse it; name it pylock.toml or pylock.<name>.toml (e.g. pylock.hermes.toml)")
    done = install("uv", uv_bin, fresh_venv(uv_bin, tmp_path), old, tmp_path)
    assert done.returncode != 0 and "not a valid PEP 751 filename" in done.stderr, done.stderr

    for name in ("pylock.toml", "pylock.hermes.toml"):
        assert main(["export", "--format", "pylock", "-o", str(tmp_path / name), *home,
                     *places("index", index, files)]) == 0
        assert "warning" not in capsys.readouterr().err


@pytest.mark.parametrize("tool", ["uv", "pip"])
def test_without_its_index_lines_a_requirements_file_goes_to_the_public_index(
        tool, index, files, home, capsys, uv_bin, tmp_path):
    """The export before this issue: pins and hashes only. The tools then ask the public index
    (here stopped at the closed proxy) instead of the one pm resolved on."""
    requirements = export([*home, *places("index", index, files)], "requirements", tmp_path / "requirements.txt", capsys)
    bare = tmp_path / "bare.txt"
    bare.write_text("".join(line for line in requirements.read_text().splitlines(keepends=True)
                            if not line.startswith("--")))
    index.reset_log()

    done = install(tool, uv_bin, fresh_venv(uv_bin, tmp_path), bare, tmp_path, PIP_VERBOSE="2")

    assert done.returncode != 0
    assert f"https://{PUBLIC}/simple/" in done.stderr + done.stdout, done.stderr
    assert index.requests == []
