"""Issue 25: the host reads and writes config.yaml through pm's one reader and one editor —
``hermes_cli.config.load_config`` is bounded, ``save_config`` keeps comments, refuses a
duplicated key instead of dropping one copy, and writes under the home lock."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from hermes_cli.config import ConfigWriteError, load_config, save_config
from pm.base.errors import ConfigError
from pm.base.lock import home_lock
from pm.base.store import Store

COMMENTED = """\
# my agent's settings
memory:
  provider: my-provider  # chosen in March
plugins:
  enabled:
    - notes   # the one with the index
  # disabled: [old]
"""


def home_with(tmp_path: Path, text: str) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text(text)
    return home


def test_a_comment_survives_a_host_save(tmp_path: Path) -> None:
    home = home_with(tmp_path, COMMENTED)
    save_config({"memory": {"my-provider": {"region": "eu-west"}}}, home, merge_existing=True)
    assert (home / "config.yaml").read_text() == COMMENTED.replace(
        "plugins:\n", "  my-provider:\n    region: eu-west\nplugins:\n")
    assert load_config(home) == {"memory": {"provider": "my-provider", "my-provider": {"region": "eu-west"}},
                                 "plugins": {"enabled": ["notes"]}}


def test_a_whole_save_keeps_the_comments_of_what_it_does_not_change(tmp_path: Path) -> None:
    home = home_with(tmp_path, COMMENTED)
    save_config({"memory": {"provider": "other"}, "plugins": {"enabled": ["notes"]}}, home, merge_existing=False)
    assert (home / "config.yaml").read_text() == COMMENTED.replace(
        "  provider: my-provider  # chosen in March\n", "  provider: other\n")


def test_a_duplicated_key_is_refused_not_dropped(tmp_path: Path) -> None:
    text = "plugins:\n  enabled: [a]\nplugins:\n  enabled: [b]\n"
    home = home_with(tmp_path, text)
    with pytest.raises(ConfigError, match=r"duplicate key 'plugins' \(first on line 1, again on line 3\)"):
        load_config(home)
    with pytest.raises(ConfigWriteError, match=r"config.yaml.*duplicate key 'plugins'"):
        save_config({"memory": {"provider": "x"}}, home)
    assert (home / "config.yaml").read_text() == text


def test_config_read_by_the_host_is_bounded(tmp_path: Path) -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(8))
    home = home_with(tmp_path, bomb)
    started = time.monotonic()
    with pytest.raises(ConfigError, match="expands to more than 100000 nodes"):
        load_config(home)
    assert time.monotonic() - started < 5
    (home / "config.yaml").write_text("x: " + "y" * (1024 * 1024) + "\n")
    with pytest.raises(ConfigError, match="config.yaml"):
        load_config(home)
    with pytest.raises(ConfigWriteError):
        save_config({"memory": {"provider": "x"}}, home)


def test_a_host_save_waits_for_the_home_lock(tmp_path: Path) -> None:
    home = home_with(tmp_path, "memory:\n  provider: a\n")
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with home_lock(home, Store.for_home(home)):
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(10)
    threading.Timer(0.5, release.set).start()
    started = time.monotonic()
    save_config({"memory": {"provider": "b"}}, home)
    waited = time.monotonic() - started
    holder.join()
    assert waited >= 0.4
    assert load_config(home) == {"memory": {"provider": "b"}}


def test_a_save_inside_an_operation_that_holds_the_lock_does_not_wait_on_itself(tmp_path: Path) -> None:
    home = home_with(tmp_path, "memory:\n  provider: a\n")
    with home_lock(home, Store.for_home(home), timeout=1):
        save_config({"memory": {"provider": "b"}}, home)
    assert load_config(home) == {"memory": {"provider": "b"}}
