"""Writing a recorded selection back into config.yaml (pm.inputs.restore): after the editor's own
edits (an enable, a disable, ``memory setup``), the text the file held before comes back byte for
byte, comments included; what the editor cannot write safely is refused, naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from pm.base.files import TextFile
from pm.inputs.config import parse_config
from pm.inputs.config_edit import ConfigEditError, change_list, set_value
from pm.inputs.recorded import SavedHome
from pm.inputs.restore import restored

HOME = Path("/nonexistent/home")


def saved_from(text: str) -> SavedHome:
    """What a generation built from ``text`` records for its home."""
    path = HOME / "config.yaml"
    config = parse_config(path, TextFile(path, text.encode(), text))
    return SavedHome(HOME, None, config.enabled, config.disabled, config.memory_provider, config.keys)


@pytest.mark.parametrize("before", [
    "# my agent\nmodel: x   # keep me\nplugins:\n  enabled:\n    - a  # first\n",
    "model: x\n",  # no plugins section: the enable wrote it, the rollback takes it away again
    "plugins:\n  enabled: []\n",
    "plugins:\n  enabled:\n    - a\n  disabled:\n    - b  # broke my build\n    - c\n",
    "\ufeffplugins:\r\n  enabled:\r\n    - a  # first\r\n",  # BOM and CRLF
])
def test_an_enable_is_undone_byte_for_byte(before: str) -> None:
    after_enable = change_list(change_list(before, "disabled", remove="b"), "enabled", add="b")
    assert after_enable != before
    assert restored(after_enable, saved_from(before)) == before


def test_a_disable_of_a_commented_item_is_undone_with_its_comment() -> None:
    before = "plugins:\n  enabled:\n    - a  # first\n    - b\n"
    after_disable = change_list(before, "enabled", remove="a")
    assert after_disable == "plugins:\n  enabled:\n    # - a  # first\n    - b\n"
    assert restored(after_disable, saved_from(before)) == before


def test_an_enable_then_a_disable_is_undone_in_one_step() -> None:
    before = "plugins:\n  enabled:\n    - a  # first\n"
    later = change_list(change_list(before, "enabled", add="b"), "enabled", remove="a")
    assert restored(later, saved_from(before)) == before


def test_memory_provider_comes_back_or_goes_away() -> None:
    before = "# agent\nmodel: x  # a comment the whole-file rewrite would lose\n"
    chosen = set_value(change_list(before, "enabled", add="honcho"), "memory", "provider", "honcho")
    assert restored(chosen, saved_from(before)) == before
    mine = "memory:\n  provider: mem0  # mine\n  mem0: {region: eu-west}\n"
    assert restored(set_value(mine, "memory", "provider", "honcho"), saved_from(mine)) == mine


def test_other_edits_since_are_kept() -> None:
    before = "plugins:\n  enabled:\n    - a\n"
    later = change_list(before, "enabled", add="b") + "model: y  # changed since\n"
    assert restored(later, saved_from(before)) == "plugins:\n  enabled:\n    - a\nmodel: y  # changed since\n"


def test_the_order_of_plugins_enabled_is_restored() -> None:
    before = "plugins:\n  enabled:\n    - a\n    - b\n"
    assert restored("plugins:\n  enabled:\n    - b\n    - a\n", saved_from(before)) == before


def test_a_shape_the_editor_cannot_write_is_refused() -> None:
    text = "plugins: &mine\n  enabled:\n    - b\n"
    with pytest.raises(ConfigEditError) as refused:
        restored(text, saved_from("plugins:\n  enabled:\n    - a\n"))
    assert str(refused.value) == ("config.yaml writes 'plugins' in a form pm cannot edit safely (use a block "
                                  "mapping: 'plugins:' on its own line)")
