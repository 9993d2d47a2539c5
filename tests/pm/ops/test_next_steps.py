"""Every next step pm prints runs exactly as printed: parsed back with shlex and run, for a home
whose path needs quoting. (check and the host's gate used to add an unquoted --home; rollback
left it out and acted on the default home.)"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from agent.cli import main
from agent.discovery import find_memory_provider
from agent.gate import judge
from pm.env import generations

from .conftest import plugin


@pytest.fixture
def home(env: Path) -> Path:
    home = env / "my home's agent"  # a space and a quote: both need quoting
    plugin(home / "plugins", "a", ["sharedlib==1.*"])
    plugin(home / "plugins", "b", ["sharedlib>=2"])
    (home / "config.yaml").write_text("plugins:\n  enabled:\n    - a\n")
    return home


def latest(home: Path) -> dict:
    return json.loads((home / "pm/receipts/latest.json").read_text())


def steps_of(home: Path, *argv: str) -> list[str]:
    main([*argv, "--home", str(home)])
    return [step["command"] for step in latest(home)["next_steps"]]


def run_as_printed(command: str, home: Path) -> int:
    """Run ``command`` the way a shell would after the person pastes it (a leading ``NAME=value``
    sets that variable for the command alone)."""
    argv = shlex.split(command)
    assigned = {}
    while argv and "=" in argv[0] and argv[0].split("=")[0].isidentifier():
        name, _, value = argv.pop(0).partition("=")
        assigned[name] = value
    if assigned:
        with pytest.MonkeyPatch.context() as patch:
            for name, value in assigned.items():
                patch.setenv(name, value)
            return run_as_printed(shlex.join(argv), home)
    if argv[0] != "hermes":
        return subprocess.run(argv, capture_output=True, check=False).returncode
    before = latest(home)["started_at"] if (home / "pm/receipts/latest.json").exists() else None
    code = main(argv[1:])
    assert code != 2, f"{command!r} is not a valid command line"
    if argv[1] != "pm" or argv[2] not in ("why",):  # it acted on this home: its receipt is there
        assert latest(home)["started_at"] != before, f"{command!r} wrote no receipt in {home}"
    return code


def test_every_next_step_runs_as_printed(home: Path, capsys) -> None:
    assert main(["pm", "sync", "--home", str(home)]) == 0
    printed = []
    printed += steps_of(home, "pm", "resolve", "--with", "b")  # a conflict: disable a, retry, why
    printed += steps_of(home, "plugins", "enable", "b")  # the admission's own steps
    printed += steps_of(home, "pm", "rollback")  # no previous generation: sync instead
    (home / "plugins/a/plugin.yaml").write_text(json.dumps({"name": "a", "pip_dependencies": ["sharedlib==1.4.*"]}))
    printed += steps_of(home, "pm", "check")  # inputs changed: sync
    frozen = generations.selected(home).path / "generation.json"
    printed += steps_of(home, "pm", "sync", "--from", str(frozen))  # refused: --ignore-inputs, or sync
    assert printed and all(f"--home {shlex.quote(str(home))}" in c for c in printed if c.startswith("hermes"))
    commands = list(dict.fromkeys(printed))
    assert {c.split(" --home")[0] for c in commands} >= {
        "hermes plugins disable a", "hermes pm resolve --with b", "hermes plugins enable b",
        "hermes pm why sharedlib", "hermes pm sync", f"hermes pm sync --from {shlex.quote(str(frozen))} --ignore-inputs"}
    for command in commands:
        run_as_printed(command, home)


def test_the_hosts_gate_prints_a_runnable_sync(home: Path, env: Path, monkeypatch) -> None:
    (home / "plugins/a/plugin.yaml").write_text(json.dumps({"name": "a", "kind": "memory",
                                                            "pip_dependencies": ["sharedlib==1.*"]}))
    info = find_memory_provider(home, "a")
    assert info is not None
    readiness = judge(info, home, None)
    assert not readiness.ready and readiness.command == shlex.join(["hermes", "pm", "sync", "--home", str(home)])
    assert run_as_printed(readiness.command, home) == 0
    assert judge(info, home, generations.selected(home)).ready
