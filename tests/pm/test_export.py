"""`hermes pm export`: a PEP 751 lock that ``packaging.pylock`` accepts and uv installs, and hashed
pins that ``uv pip install --require-hashes`` accepts — each checked against the real files."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.pylock import Pylock

from pm.cli import main
from pm.testing import IndexFile, LocalIndex, add_plugin, build_packages, make_home

SPEC = {
    "alpha": {
        "1.0": ["beta>=1"],
        "2.0": {"requires": ["beta>=2", "Gamma.Pkg[fast]"], "upload_time": "2024-05-01T12:00:00Z"},
    },
    "beta": {
        "1.0": [],
        "2.0": {"requires": [], "upload_time": "2024-04-01T00:00:00Z"},
        "3.0": {"requires": [], "yanked": "broken"},
    },
    "Gamma.Pkg": {"0.5": {"requires": [], "extras": {"fast": ["delta>=1"]}, "sdist": True}},
    "delta": {"1.0": [], "1.2": []},
    "hostlib": {"1.0": [], "1.1": []},
}
#: The resolution of the home below, with who requires what (the origins export must carry).
PINS = {"alpha": "2.0", "beta": "2.0", "delta": "1.2", "gamma-pkg": "0.5", "hostlib": "1.0"}


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, IndexFile]:
    """Every file the index serves, by filename."""
    return {f.filename: f for f in build_packages(tmp_path_factory.mktemp("dists"), SPEC)}


@pytest.fixture(scope="module")
def index(files):
    with LocalIndex(files.values()) as served:
        yield served


@pytest.fixture
def argv(index: LocalIndex, tmp_path: Path, monkeypatch) -> list[str]:
    """A home with two plugins (manifest and pyproject) plus core; the common pm arguments."""
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "no-bundled"))
    home = make_home(tmp_path / "home", config={"plugins": {"enabled": ["maps", "notes"]}})
    add_plugin(home / "plugins", "maps", style="manifest", dependencies=["alpha"])
    add_plugin(home / "plugins", "notes", style="pyproject", dependencies=["beta<3", "delta"])
    (tmp_path / "core.toml").write_text("[project]\nname = 'host'\ndependencies = ['hostlib']\n")
    (tmp_path / "lock.txt").write_text("hostlib==1.0\n")
    return [
        "--home",
        str(home),
        "--index-url",
        index.url,
        "--core",
        str(tmp_path / "core.toml"),
        "--core-lock",
        str(tmp_path / "lock.txt"),
    ]


def uv_env(tmp_path: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("UV_", "PIP_")) and k != "VIRTUAL_ENV"
    }
    env.update(
        UV_NO_CONFIG="1",
        UV_PYTHON_DOWNLOADS="never",
        UV_CACHE_DIR=str(tmp_path / "uv-cache"),
        NO_COLOR="1",
    )
    return env


def fresh_venv(uv_bin: str, tmp_path: Path) -> Path:
    venv = tmp_path / "venv"
    subprocess.run(
        [uv_bin, "venv", "--quiet", "--python", sys.executable, str(venv)],
        env=uv_env(tmp_path),
        check=True,
        capture_output=True,
    )
    return venv / "bin" / "python"


def installed(uv_bin: str, python: Path, tmp_path: Path) -> dict[str, str]:
    done = subprocess.run(
        [uv_bin, "pip", "list", "--python", str(python), "--format", "json"],
        env=uv_env(tmp_path),
        check=True,
        capture_output=True,
        text=True,
    )
    return {p["name"]: p["version"] for p in json.loads(done.stdout)}


def export(argv: list[str], fmt: str, capsys) -> str:
    code = main(["export", "--format", fmt, *argv])
    out = capsys.readouterr().out
    assert code == 0, out
    return out


def test_pylock_validates_and_lists_every_file_with_url_sha256_and_origins(
    index, files, argv, capsys, tmp_path
):
    text = export(argv, "pylock", capsys)
    lock = Pylock.from_dict(tomllib.loads(text))

    assert str(lock.lock_version) == "1.0" and lock.created_by == "hermes-pm"
    assert {p.name: str(p.version) for p in lock.packages} == PINS
    for package in lock.packages:
        assert package.sdist is None and len(package.wheels) == 1, package
        wheel = package.wheels[0]
        data = files[wheel.filename].path.read_bytes()
        assert wheel.url == f"{index.root}/files/{wheel.filename}"
        assert wheel.hashes == {"sha256": hashlib.sha256(data).hexdigest()}
        assert wheel.size == len(data)
    selected = {package.name for package, _ in lock.select()}
    assert selected == set(PINS), (
        "the lock's environments and requires-python admit this interpreter"
    )

    maps, notes = "plugin 'maps'", "plugin 'notes'"  # by name: no path of this machine
    origins = {p.name: p.tool["hermes-pm"]["required-by"] for p in lock.packages}
    assert origins == {
        "alpha": [maps],
        "beta": [maps, notes],
        "delta": [maps, notes],
        "gamma-pkg": [maps],
        "hostlib": ["core"],
    }
    receipt = json.loads((tmp_path / "home/pm/receipts/latest.json").read_text())
    assert lock.tool["hermes-pm"]["fingerprint"] == receipt["inputs"]["fingerprint"]


def test_pylock_keeps_dependencies_and_no_datetimes(argv, capsys):
    text = export(argv, "pylock", capsys)
    lock = Pylock.from_dict(tomllib.loads(text))
    by_name = {p.name: p for p in lock.packages}
    assert all(p.wheels[0].upload_time is None for p in lock.packages)  # Nix 2.8's fromTOML has no dates
    assert "upload-time" not in text
    assert by_name["alpha"].dependencies == [{"name": "beta"}, {"name": "gamma-pkg"}]


def test_uv_installs_exactly_the_pinned_versions_from_the_pylock(argv, capsys, uv_bin, tmp_path):
    lock_file = tmp_path / "pylock.toml"
    assert main(["export", "--format", "pylock", "--output", str(lock_file), *argv]) == 0
    assert capsys.readouterr().err.splitlines()[0] == f"wrote {lock_file} (5 packages)"
    python = fresh_venv(uv_bin, tmp_path)
    subprocess.run(
        [
            uv_bin,
            "pip",
            "install",
            "--python",
            str(python),
            "--preview-features",
            "pylock",
            "-r",
            str(lock_file),
        ],
        env=uv_env(tmp_path),
        check=True,
        capture_output=True,
    )
    assert installed(uv_bin, python, tmp_path) == PINS


def test_requirements_install_with_require_hashes(index, argv, capsys, uv_bin, tmp_path):
    text = export(argv, "requirements", capsys)
    pins = [
        line.split(" ")[0] for line in text.splitlines() if line and not line.startswith(("#", " ", "-"))
    ]
    assert pins == [f"{name}=={version}" for name, version in PINS.items()]
    requirements = tmp_path / "requirements.txt"
    requirements.write_text(text)
    python = fresh_venv(uv_bin, tmp_path)
    subprocess.run(
        [
            uv_bin,
            "pip",
            "install",
            "--python",
            str(python),
            "--require-hashes",
            "--index-url",
            index.url,
            "-r",
            str(requirements),
        ],
        env=uv_env(tmp_path),
        check=True,
        capture_output=True,
    )
    assert installed(uv_bin, python, tmp_path) == PINS


def test_requirements_hashes_are_enforced(index, files, argv, capsys, uv_bin, tmp_path):
    """The hashes are the files' own: one wrong digit and uv refuses to install."""
    text = export(argv, "requirements", capsys)
    digest = hashlib.sha256(files["delta-1.2-py3-none-any.whl"].path.read_bytes()).hexdigest()
    assert f"delta==1.2 --hash=sha256:{digest}" in text
    tampered = digest[:-1] + ("0" if digest[-1] != "0" else "1")
    (tmp_path / "requirements.txt").write_text(text.replace(digest, tampered))
    python = fresh_venv(uv_bin, tmp_path)
    done = subprocess.run(
        [
            uv_bin,
            "pip",
            "install",
            "--python",
            str(python),
            "--require-hashes",
            "--index-url",
            index.url,
            "-r",
            str(tmp_path / "requirements.txt"),
        ],
        env=uv_env(tmp_path),
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0 and "hash" in done.stderr.lower(), done.stderr


def test_export_of_a_conflict_exits_3_and_writes_no_file(argv, capsys, tmp_path):
    plugins = tmp_path / "home" / "plugins"
    add_plugin(plugins, "old", style="manifest", dependencies=["hostlib>1.0"])
    (tmp_path / "home" / "config.yaml").write_text("plugins:\n  enabled: [maps, notes, old]\n")
    out = tmp_path / "pylock.toml"
    assert main(["export", "--format", "pylock", "--output", str(out), *argv]) == 3
    assert not out.exists()
    assert capsys.readouterr().out == ""


def _odd_plugin(tmp_path: Path, name: str) -> None:
    """Make ``name`` (a legal folder name with an odd character) the home's only plugin."""
    add_plugin(tmp_path / "home" / "plugins", name, style="manifest", dependencies=["delta"])
    (tmp_path / "home" / "config.yaml").write_text(json.dumps({"plugins": {"enabled": [name]}}))


def test_pylock_stays_valid_toml_whatever_the_plugin_folder_is_called(argv, capsys, tmp_path):
    """TOML forbids a raw DEL (U+007F) in a string, which JSON's escaping leaves as it is."""
    _odd_plugin(tmp_path, "odd\x7fname")
    lock = Pylock.from_dict(tomllib.loads(export(argv, "pylock", capsys)))
    assert [p.name for p in lock.packages] == ["delta", "hostlib"]


def test_requirements_origins_cannot_inject_lines(argv, capsys, tmp_path):
    """A newline in a plugin folder name must not start a line (an option) of the pins file."""
    _odd_plugin(tmp_path, "odd\n--extra-index-url=http:evil.example #")
    text = export(argv, "requirements", capsys)
    options = [line for line in text.splitlines() if line.startswith("-")]
    assert len(options) == 1 and options[0].startswith("--index-url http://127.0.0.1:"), text


@pytest.mark.parametrize(("target", "reason"), [
    ("missing/pylock.toml", "the folder {tmp}/missing does not exist"),
    ("", "it is a folder; give a file name"),
    ("/proc/version", "Permission denied"),
])
def test_export_to_a_place_it_cannot_write_is_a_clean_error(argv, capsys, tmp_path, target, reason):
    """Issue 15 finding 11: a missing folder, a folder or /proc/version was a traceback."""
    out = str(tmp_path / target) if not target.startswith("/") else target
    if target.startswith("/proc") and not Path(target).exists():
        pytest.skip("no /proc here")
    assert main(["export", "--format", "pylock", "--output", out, *argv]) == 1
    err = capsys.readouterr().err
    assert f"error: cannot write {out}: " in err
    assert reason.format(tmp=tmp_path) in err or target.startswith("/proc")
    assert "Traceback" not in err


def test_one_resolution_one_pylock_with_or_without_selected_and_no_machine_paths(argv, capsys, tmp_path):
    resolved = export(argv, "pylock", capsys)
    assert main(["sync", *argv]) == 0
    capsys.readouterr()
    selected = export([*argv, "--selected"], "pylock", capsys)
    assert selected == resolved
    assert str(tmp_path) not in resolved and "/tmp" not in resolved
    assert tomllib.loads(resolved)["tool"]["hermes-pm"]["members"][0]["file"] in (
        "maps/plugin.yaml", "notes/pyproject.toml")


def test_requirements_name_the_index_they_were_resolved_on(index, argv, capsys):
    lines = export(argv, "requirements", capsys).splitlines()
    assert lines[1] == f"--index-url {index.url}"
