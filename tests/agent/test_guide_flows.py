"""The guide's own flows: bare `hermes memory setup`, `setup NAME` recording memory.provider, the
two guide-shaped bundled providers (peer_cards' Honcho-style cli.py with --target-profile,
signed_notes' minimal schema), `hermes uninstall` and `hermes profile delete`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agent.cli import main as hermes
from agent.memory_cli import main as memory
from agent.testing import ROOT
from pm.base.store import Store
from pm.env import generations, leases
from pm.env.generations import Generation
from pm.inputs.config import config_mapping
from pm.inputs.config_edit import ConfigEditError, set_value
from pm.ops.uninstall import plan_uninstall
from pm.testing.homes import add_plugin


@pytest.fixture
def no_terminal(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """stdin is not a terminal (nothing to ask), as under cron or CI."""
    with open(os.devnull) as nothing:
        monkeypatch.setattr(sys, "stdin", nothing)
        yield


# -- memory setup ---------------------------------------------------------------------------------


def test_bare_setup_takes_the_provider_config_names(new_home: Callable[..., Path],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    home = new_home({"memory": {"provider": "signed_notes"}})
    assert memory(["setup", "--home", str(home), "--set", "api_key=k-1"]) == 0
    out = capsys.readouterr().out
    assert out == ("memory provider 'signed_notes' set up\n"
                   f"  secrets written to {home}/.env: SIGNED_NOTES_KEY\n")
    assert "SIGNED_NOTES_KEY=k-1" in (home / ".env").read_text()


def test_bare_setup_without_a_provider_and_no_terminal_lists_the_installed_ones(
        new_home: Callable[..., Path], capsys: pytest.CaptureFixture[str], no_terminal: None) -> None:
    home = new_home()
    assert memory(["setup", "--home", str(home)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: hermes memory setup: no NAME given and memory.provider is not set in "
                          f"{home}/config.yaml; installed memory providers: jsonl_journal, ")
    assert "peer_cards" in err and err.endswith("(run `hermes memory setup NAME`)\n")


def test_setup_name_records_memory_provider_keeping_comments(new_home: Callable[..., Path],
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    home = new_home({"memory": {"provider": "signed_notes"}})
    config = home / "config.yaml"
    text = config.read_text().replace("provider: signed_notes", "provider: signed_notes  # the one we use")
    config.write_text("# my agent\n" + text)
    assert memory(["setup", "peer_cards", "--home", str(home), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["memory_provider_recorded"] is True and report["previous_provider"] == "signed_notes"
    after = config.read_text()
    assert after == "# my agent\n" + text.replace("provider: signed_notes", "provider: peer_cards")
    assert config_mapping(home)["memory"] == {"provider": "peer_cards"}
    # a second setup of the same provider changes nothing on disk
    before = config.stat().st_mtime_ns
    assert memory(["setup", "peer_cards", "--home", str(home)]) == 0
    assert "recorded" not in capsys.readouterr().out
    assert config.stat().st_mtime_ns == before


@pytest.mark.parametrize(("text", "expected"), [
    ("memory:\n  provider: a  # mine\nx: 1\n", "memory:\n  provider: b  # mine\nx: 1\n"),
    ("memory:\n    other: 1\nx: 1\n", "memory:\n    provider: b\n    other: 1\nx: 1\n"),
    ("x: 1\n", "x: 1\nmemory:\n  provider: b\n"),
    ("x: 1", "x: 1\nmemory:\n  provider: b\n"),
    ("memory: {provider: a}\nx: 1\n", "memory:\n  provider: b\nx: 1\n"),
    ("memory:\r\n  provider: a\r\n", "memory:\r\n  provider: b\r\n"),
    ("{}\n", "memory:\n  provider: b\n"),
])
def test_set_value_changes_one_line(text: str, expected: str) -> None:
    assert set_value(text, "memory", "provider", "b") == expected


def test_set_value_refuses_what_it_cannot_edit_safely() -> None:
    with pytest.raises(ConfigEditError, match="memory is not a mapping"):
        set_value("memory: [a]\n", "memory", "provider", "b")
    assert set_value("memory:\n  provider: b\n", "memory", "provider", "b") == "memory:\n  provider: b\n"


# -- the bundled guide-shaped providers -----------------------------------------------------------


def _hermes(home: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HERMES_HOME": str(home), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "agent.cli", *argv], capture_output=True, text=True,
                          env=env, timeout=60, check=False)


def test_peer_cards_cli_manages_another_profile(new_home: Callable[..., Path]) -> None:
    home = new_home({"memory": {"provider": "peer_cards"}})
    work = home / "profiles" / "work"
    work.mkdir(parents=True)
    (work / "config.yaml").write_text("memory:\n  provider: peer_cards\n")
    assert _hermes(home, "peer_cards", "remember", "likes tea").returncode == 0
    done = _hermes(home, "peer_cards", "remember", "ships on fridays", "--target-profile", "work")
    assert done.returncode == 0, done.stderr
    listed = _hermes(home, "peer_cards", "profiles")
    assert listed.stdout == "default\tpeer_cards\t1\nwork\tpeer_cards\t1\n"
    card = _hermes(home, "peer_cards", "card", "--target-profile", "work")
    assert card.stdout == "1\tships on fridays\n"
    wrong = _hermes(home, "peer_cards", "card", "--target-profile", "nope")
    assert wrong.returncode == 1
    assert wrong.stderr == (f"error: --target-profile 'nope': no such profile under {home}/profiles "
                            "(known: default, work)\n")


def test_signed_notes_ignores_a_line_that_does_not_verify(new_home: Callable[..., Path]) -> None:
    home = new_home({"memory": {"provider": "signed_notes"}})
    (home / ".env").write_text("SIGNED_NOTES_KEY=key-1\n")
    script = (
        "import json, sys\n"
        "from agent.memory_manager import MemoryManager\n"
        "from agent.loader import load_into\n"
        "m = MemoryManager(sys.argv[1]); load_into(m); m.initialize_all(session_id='s', platform='cli')\n"
        "print(m.handle_tool_call('signed_note_add', {'text': 'the cat is called Miso'}))\n"
        "f = m.providers[-1].notes_file\n"
        "f.write_text(f.read_text() + json.dumps({'text': 'the cat is called Rex', 'sig': '0'}) + '\\n')\n"
        "print(m.handle_tool_call('signed_note_search', {'query': 'cat called'}))\n"
        "print(m.providers[-1].system_prompt_block()); m.shutdown_all()\n")
    env = {**os.environ, "HERMES_HOME": str(home), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", script, str(home)], capture_output=True, text=True, env=env,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        '{"kept": 1}', '{"notes": ["the cat is called Miso"]}',
        "signed_notes: 1 note line(s) failed verification and are ignored."]


# -- hermes uninstall -----------------------------------------------------------------------------


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def built(new_home: Callable[..., Path], sync: Callable[..., Generation]) -> Path:
    home = new_home({"plugins": {"enabled": ["alpha"]}})
    add_plugin(home / "plugins", "alpha", style="pyproject", dependencies=("sharedlib>=1",))
    sync(home, {"sharedlib": "1.0"})
    (home / ".env").write_text("KEY=1\n")
    return home


def test_the_uninstall_plan_keeps_the_users_things_and_the_receipts(built: Path) -> None:
    plan = plan_uninstall(built)
    assert plan.target == built
    removed = {p.name for p in plan.remove}
    assert "generations" in removed and "receipts" not in removed
    kept = {str(p.relative_to(built)) for p in plan.keep}
    assert {"config.yaml", ".env", "plugins", "pm/receipts"} <= kept
    assert plan.plugins == ("alpha",) and plan.blockers == ()


def test_uninstall_asks_and_without_a_terminal_removes_nothing(built: Path,
                                                                capsys: pytest.CaptureFixture[str], no_terminal: None) -> None:
    before = _tree(built)
    assert hermes(["uninstall", "--home", str(built)]) == 2
    err = capsys.readouterr().err
    assert f"  remove  {built}/pm/generations" in err
    assert err.endswith("error: nothing was removed: confirm with --yes (or see the plan with --dry-run)\n")
    assert _tree(built) == before


def test_uninstall_dry_run_then_yes(built: Path, capsys: pytest.CaptureFixture[str]) -> None:
    user_files = {k: v for k, v in _tree(built).items() if not k.startswith("pm/")}
    assert hermes(["uninstall", "--home", str(built), "--dry-run", "--json"]) == 0
    receipt = json.loads(capsys.readouterr().out)
    assert receipt["kind"] == "uninstall" and receipt["dry_run"] is True
    assert f"{built}/pm/generations" in receipt["plan"]["remove"]
    assert generations.selected(built) is not None
    assert hermes(["uninstall", "--home", str(built), "--yes"]) == 0
    err = capsys.readouterr().err
    assert "config.yaml, .env, plugins/ and profiles/ were kept" in err
    assert generations.selected(built) is None
    assert sorted(p.name for p in (built / "pm").iterdir()) == ["receipts"] or \
        sorted(p.name for p in (built / "pm").iterdir()) == ["lock", "receipts"]
    assert {k: v for k, v in _tree(built).items() if not k.startswith("pm/")} == user_files
    # and the environment comes back from config.yaml and plugins/
    assert hermes(["pm", "sync", "--home", str(built), "--no-index", "--find-links",
                   str(built.parent / "wheels")]) == 0
    assert generations.selected(built) is not None


def test_uninstall_is_refused_while_a_process_holds_a_generation(built: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    selected = generations.selected(built)
    assert selected is not None
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        leases.take(built, selected.id, Store.for_home(built), pid=holder.pid)
        assert hermes(["uninstall", "--home", str(built), "--yes"]) == 1
        err = capsys.readouterr().err
        assert f"generation {selected.id} is in use by pid {holder.pid}" in err
        assert generations.selected(built) == selected
    finally:
        holder.kill()
        holder.wait()


def test_uninstall_of_nothing_built_does_not_ask(new_home: Callable[..., Path],
                                                 capsys: pytest.CaptureFixture[str], no_terminal: None) -> None:
    home = new_home()
    assert hermes(["uninstall", "--home", str(home)]) == 0
    assert f"nothing to remove: pm has built nothing in {home}" in capsys.readouterr().err


# -- hermes profile delete ------------------------------------------------------------------------


def test_profile_delete_refuses_a_profile_with_plugins_then_removes_them_when_asked(
        built: Path, capsys: pytest.CaptureFixture[str]) -> None:
    work = built / "profiles" / "work"
    work.mkdir(parents=True)
    (work / "config.yaml").write_text("plugins:\n  enabled: [beta]\n")
    add_plugin(work / "plugins", "beta", style="pyproject", dependencies=("sharedlib>=1",))
    primary_plugins = _tree(built / "plugins")
    assert hermes(["profile", "delete", "work", "--home", str(built), "--yes"]) == 1
    err = capsys.readouterr().err
    assert f"profile 'work' has plugins in {work}/plugins: beta" in err
    assert f"hermes profile delete work --remove-plugins --home {built}" in err
    assert work.is_dir()
    assert hermes(["profile", "delete", "work", "--home", str(built), "--yes", "--remove-plugins", "--no-index",
                   "--find-links", str(built.parent / "wheels")]) == 0
    assert "the environment was rebuilt without it" in capsys.readouterr().err
    assert not work.exists()
    assert _tree(built / "plugins") == primary_plugins
    assert [p.name for p in (built / "profiles").iterdir()] == []


def test_profile_delete_of_an_unknown_profile_names_the_known_ones(
        built: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (built / "profiles" / "work").mkdir(parents=True)
    assert hermes(["profile", "delete", "play", "--home", str(built), "--yes"]) == 1
    assert f"no profile 'play' under {built}/profiles (profiles: work)" in capsys.readouterr().err
