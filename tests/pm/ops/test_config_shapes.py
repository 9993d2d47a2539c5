"""Issue 15 finding 10, end to end: `plugins enable`/`disable` on config files whose shape broke
the editor — a UTF-8 BOM, no final newline, a tab after a colon."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.cli import main

from .conftest import plugin


@pytest.mark.parametrize(("before", "after"), [
    ("\ufeffplugins:\n  enabled:\n    - notes\n", "\ufeffplugins:\n  enabled:\n    - notes\n    - fresh\n"),
    ("plugins:\n  enabled:\n    - notes", "plugins:\n  enabled:\n    - notes\n    - fresh"),
    ("other:\t1\nplugins:\n  enabled:\n    - notes\n", "other:\t1\nplugins:\n  enabled:\n    - notes\n    - fresh\n"),
])
def test_enable_then_disable_edits_odd_configs_exactly(env: Path, before: str, after: str) -> None:
    home = env / "home"
    plugin(home / "plugins", "notes", [])
    plugin(home / "plugins", "fresh", ["sharedlib==1.4.0"])
    (home / "config.yaml").write_bytes(before.encode())
    assert main(["plugins", "enable", "fresh", "--home", str(home)]) == 0
    assert (home / "config.yaml").read_bytes().decode() == after
    assert main(["plugins", "disable", "fresh", "--home", str(home)]) == 0
    assert (home / "config.yaml").read_bytes().decode() == before
