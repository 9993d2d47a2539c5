"""pm.base.commands and pm.records.sections' next steps: command lines that run exactly as printed."""

from __future__ import annotations

import shlex
from pathlib import Path

from pm.base.commands import hermes
from pm.records import sections as records


def test_hermes_quotes_every_word_and_puts_home_last() -> None:
    assert hermes("pm", "sync") == "hermes pm sync"
    home = Path("/tmp/my home's agent")
    line = hermes("plugins", "enable", "tools/b", home=home)
    assert line == "hermes plugins enable tools/b --home '/tmp/my home'\"'\"'s agent'"
    assert shlex.split(line) == ["hermes", "plugins", "enable", "tools/b", "--home", str(home)]


def test_records_uses_the_same_command_lines() -> None:
    assert records.hermes is hermes
