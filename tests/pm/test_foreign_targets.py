"""Resolving for another system or Python (issue 23, "Targets"): ``--platform`` (uv's
``--python-platform`` names) and ``--python-version``. On an index of wheels tagged for several
systems and Pythons, with markers that hold on some systems only, pm must pin what ``uv pip compile
--python-platform P --python-version V`` pins, for every pair; and a foreign target is never built."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pm.cli import main
from pm.inputs.foreign import PLATFORMS, foreign_target
from pm.inputs.target import current_target
from pm.testing import add_plugin, index_from_spec, make_home
from pm.testing.receipts import assert_valid_receipt

EVERYWHERE = ["cp312-cp312-manylinux_2_17_x86_64", "cp312-cp312-manylinux_2_17_aarch64", "cp312-cp312-macosx_11_0_arm64",
              "cp312-cp312-macosx_10_9_x86_64", "cp312-cp312-win_amd64"]
SPEC = {
    # 2.0's Linux wheel needs glibc 2.31 and its macOS one macOS 14: newer than what uv assumes
    "native": {"1.0": {"tags": ["py3-none-manylinux_2_17_x86_64", "py3-none-manylinux_2_17_aarch64",
                                "py3-none-macosx_11_0_arm64", "py3-none-macosx_10_9_x86_64", "py3-none-win_amd64"]},
               "2.0": {"tags": ["py3-none-manylinux_2_31_x86_64", "py3-none-macosx_14_0_arm64", "py3-none-win_amd64"]}},
    # compiled per Python: 1.0 for 3.12 only, 2.0 for 3.13 only, 3.0 abi3 from 3.9 on Linux only
    "compiled": {"1.0": {"tags": EVERYWHERE},
                 "2.0": {"tags": [t.replace("cp312", "cp313") for t in EVERYWHERE]},
                 "3.0": {"tags": ["cp39-abi3-manylinux_2_17_x86_64"]}},
    "newpy": {"1.0": [], "2.0": {"requires_python": ">=3.13"}},
    "marked": {"1.0": ["winonly; sys_platform == 'win32'", "armonly; platform_machine == 'arm64'",
                       "posixonly; os_name == 'posix'"]},
    "winonly": {"1.0": []}, "armonly": {"1.0": []}, "posixonly": {"1.0": []},
}
PLATFORM_NAMES = ["linux", "macos", "windows", "aarch64-unknown-linux-gnu", "x86_64-apple-darwin"]
VERSIONS = ["3.12", "3.13"]


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    with index_from_spec(tmp_path_factory.mktemp("foreign-dists"), SPEC) as served:
        yield served


@pytest.fixture
def home(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "none"))
    (tmp_path / "core.toml").write_text("[project]\nname = 'host'\ndependencies = ['marked']\n")
    (tmp_path / "lock.txt").write_text("")
    home = make_home(tmp_path / "home", config={"plugins": {"enabled": ["p"]}})
    add_plugin(home / "plugins", "p", style="manifest", dependencies=["native", "compiled", "newpy"])
    return home


def _uv(uv_bin: str, folder: Path, url: str, platform: str, version: str) -> subprocess.CompletedProcess[str]:
    (folder / "req.in").write_text("marked\nnative\ncompiled\nnewpy\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "PIP_"))}
    env |= {"UV_NO_CONFIG": "1", "UV_CACHE_DIR": str(folder / "uv-cache"), "UV_PYTHON_DOWNLOADS": "never"}
    return subprocess.run([uv_bin, "pip", "compile", str(folder / "req.in"), "--index-url", url, "--python",
                           sys.executable, "--python-platform", platform, "--python-version", version,
                           "--no-header", "--no-annotate", "--only-binary", ":all:"],
                          capture_output=True, text=True, env=env, timeout=120, check=False)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("platform", PLATFORM_NAMES)
def test_pm_pins_what_uv_pins_for_another_system(platform, version, home, index, uv_bin, tmp_path, capsys) -> None:
    core = ["--core", str(home.parent / "core.toml"), "--core-lock", str(home.parent / "lock.txt")]
    code = main(["resolve", "--json", "--home", str(home), "--index-url", index.url, "--platform", platform,
                 "--python-version", version, *core])
    receipt = json.loads(capsys.readouterr().out)
    assert_valid_receipt(receipt)
    uv = _uv(uv_bin, tmp_path, index.url, platform, version)
    story = f"{platform} {version}\npm: {receipt['conflict'] or receipt['failure']}\nuv: {uv.stdout}{uv.stderr}"
    assert (code == 0) == (uv.returncode == 0), story
    if code == 0:
        ours = {p["name"]: p["version"] for p in receipt["resolution"]["packages"]}
        theirs = dict(line.split("==") for line in uv.stdout.split() if "==" in line)
        assert ours == theirs, story
        assert receipt["target"]["platform"] == platform and receipt["target"]["python"] == f"{version}.0"


def test_the_markers_and_tags_are_those_of_the_named_system() -> None:
    mac = foreign_target(current_target(), "3.13", "macos")
    env = mac.environment
    assert (env["sys_platform"], env["platform_machine"], env["python_version"]) == ("darwin", "arm64", "3.13")
    assert mac.tags[0] == "cp313-cp313-macosx_13_0_arm64" and "cp313-cp313-macosx_14_0_arm64" not in mac.tags
    linux = foreign_target(current_target(), "3.12", "linux")
    assert "cp312-cp312-manylinux_2_28_x86_64" in linux.tags and "cp312-cp312-manylinux2014_x86_64" in linux.tags
    assert "cp312-cp312-manylinux_2_29_x86_64" not in linux.tags and linux.foreign
    assert set(PLATFORMS) >= {"linux", "macos", "windows"}


def test_an_unknown_platform_or_version_is_a_usage_error(home, index, capsys) -> None:
    assert main(["resolve", "--home", str(home), "--index-url", index.url, "--platform", "amiga"]) == 2
    assert "--platform 'amiga': not a platform pm knows; use one of uv's --python-platform names" in \
        capsys.readouterr().err
    assert main(["resolve", "--home", str(home), "--index-url", index.url, "--python-version", "2.7"]) == 2
    assert "--python-version '2.7': expected 3.X" in capsys.readouterr().err


def test_a_foreign_target_is_resolved_never_built(home, index, capsys) -> None:
    core = ["--core", str(home.parent / "core.toml"), "--core-lock", str(home.parent / "lock.txt")]
    assert main(["sync", "--home", str(home), "--index-url", index.url, "--platform", "windows", *core]) == 2
    assert "cannot build for windows" in capsys.readouterr().err
    assert not (home / "pm" / "generations").exists() or not list((home / "pm" / "generations").iterdir())


def test_a_lock_for_another_system_names_that_systems_wheels(home, index, tmp_path, capsys) -> None:
    core = ["--core", str(home.parent / "core.toml"), "--core-lock", str(home.parent / "lock.txt")]
    lock = tmp_path / "pylock.macos.toml"
    assert main(["export", "--format", "pylock", "-o", str(lock), "--home", str(home), "--index-url", index.url,
                 "--platform", "macos", "--python-version", "3.13", *core]) == 0, capsys.readouterr().err
    text = lock.read_text()
    assert "compiled-2.0-cp313-cp313-macosx_11_0_arm64.whl" in text and "native-1.0-py3-none-macosx_11_0_arm64.whl" in text
    assert "manylinux" not in text and "win_amd64" not in text


def test_the_nix_export_for_another_system(home, index, tmp_path, capsys) -> None:
    core = ["--core", str(home.parent / "core.toml"), "--core-lock", str(home.parent / "lock.txt")]
    out = tmp_path / "wheels.nix"
    assert main(["export", "--format", "nix", "-o", str(out), "--home", str(home), "--index-url", index.url,
                 "--platform", "windows", "--python-version", "3.12", *core]) == 0, capsys.readouterr().err
    text = out.read_text()
    assert "compiled-1.0-cp312-cp312-win_amd64.whl" in text and "winonly" in text
    assert "macosx" not in text and "manylinux" not in text
