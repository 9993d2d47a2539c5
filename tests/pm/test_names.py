"""pm.base.names and issue 15 findings 11 and 17: names a folder or config cannot hold are clean usage
errors; untrusted names are escaped before they reach a terminal or a table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent.cli import main as hermes
from pm.base.names import BadName, check_name, printable
from pm.testing.cli import latest

LONG = "a" * 300


def test_check_name_accepts_plugin_names() -> None:
    assert check_name("notes") == "notes"
    assert check_name("tools/notes") == "tools/notes"


@pytest.mark.parametrize(("name", "why"), [
    ("", "is empty"),
    ("a\nb", "contains a control or unprintable character"),
    ("a\x00b", "contains a control or unprintable character"),
    ("../up", "is not a folder name under plugins/"),
    ("/abs", "is not a folder name under plugins/"),
    (LONG, "is 300 characters; a plugin name is at most 128"),
])
def test_check_name_refuses_what_no_folder_or_config_can_hold(name: str, why: str) -> None:
    with pytest.raises(BadName, match="^plugin name ") as caught:
        check_name(name)
    assert why in str(caught.value)
    assert len(str(caught.value)) < 250


def test_printable_escapes_control_characters() -> None:
    assert printable("evil\nfake row\x1b[2J") == "evil\\nfake row\\x1b[2J"
    assert printable("plain") == "plain"


def run(capsys: Any, *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = hermes(list(argv))
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.out + captured.err


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / "plugins").mkdir(parents=True)
    (home / "config.yaml").write_text("plugins:\n  enabled: []\n")
    return home


@pytest.mark.parametrize("argv", [
    ["plugins", "enable", LONG], ["plugins", "disable", LONG], ["plugins", "remove", LONG],
    ["pm", "resolve", "--with", LONG, "--no-index"], ["pm", "check", "--with", LONG],
])
def test_a_300_character_name_is_a_usage_error_with_a_receipt(capsys: Any, home: Path, argv: list[str]) -> None:
    code, text = run(capsys, *argv, "--home", str(home))
    assert code == 2
    assert "is 300 characters; a plugin name is at most 128" in text
    assert latest(home)["exit_code"] == 2


def test_installing_from_a_300_character_source_is_refused_cleanly(capsys: Any, home: Path) -> None:
    code, text = run(capsys, "plugins", "install", LONG, "--home", str(home))
    assert code == 1
    assert "is not in the catalog" in text


def test_a_plugin_whose_manifest_name_config_cannot_hold_is_not_installed(capsys: Any, home: Path,
                                                                         tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "plugin.yaml").write_text('name: "a\\0b"\npip_dependencies: []\n')
    code, text = run(capsys, "plugins", "install", str(source), "--home", str(home))
    assert code == 1
    assert "cannot name the plugin: plugin name 'a\\x00b' contains a control or unprintable character" in text
    assert sorted(p.name for p in (home / "plugins").iterdir()) == []


def test_memory_setup_of_an_empty_name_is_a_usage_error(capsys: Any, home: Path) -> None:
    code, text = run(capsys, "memory", "setup", "", "--home", str(home))
    assert code == 2
    assert "error: memory provider name '' is empty" in text


def test_control_characters_in_folder_names_cannot_forge_rows(capsys: Any, home: Path) -> None:
    for name in ("evil\nfake   user   member", "clr\x1b[2J"):
        (home / "plugins" / name).mkdir()
        (home / "plugins" / name / "plugin.yaml").write_text("pip_dependencies: []\n")
    for argv in (["pm", "scan"], ["plugins", "list"]):
        _, text = run(capsys, *argv, "--home", str(home))
        assert "\x1b[2J" not in text and "\nfake" not in text
        assert "evil\\nfake   user   member" in text and "clr\\x1b[2J" in text


def test_messages_to_a_person_escape_control_characters_but_keep_pm_colours(capsys: Any) -> None:
    from pm.cli._output import say, terminal_safe

    assert terminal_safe("a\x1b[2Jb\n\tc\x1b[31mred\x1b[0m\x00") == "a\\x1b[2Jb\n\tc\x1b[31mred\x1b[0m\\x00"
    say("/home/plugins/clr\x1b[2J/plugin.yaml: is not valid YAML")
    assert capsys.readouterr().err == "/home/plugins/clr\\x1b[2J/plugin.yaml: is not valid YAML\n"
