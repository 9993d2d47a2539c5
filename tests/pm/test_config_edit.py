"""pm.inputs.config_edit: the selection lists edited in place — block, flow and CRLF files."""

from __future__ import annotations

import pytest
import yaml

from pm.inputs.config_edit import ConfigEditError, change_list


@pytest.mark.parametrize(("text", "expected"), [
    ("# my agent\nmodel: x   # keep me\nplugins:\n  enabled:\n    - a  # first\n",
     "# my agent\nmodel: x   # keep me\nplugins:\n  enabled:\n    - a  # first\n    - b\n"),
    ("", "plugins:\n  enabled:\n    - b\n"),
    ("{}\n", "plugins:\n  enabled:\n  - b\n"),  # what yaml.safe_dump({}) writes
    ("# mine\n{model: x}\n", "# mine\nmodel: x\nplugins:\n  enabled:\n  - b\n"),
    ("plugins: {}\n", "plugins:\n  enabled:\n  - b\n"),
    ("model: 1  # kept\nplugins: {enabled: [a], disabled: [c]}\nother: 2\n",
     "model: 1  # kept\nplugins:\n  enabled:\n  - a\n  - b\n  disabled:\n  - c\nother: 2\n"),
    ("plugins:\n  enabled: [a]\n", "plugins:\n  enabled:\n    - a\n    - b\n"),
])
def test_adding_to_enabled(text: str, expected: str) -> None:
    new = change_list(text, "enabled", add="b")
    assert new == expected
    assert (yaml.safe_load(new)["plugins"]["enabled"]) == [*((yaml.safe_load(text) or {}).get("plugins") or {})
                                                           .get("enabled", []), "b"]


def test_a_crlf_file_keeps_crlf_and_every_other_byte() -> None:
    text = "model: x\r\nplugins:\r\n  enabled:\r\n    - a\r\n  disabled:\r\n    - c\r\n"
    added = change_list(text, "enabled", add="b")
    assert added == "model: x\r\nplugins:\r\n  enabled:\r\n    - a\r\n    - b\r\n  disabled:\r\n    - c\r\n"
    removed = change_list(added, "disabled", remove="c")
    assert removed == "model: x\r\nplugins:\r\n  enabled:\r\n    - a\r\n    - b\r\n  disabled: []\r\n"
    assert change_list(text, "enabled", add="a") is text  # nothing to change: the same text


def test_a_crlf_flow_document_keeps_crlf() -> None:
    assert change_list("{}\r\n", "enabled", add="b") == "plugins:\r\n  enabled:\r\n  - b\r\n"


def test_invalid_yaml_is_a_clear_error_not_a_parser_traceback() -> None:
    with pytest.raises(ConfigEditError) as caught:
        change_list("plugins: [\n", "enabled", add="b")
    assert str(caught.value).startswith("config.yaml is not valid YAML, so pm cannot edit it: ")


def test_a_bom_config_is_edited_in_place_not_given_a_second_plugins_block() -> None:
    """Issue 15 finding 10: a BOM hid the first ``plugins:`` line, so a second block was appended."""
    text = "\ufeffplugins:\n  enabled:\n    - a\n"
    assert change_list(text, "enabled", add="b") == "\ufeffplugins:\n  enabled:\n    - a\n    - b\n"


def test_a_config_without_a_final_newline_is_edited_correctly() -> None:
    assert change_list("plugins:\n  enabled:\n    - a", "enabled", add="b") == "plugins:\n  enabled:\n    - a\n    - b"
    assert change_list("model: x", "enabled", add="b") == "model: x\nplugins:\n  enabled:\n    - b"


def test_the_editor_reads_yaml_as_the_reader_does() -> None:
    """``other:\\t1`` reads fine with libyaml; the editor used PyYAML's pure loader and crashed."""
    text = "other:\t1\nplugins:\n  enabled:\n    - a\n"
    assert change_list(text, "enabled", add="b") == "other:\t1\nplugins:\n  enabled:\n    - a\n    - b\n"


def test_a_duplicate_plugins_block_is_refused_not_edited() -> None:
    with pytest.raises(ConfigEditError, match=r"duplicate key 'plugins' \(first on line 1, again on line 3\)"):
        change_list("plugins:\n  enabled: [a]\nplugins:\n  enabled: [c]\n", "enabled", add="b")


def test_a_removed_item_with_a_comment_is_commented_out_and_comes_back_with_it() -> None:
    text = "plugins:\n  enabled:\n    - a\n    - notes  # my notes, see README\n    - b\nx: 1\n"
    disabled = change_list(text, "enabled", remove="notes")
    assert disabled == "plugins:\n  enabled:\n    - a\n    # - notes  # my notes, see README\n    - b\nx: 1\n"
    assert change_list(disabled, "enabled", add="notes") == text  # in its place, its comment kept
    plain = "plugins:\n  enabled:\n    - a\n    - b\n"
    assert change_list(plain, "enabled", remove="a") == "plugins:\n  enabled:\n    - b\n"  # no comment: no trace


def test_a_line_commented_out_of_another_list_stays_there() -> None:
    """Enabling a plugin that a comment keeps in plugins.disabled (its entry commented out there)
    adds it to plugins.enabled; before, the editor took the other list's line for its own and
    refused the edit."""
    text = "plugins:\n  enabled:\n    - a\n  disabled:\n    # - b  # broke my build\n    - c\n"
    assert change_list(text, "enabled", add="b") == (
        "plugins:\n  enabled:\n    - a\n    - b\n  disabled:\n    # - b  # broke my build\n    - c\n")
