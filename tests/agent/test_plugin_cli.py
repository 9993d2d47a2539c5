"""agent.plugin_cli: `hermes <provider> …` for the active provider only, behind the same gate."""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from agent.plugin_cli import (
    discover_plugin_cli_commands,
    mount_plugin_cli_commands,
    run_plugin_command,
)
from agent.testing import BUNDLED, provider_init, set_config, spy_init
from pm.env.generations import Generation
from pm.testing.homes import add_plugin

CLI = '''"""Count things for the spy provider.

Longer description.
"""
from pathlib import Path
from .helpers import MARK
Path(MARK + "-cli").write_text("imported")


def register_cli(subparser):
    commands = subparser.add_subparsers(dest="spy_command", required=True)
    count = commands.add_parser("count")
    count.add_argument("n", type=int)
    count.set_defaults(func=lambda args: print("counted", args.n) or args.n)
'''


def _spy(home: Path, marks: Path, name: str = "spy", deps: tuple[str, ...] = ()) -> Path:
    """A user memory provider with a ``cli.py`` that imports a sibling module relatively; the
    package, ``cli.py`` and the sibling each leave a marker when executed."""
    style = "manifest" if deps else "sidecar"
    root = add_plugin(home / "plugins", name, style=style, dependencies=deps,
                      manifest={"kind": "memory"},
                      init_code=provider_init(name, marks / f"{name}-init"))
    (root / "helpers.py").write_text(f"MARK = {str(marks / name)!r}\n")
    (root / "cli.py").write_text(CLI)
    return root


def _parser(commands: list) -> tuple[argparse.ArgumentParser, dict]:  # type: ignore[type-arg]
    parser = argparse.ArgumentParser(prog="hermes")
    groups = parser.add_subparsers(dest="group", required=True)
    groups.add_parser("pm")
    return parser, mount_plugin_cli_commands(groups, commands)


@pytest.fixture
def marks(clean_env: Path) -> Path:
    path = clean_env / "marks"
    path.mkdir()
    return path


def test_only_the_active_providers_cli_is_imported(
        new_home: Callable[..., Path], marks: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = new_home({"memory": {"provider": "spy"}})
    _spy(home, marks)
    _spy(home, marks, name="idle")
    [command] = discover_plugin_cli_commands(home)
    assert (command.name, command.help, command.refusal) == ("spy", "Count things for the spy provider.", None)
    assert sorted(p.name for p in marks.iterdir()) == ["spy-cli"]  # not the package, not 'idle'
    parser, mounted = _parser([command])
    args = parser.parse_args(["spy", "count", "3"])
    assert run_plugin_command(mounted[args.group], args) == 3
    assert capsys.readouterr().out == "counted 3\n"


def test_no_commands_when_the_active_provider_has_no_cli(new_home: Callable[..., Path], marks: Path) -> None:
    home = new_home({"memory": {"provider": "sqlite_fts"}})
    _spy(home, marks)
    assert discover_plugin_cli_commands(home) == []
    assert list(marks.iterdir()) == []


@pytest.mark.parametrize("config", [{}, {"memory": {"provider": "nowhere"}}])
def test_no_commands_without_a_usable_configuration(new_home: Callable[..., Path], marks: Path,
                                                    config: dict) -> None:  # type: ignore[type-arg]
    home = new_home(config)
    _spy(home, marks)
    assert discover_plugin_cli_commands(home) == []
    (home / "config.yaml").write_text("memory: [not, a, mapping]\n")
    assert discover_plugin_cli_commands(home) == []
    assert list(marks.iterdir()) == []


def test_cli_without_register_cli_is_not_imported(new_home: Callable[..., Path], marks: Path) -> None:
    home = new_home({"memory": {"provider": "spy"}})
    root = _spy(home, marks)
    (root / "cli.py").write_text(spy_init(marks / "spy-cli") + "def other(parser):\n    pass\n")
    assert discover_plugin_cli_commands(home) == []
    assert list(marks.iterdir()) == []


def test_not_ready_provider_gets_a_refusing_command(
        new_home: Callable[..., Path], marks: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    home = new_home({"memory": {"provider": "spy"}})
    monkeypatch.setenv("HERMES_HOME", str(home))
    root = _spy(home, marks, deps=("sharedlib>=2",))
    [command] = discover_plugin_cli_commands(home)
    assert command.setup_fn is None and command.refusal is not None
    parser, mounted = _parser([command])
    args = parser.parse_args(["spy", "count", "3"])
    assert run_plugin_command(mounted["spy"], args) == 4
    assert capsys.readouterr().err == (
        "error: memory provider 'spy' is not ready: requires sharedlib>=2; no generation is "
        f"selected (declared in {root}/plugin.yaml); run `hermes pm sync`\n")
    assert list(marks.iterdir()) == []


def test_a_taken_name_is_not_mounted(new_home: Callable[..., Path], marks: Path) -> None:
    home = new_home({"memory": {"provider": "pm"}})
    _spy(home, marks, name="pm")
    [command] = discover_plugin_cli_commands(home)
    _, mounted = _parser([command])
    assert mounted == {}


def test_bundled_sidecar_cli_mounts_setup_and_status(
        new_home: Callable[..., Path], capsys: pytest.CaptureFixture[str]) -> None:
    home = new_home({"memory": {"provider": "sidecar_echo"}})
    [command] = discover_plugin_cli_commands(home)
    assert command.plugin.root == BUNDLED / "sidecar_echo"
    assert "hermes_plugins.memory.sidecar_echo.cli" in sys.modules
    assert getattr(sys.modules["hermes_plugins.memory.sidecar_echo"], "__hermes_stub__", False)
    parser, mounted = _parser([command])
    args = parser.parse_args(["sidecar_echo", "status", "--home", str(home)])
    assert run_plugin_command(mounted["sidecar_echo"], args) == 4
    assert capsys.readouterr().err == (f"no sidecar environment at {home}/plugins/.sidecar_echo; "
                                       "run `hermes sidecar_echo setup`\n")
    set_config(home, memory={"provider": "sqlite_fts"})
    assert discover_plugin_cli_commands(home) == []


def test_a_damaged_generation_refuses_the_command_not_hermes(
        new_home: Callable[..., Path], marks: Path, sync: Callable[..., Generation]) -> None:
    home = new_home({"memory": {"provider": "spy"}})
    _spy(home, marks, deps=("sharedlib>=2",))
    generation = sync(home, {"sharedlib": "2.0"})
    shutil.rmtree(generation.site_packages)
    [command] = discover_plugin_cli_commands(home)
    assert str(command.refusal) == (
        f"memory provider 'spy' cannot be judged: generation {generation.id} has no site-packages "
        f"at {generation.site_packages}; run `hermes pm sync` to rebuild it")
    assert list(marks.iterdir()) == []
