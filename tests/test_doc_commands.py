"""The commands the documentation shows are commands pm has (issue 24: "every command in README
and docs run by a test"): every ``hermes …`` line of a code block, and every inline ``hermes …``
without placeholders, parses with the real ``hermes`` parser (an option renamed or removed fails
here, naming the file and the line); the README's demo excerpt is what the demo prints now
(scripts/readme_transcript.py --check runs the demo: the commands run for real)."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from agent.cli import GROUPS, build_parser
from pm.cli._parser import hoist_globals

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BUNDLED = ROOT / "plugins" / "memory"
_FENCE = re.compile(r"^```[a-z]*\n(.*?)^```", re.M | re.S)
_INLINE = re.compile(r"`(hermes [^`]+)`")
_PLACEHOLDER = re.compile(r"[\[\]|…<>{}]|\.\.\.")


def _commands() -> list[tuple[str, str]]:
    """(where, command) for every hermes command shown in the docs."""
    found = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for block in _FENCE.finditer(text):
            for line in block.group(1).splitlines():
                line = line.strip().removeprefix("$ ").split("  #")[0].strip()
                if line.startswith("hermes ") and not _PLACEHOLDER.search(line) and "$" not in line:
                    found.append((f"{doc.name}: {line}", line))
        for match in _INLINE.finditer(_FENCE.sub("", text)):
            line = match.group(1).strip()
            if not _PLACEHOLDER.search(line) and "$" not in line and not line.split()[-1].startswith("-"):
                # (an inline span ending in an option names that option, it is not a command)
                found.append((f"{doc.name}: {line}", line))
    return list(dict(found).items())


COMMANDS = _commands()


def test_the_docs_show_many_commands() -> None:
    assert len(COMMANDS) >= 25, COMMANDS


@pytest.mark.parametrize(("where", "line"), COMMANDS, ids=[w for w, _ in COMMANDS])
def test_a_documented_command_parses(where: str, line: str) -> None:
    argv = shlex.split(line)[1:]
    group = argv[0] if argv else ""
    if group not in GROUPS and not group.startswith("-"):  # a memory provider's own cli.py
        assert (BUNDLED / group / "cli.py").is_file() or group in ("honcho", "mem0"), where
        return
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            build_parser().parse_args(hoist_globals(argv))
        except SystemExit as exited:
            assert exited.code == 0, f"{where}\n{err.getvalue()}"


def test_the_readme_excerpt_is_what_the_demo_prints_now() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "readme_transcript.py"), "--check"],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr + "\n(run: python scripts/readme_transcript.py)"
