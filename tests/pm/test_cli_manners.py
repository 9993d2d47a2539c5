"""uv's CLI manners (issue 14, finding 3 and 4): no abbreviations, "did you mean" for typos,
global options before or after the command, ``--version``, ``--python`` by version or name, and
a home that does not exist refused, from ``--home`` or ``$HERMES_HOME``, with nothing created."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from agent.cli import main as hermes
from pm.base.errors import UsageError
from pm.cli import main as pm_main
from pm.cli._parser import hoist_globals
from pm.inputs.target import find_python
from pm.testing import make_home


@pytest.fixture
def home(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.delenv("HERMES_HOME", raising=False)
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "no-bundled"))
    return make_home(tmp_path / "home")


def usage_error(capsys, argv: list[str], run=hermes) -> str:
    with pytest.raises(SystemExit) as exited:
        run(argv)
    assert exited.value.code == 2
    return capsys.readouterr().err


def test_an_abbreviated_option_is_a_usage_error_not_a_guess(home, capsys):
    err = usage_error(capsys, ["pm", "resolve", "--home", str(home), "--no"])
    assert "unrecognized arguments: --no" in err
    err = usage_error(capsys, ["sync", "--home", str(home), "--from", "x", "--ign"], run=pm_main)
    assert "unrecognized arguments: --ign" in err
    assert not (home / "pm").exists()  # nothing ran


def test_a_mistyped_option_names_the_real_one_with_the_command_usage(home, capsys):
    err = usage_error(capsys, ["pm", "resolve", "--home", str(home), "--ofline"])
    assert err.splitlines()[-1] == (
        "hermes pm resolve: error: unrecognized arguments: --ofline (did you mean --offline?)")


def test_a_mistyped_command_names_the_real_one(capsys):
    err = usage_error(capsys, ["pm", "sycn"])
    assert err.rstrip().endswith("(did you mean 'sync'?)")
    err = usage_error(capsys, ["plugin", "list"])
    assert err.rstrip().endswith("(did you mean 'plugins'?)")


def test_version_exits_0(capsys):
    with pytest.raises(SystemExit) as exited:
        hermes(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.startswith("hermes (hermes-pm ")


def test_global_options_before_the_group_or_the_command(home, capsys):
    assert hermes(["--home", str(home), "--json", "pm", "status"]) == 0
    assert json.loads(capsys.readouterr().out)["home"] == str(home)
    assert pm_main([f"--home={home}", "-q", "status", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["home"] == str(home)
    assert hoist_globals(["-v", "plugins", "install", "x", "--", "y"]) == ["plugins", "install", "x", "-v", "--", "y"]


def test_global_options_between_the_group_and_the_command(home, capsys):
    """``hermes pm --json status`` and ``hermes pm --home H status`` (uv takes them anywhere)."""
    assert hermes(["pm", "--json", "status", "--home", str(home)]) == 0
    assert json.loads(capsys.readouterr().out)["home"] == str(home)
    assert hermes(["pm", "--home", str(home), "status", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["home"] == str(home)
    assert hermes(["--home", str(home), "pm", "-q", "--json", "status"]) == 0
    assert json.loads(capsys.readouterr().out)["home"] == str(home)
    assert hoist_globals(["pm", "--json", "why", "requests"]) == ["pm", "why", "requests", "--json"]
    assert hoist_globals(["pm", "resolve", "--index-url", "u", "--json"]) == [
        "pm", "resolve", "--index-url", "u", "--json"]  # after the command's own options: its parser's


@pytest.mark.parametrize("argv", [["--version"], ["-V"], ["pm", "--version"], ["pm", "-V"]])
def test_version_at_every_level(argv, capsys):
    with pytest.raises(SystemExit) as exited:
        hermes(argv)
    assert exited.value.code == 0
    prog = "hermes pm" if argv[0] == "pm" else "hermes"
    assert capsys.readouterr().out.startswith(f"{prog} (hermes-pm ")


def test_python_by_version_or_name_is_found_on_path(tmp_path, monkeypatch):
    fake = tmp_path / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    fake.parent.mkdir()
    fake.symlink_to(sys.executable)
    monkeypatch.setenv("PATH", str(fake.parent))
    assert find_python(f"{sys.version_info.major}.{sys.version_info.minor}") == str(fake)
    assert find_python(fake.name) == str(fake)
    assert find_python(str(fake)) == str(fake)


def test_python_that_nothing_provides_is_a_usage_error(tmp_path, monkeypatch, home, capsys):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(UsageError) as raised:
        find_python("3.99")
    assert str(raised.value) == ("--python 3.99: no such interpreter ('python3.99' is not on PATH and "
                                 "`uv python find` found none installed)")
    assert hermes(["pm", "scan", "--home", str(home), "--python", "3.99"]) == 2
    assert "--python 3.99: no such interpreter" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["pm", "scan"], ["pm", "status"], ["pm", "check"], ["memory", "status"],
                                  ["plugins", "list"]])
def test_a_missing_hermes_home_is_a_usage_error_and_nothing_is_created(argv, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "typo"))
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    assert hermes(argv) == 2
    assert f"HERMES_HOME={tmp_path / 'typo'}: no such folder" in capsys.readouterr().err
    assert not (tmp_path / "typo").exists()


def test_a_missing_default_home_is_a_usage_error(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("HERMES_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert hermes(["pm", "scan"]) == 2
    assert f"{tmp_path / '.hermes'}: no such folder" in capsys.readouterr().err
    assert os.listdir(tmp_path) == []


def test_the_package_diff_names_removals_and_additions_by_name():
    from pm.cli._changes import diff

    assert diff({"b": "1", "a": "1", "c": "2"}, {"a": "1", "b": "2", "D": "1"}) == [
        "- b==1", "+ b==2", "- c==2", "+ D==1"]


@pytest.mark.parametrize(("source", "shown"), [
    ("git+https://host/x/y", "git+https://host/x/y@<40-hex commit>"),
    ("git+https://host/x/y@main", "git+https://host/x/y@<40-hex commit> (got 'main')"),
    ("git+ssh://git@host/x/y", "git+ssh://git@host/x/y@<40-hex commit>"),
])
def test_a_git_source_without_a_commit_says_it_needs_one(source, shown, home, capsys):
    assert hermes(["plugins", "install", source, "--home", str(home)]) == 1
    assert f"{source}: a git source needs a pinned commit: {shown}" in capsys.readouterr().err
    assert not (home / "plugins").exists() or not any((home / "plugins").iterdir())
