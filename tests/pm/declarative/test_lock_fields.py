"""Locks are data, never text: a pin from a receipt or a pylock given to ``sync --from`` is checked
field by field before anything is built, and a built generation holds exactly its pins.

The attack these stop: a pin whose URL carries a newline and a second requirement
(``<url> --hash=…\\nother @ file:///…/other-6.6.6-py3-none-any.whl``) used to become a second
line of the requirements handed to uv — ``other`` installed and selected, the receipt silent."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from pm.base.uv import Uv, UvError
from pm.env import generations
from pm.env.build import VerifyError, spoke, verify
from pm.records.sections import resolution_from_json
from pm.testing import build_packages
from pm.testing.cli import pm

from .conftest import PINS
from .test_frozen_sync import _resolved_on


@pytest.fixture
def other_wheel(tmp_path: Path) -> Path:
    (built,) = build_packages(tmp_path / "smuggled", {"other": {"6.6.6": None}})
    return built.path


def _selected_ids(home: Path) -> str | None:
    return generations.read_state(home).get("selected")


def _edit_first_pin(receipt_file: Path, **fields: str) -> str:
    data = json.loads(receipt_file.read_text())
    pin = data["resolution"]["packages"][0]
    for key, value in fields.items():
        if key == "name":
            pin["name"] = value
        else:
            pin["file"][key] = value
    receipt_file.write_text(json.dumps(data))
    return str(data["resolution"]["packages"][0]["name"])


def test_a_url_that_smuggles_a_second_requirement_is_refused(home: Path, other_wheel: Path, capsys) -> None:
    receipt_file = _resolved_on(home, capsys)
    data = json.loads(receipt_file.read_text())
    pin = data["resolution"]["packages"][0]
    pin["file"]["url"] += f" --hash=sha256:{pin['file']['sha256']}\nother @ {other_wheel.as_uri()}"
    receipt_file.write_text(json.dumps(data))
    before = _selected_ids(home)

    result = pm(capsys, home, "sync", "--from", str(receipt_file), "--ignore-inputs", "--json")

    assert result.code == 1 and result.data["outcome"] == "failed", result.data
    message = result.data["failure"]["message"]
    assert f"resolution.packages[0] ({pin['name']})" in message and "holds whitespace or control characters" in message
    assert str(receipt_file) in message
    assert _selected_ids(home) == before
    assert not list((home / "pm" / "generations").glob("*/venv/lib/*/site-packages/other-*"))


@pytest.mark.parametrize(("fields", "said"), [
    ({"name": "alpha\nother"}, "is not a normalized project name"),
    ({"url": "ftp://example.invalid/alpha-1.0-py3-none-any.whl"}, "is not http(s) or file"),
    ({"url": "https://example.invalid/other-6.6.6-py3-none-any.whl"}, "does not end in the file's name"),
    ({"filename": "other-6.6.6-py3-none-any.whl",
      "url": "https://example.invalid/other-6.6.6-py3-none-any.whl"}, "is not alpha 1.0"),
    ({"sha256": "00" * 31}, "needs a sha256 of 64 hex digits"),
])
def test_each_field_of_a_pin_is_what_it_says(home: Path, capsys, fields: dict[str, str], said: str) -> None:
    receipt_file = _resolved_on(home, capsys)
    _edit_first_pin(receipt_file, **fields)
    result = pm(capsys, home, "sync", "--from", str(receipt_file), "--ignore-inputs", "--json")
    assert result.code == 1 and said in result.data["failure"]["message"], result.data["failure"]


def test_a_pylock_url_with_a_newline_is_refused(home: Path, other_wheel: Path, capsys) -> None:
    lock = home.parent / "pylock.toml"
    assert pm(capsys, home, "export", "--format", "pylock", "-o", str(lock)).code == 0
    text = lock.read_text()
    first = text.index('url = "') + len('url = "')
    end = text.index('"', first)
    lock.write_text(text[:end] + f"\\nother @ {other_wheel.as_uri()}" + text[end:])  # a TOML string's \n

    result = pm(capsys, home, "sync", "--from", str(lock), "--ignore-inputs", "--json")

    assert result.code == 1 and "holds whitespace or control characters" in result.data["failure"]["message"]


def test_a_generation_holding_more_than_its_pins_is_refused(home: Path, other_wheel: Path, wheels: Path, capsys,
                                                            uv_bin: str, tmp_path: Path) -> None:
    """Verification checks that nothing but the pins is installed, not only that the pins are."""
    assert pm(capsys, home, "sync", "--json").code == 0
    built = generations.selected(home)
    assert built is not None and sorted(built.pins) == sorted(PINS)
    venv = tmp_path / "copy" / "venv"
    subprocess.run([uv_bin, "venv", "--quiet", str(venv)], check=True)
    files = [wheels / p["file"]["filename"] for p in built.record["resolution"]["packages"]]
    subprocess.run([uv_bin, "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"), "--no-deps",
                    "--offline", "--no-index", *map(str, files), str(other_wheel)], check=True)
    resolution = resolution_from_json(built.record["resolution"])
    python_version = built.record["target"]["markers"]["python_version"]

    with pytest.raises(VerifyError, match=r"other 6\.6\.6 \(not in the resolution\)"):
        verify(venv, python_version, resolution, Uv(tmp_path / "uv-cache", binary=uv_bin))


def test_uv_pip_check_still_refuses_a_generation_whose_pins_are_not_consistent(
        home: Path, wheels: Path, capsys, uv_bin: str, tmp_path: Path) -> None:
    """uv pip check runs beside pm's own checks (on a thread of its own); its failure still fails
    the verification: beta installed alone, without the alpha it requires."""
    assert pm(capsys, home, "sync", "--json").code == 0
    built = generations.selected(home)
    assert built is not None
    (beta,) = [p for p in built.record["resolution"]["packages"] if p["name"] == "beta"]
    venv = tmp_path / "alone" / "venv"
    subprocess.run([uv_bin, "venv", "--quiet", str(venv)], check=True)
    subprocess.run([uv_bin, "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"), "--no-deps",
                    "--offline", "--no-index", str(wheels / beta["file"]["filename"])], check=True)
    resolution = resolution_from_json({"packages": [beta]})
    python_version = built.record["target"]["markers"]["python_version"]

    with pytest.raises(UvError, match=r"uv pip check` exited with 1") as raised:
        verify(venv, python_version, resolution, Uv(tmp_path / "uv-cache", binary=uv_bin))
    assert "alpha" in raised.value.output


def test_a_frozen_file_whose_pins_are_not_consistent_is_never_selected(home: Path, capsys) -> None:
    """A receipt edited to drop alpha, which beta requires, its inputs still those of the home:
    uv's validation after installing (``--strict``) warns, ``uv pip check`` refuses, and the
    generation that was selected stays selected."""
    receipt_file = _resolved_on(home, capsys)
    selected = _selected_ids(home)
    data = json.loads(receipt_file.read_text())
    data["resolution"]["packages"] = [p for p in data["resolution"]["packages"] if p["name"] != "alpha"]
    receipt_file.write_text(json.dumps(data))
    result = pm(capsys, home, "sync", "--from", str(receipt_file), "--json")
    assert (result.code, result.data["outcome"]) == (1, "failed")
    assert result.data["failure"]["kind"] == "uv", json.dumps(result.data["failure"])
    assert "`uv pip check` exited with 1" in result.data["failure"]["message"]
    assert "requires `alpha" in result.data["failure"]["message"]
    assert _selected_ids(home) == selected


@pytest.mark.parametrize(("said", "spoken"), [
    ("Resolved 4 packages in 2ms\nInstalled 4 packages in 9ms\n + alpha==1.0\n", False),
    ("Installed 1 package in 3ms\nwarning: The package `beta` requires `alpha>=1`, but it's not installed\n", True),
    ("warning: Failed to hardlink files; falling back to full copy.\nInstalled 4 packages in 9ms\n", True),
])
def test_uv_pip_check_runs_after_an_install_that_warned(said: str, spoken: bool) -> None:
    assert spoke(said) is spoken


def _receipt_of(count: int) -> dict:
    return {"packages": [{"name": f"p{i}", "version": "1.0", "required_by": [],
                          "file": {"filename": f"p{i}-1.0-py3-none-any.whl", "sha256": "ab" * 32, "size": 10,
                                   "url": f"https://h/p{i}-1.0-py3-none-any.whl"}} for i in range(count)]}


def test_reading_a_lock_grows_linearly_with_its_packages() -> None:
    """A 60,000-package lock took 83 s to read (each pin compared with every one before it).
    Four times the packages must cost about four times the time, not sixteen."""
    import time

    from pm.records.frozen import _receipt_resolution

    def seconds(count: int) -> float:
        data = _receipt_of(count)
        started = time.perf_counter()
        assert len(_receipt_resolution(Path("lock.json"), data).pins) == count
        return time.perf_counter() - started

    rounds = [(seconds(4000), seconds(16000)) for _ in range(3)]  # in turns: the machine's load falls on both
    small, large = (min(column) for column in zip(*rounds, strict=True))
    assert large / small < 9, rounds


def test_credentials_in_pin_urls_reach_uv_and_no_file(new_home, index, capsys) -> None:
    """A lock whose file URLs carry ``user:password@`` (a private index's): uv downloads with them,
    while the receipt, the generation's record and its requirements file hold the URLs without."""
    receipt_file = _resolved_on(new_home("resolver"), capsys)
    data = json.loads(receipt_file.read_text())
    for pin in data["resolution"]["packages"]:
        pin["file"]["url"] = pin["file"]["url"].replace("http://", "http://me:s3cret-42@")
    receipt_file.write_text(json.dumps(data))
    index.basic_auth = "me:s3cret-42"  # every request without them is refused
    builder = new_home("builder")

    result = pm(capsys, builder, "sync", "--from", str(receipt_file), "--json")

    assert result.code == 0, result.data.get("failure")
    built = generations.selected(builder)
    assert built is not None and sorted(built.pins) == sorted(PINS)
    for path in [*(builder / "pm").rglob("*.json"), built.path / "requirements.txt"]:
        assert "s3cret-42" not in path.read_text(), path
    assert all(p["file"]["url"].startswith(f"{index.root}/") for p in result.data["resolution"]["packages"])
