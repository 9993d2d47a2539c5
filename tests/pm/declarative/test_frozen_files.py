"""Reading frozen files: pylocks pm did not write, and files that cannot be built from."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from pm.base.errors import InputError
from pm.env import generations
from pm.inputs.target import current_target
from pm.records.frozen import read_frozen

from .conftest import PINS
from .helpers import installed, latest, pm


def _foreign_lock(wheels: Path, lock: Path) -> None:
    """A PEP 751 lock as another tool writes it: files by relative ``path``, no ``[tool.hermes-pm]``."""
    lines = ['lock-version = "1.0"', 'created-by = "elsewhere"']
    for name, version in PINS.items():
        filename = f"{name}-{version}-py3-none-any.whl"
        digest = hashlib.sha256((wheels / filename).read_bytes()).hexdigest()
        relative = Path("..") / wheels.name / filename
        lines += ["", "[[packages]]", f'name = "{name}"', f'version = "{version}"',
                  f'wheels = [{{ name = "{filename}", path = "{relative}", hashes = {{ sha256 = "{digest}" }} }}]']
    lock.write_text("\n".join(lines) + "\n")


def test_a_lock_without_recorded_inputs_needs_ignore_inputs(home: Path, wheels: Path, capsys) -> None:
    lock = wheels.parent / "elsewhere" / "pylock.toml"
    lock.parent.mkdir(exist_ok=True)
    _foreign_lock(wheels, lock)
    refused = pm(capsys, home, "sync", "--from", str(lock))
    assert refused.code == 1 and latest(home)["outcome"] == "refused"
    assert refused.err.splitlines()[0] == (f"refused: {lock} records no inputs to check (a pylock.toml not written "
                                           "by `hermes pm export`); nothing was built")
    assert [s["command"] for s in latest(home)["next_steps"]] == [
        f"hermes pm sync --from {lock} --ignore-inputs --home {home}"]
    built = pm(capsys, home, "sync", "--from", str(lock), "--ignore-inputs", "--json")
    assert built.code == 0, built.data.get("failure")
    assert installed(generations.selected(home)) == PINS and built.data["frozen"]["inputs"] == "unrecorded"
    assert generations.selected(home).fingerprint == (  # the lock's own digest: a plain sync resolves anew
        "sha256:" + hashlib.sha256(lock.read_bytes()).hexdigest())
    assert {p["file"]["url"] for p in built.data["resolution"]["packages"]} == {
        (wheels / f"{n}-{v}-py3-none-any.whl").as_uri() for n, v in PINS.items()}


def test_every_problem_of_a_lock_is_reported_at_once(tmp_path: Path) -> None:
    lock = tmp_path / "pylock.toml"
    lock.write_text('lock-version = "1.0"\ncreated-by = "elsewhere"\n\n'
                    '[[packages]]\nname = "alpha"\nversion = "1.0"\n'
                    'wheels = [{ name = "alpha-1.0-py3-none-any.whl", url = "ftp://x/alpha-1.0-py3-none-any.whl", '
                    'hashes = { sha256 = "' + "a" * 64 + '" } }]\n\n'
                    '[[packages]]\nname = "beta"\nversion = "1.0"\n'
                    'wheels = [{ url = "https://x/beta-1.0-py3-none-any.whl", hashes = { md5 = "00" } }]\n\n'
                    '[[packages]]\nname = "gamma"\nversion = "1.0"\n'
                    'wheels = [{ url = "https://x/gamma-1.0-py3-none-any.whl", hashes = { sha256 = "00" } }]\n\n'
                    '[[packages]]\nname = "delta"\ndirectory = { path = "delta" }\n')
    with pytest.raises(InputError) as caught:
        read_frozen(lock, current_target())
    assert str(caught.value) == "; ".join([
        f"{lock}: packages[0] (alpha): url 'ftp://x/alpha-1.0-py3-none-any.whl' is not http(s) or file",
        f"{lock}: packages[1] (beta): needs a sha256 of 64 hex digits, got None",
        f"{lock}: packages[2] (gamma): needs a sha256 of 64 hex digits, got '00'",
        f"{lock}: packages[3].directory (delta): locks the local directory delta, which pm does not install: pm "
        "installs wheels and sdists only, fetched by URL and checked by sha256 (lock this package from an index, "
        "or install it another way)",
    ])


def test_a_package_without_a_file_for_this_target_is_named(tmp_path: Path) -> None:
    lock = tmp_path / "pylock.toml"
    lock.write_text('lock-version = "1.0"\ncreated-by = "elsewhere"\n\n'
                    '[[packages]]\nname = "gamma"\nversion = "1.0"\n'
                    'wheels = [{ url = "https://x/gamma-1.0-cp27-cp27m-win32.whl", hashes = { sha256 = "00" } }]\n')
    target = current_target()
    with pytest.raises(InputError) as caught:
        read_frozen(lock, target)
    markers = target.environment
    assert str(caught.value) == (
        f"{lock}: No wheel found matching the provided tags for package 'gamma' at packages[0], and no sdist "
        f"available as a fallback (this target: {markers['implementation_name']} {markers['python_full_version']} "
        f"on {markers['sys_platform']} {markers['platform_machine']})")


def test_a_file_that_is_neither_json_nor_toml_is_a_clear_error(home: Path, tmp_path: Path, capsys) -> None:
    junk = tmp_path / "receipt.json"
    junk.write_text("{not json")
    result = pm(capsys, home, "sync", "--from", str(junk))
    assert result.code == 1
    assert result.err.splitlines()[0] == (f"error: {junk}: is neither JSON (a receipt) nor a pylock.toml: "
                                          "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)")
    assert latest(home)["failure"]["kind"] == "input" and generations.all_ids(home) == []
