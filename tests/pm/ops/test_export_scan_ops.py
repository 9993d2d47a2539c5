"""The export and scan operations (pm.ops.export, pm.ops.scan) without their CLI, and the one
writer of config.yaml (pm.ops.config_file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pm.base.errors import ConfigError
from pm.ops.config_file import ConfigChanged, config_bytes, edit_config, write_config
from pm.ops.export import export, write_output
from pm.ops.scan import report, scan


def empty_home(tmp_path: Path, config: str = "") -> Path:
    home = tmp_path / "home"
    (home / "plugins").mkdir(parents=True)
    (home / "config.yaml").write_text(config)
    return home


def test_exporting_the_selected_generation_of_a_home_without_one_fails_with_a_receipt(tmp_path: Path) -> None:
    exported = export(empty_home(tmp_path), "pylock", selected=True)
    assert exported.text is None and exported.packages == 0
    receipt = exported.result.receipt
    assert (receipt.kind, receipt.outcome, exported.result.code) == ("export", "failed", 1)
    assert receipt.failure is not None and receipt.failure["kind"] == "error"
    assert receipt.failure["message"].startswith("no generation is selected in ")


def test_write_output_says_what_went_wrong_and_what_to_do_next(tmp_path: Path) -> None:
    assert write_output(tmp_path, "x", "pylock") == ("it is a folder; give a file name", [])
    assert write_output(tmp_path / "no" / "pylock.toml", "x", "pylock") == (
        f"the folder {tmp_path / 'no'} does not exist", [])
    failed, notes = write_output(tmp_path / "lock.toml", "x", "pylock")
    assert failed is None and len(notes) == 1 and notes[0].startswith("warning: ")
    assert write_output(tmp_path / "pylock.toml", "x", "pylock") == (None, [])
    failed, notes = write_output(tmp_path / "wheels.nix", "x", "nix")
    assert failed is None and notes[0].endswith(f"{{ source = {tmp_path / 'wheels.nix'}; }}")
    assert (tmp_path / "wheels.nix").read_text() == "x"


def test_scan_returns_its_inputs_and_the_report_names_every_section(tmp_path: Path) -> None:
    result = scan(empty_home(tmp_path))
    assert result.code == 0 and result.receipt.kind == "scan" and result.inputs is not None
    assert list(report(result.inputs)) == ["home", "target", "fingerprint", "core", "plugins", "union", "homes",
                                           "notices"]


def test_scan_of_an_unreadable_config_has_no_inputs_and_a_failed_receipt(tmp_path: Path) -> None:
    result = scan(empty_home(tmp_path, "plugins: [\n"))
    assert result.inputs is None and result.code == 1
    assert result.receipt.failure is not None and result.receipt.failure["kind"] == "config"


def test_edit_config_writes_only_a_valid_config(tmp_path: Path) -> None:
    home = empty_home(tmp_path, "# keep\nplugins:\n  enabled: [a]\n")
    with pytest.raises(ConfigError, match=r"plugins.enabled: must be a list of plugin names"):
        edit_config(home, lambda text: text.replace("[a]", "a"))
    assert config_bytes(home) == b"# keep\nplugins:\n  enabled: [a]\n"
    assert edit_config(home, lambda text: text) is False
    assert edit_config(home, lambda text: text + "memory:\n  provider: a\n") is True
    assert config_bytes(home).endswith(b"provider: a\n")


def test_write_config_refuses_when_the_file_changed_since_it_was_read(tmp_path: Path) -> None:
    home = empty_home(tmp_path, "a: 1\n")
    before = config_bytes(home)
    (home / "config.yaml").write_text("a: 2\n")
    with pytest.raises(ConfigChanged):
        write_config(home, before, "a: 3\n")
    assert config_bytes(home) == b"a: 2\n"
