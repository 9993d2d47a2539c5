"""plugins/memory/sidecar_echo end to end: its own environment built with uv from
runtime/pyproject.toml, a backend process on that interpreter, and pm leaving all of it alone."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import pm.cli
from agent.loader import load_into
from agent.memory_manager import MemoryManager
from agent.memory_provider import ProviderInitError
from agent.plugin_cli import discover_plugin_cli_commands, mount_plugin_cli_commands, run_plugin_command
from agent.testing import BUNDLED, wheel_from_installed
from pm.env import generations
from pm.inputs.collect import gather
from pm.inputs.settings import Flags
from pm.testing.homes import tree_digest


@pytest.fixture
def home(clean_env: Path, new_home: Callable[..., Path], monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(clean_env / "xdg-cache"))  # uv's own cache stays in tmp
    return new_home({"memory": {"provider": "sidecar_echo"}})


def _hermes_sidecar(home: Path, *argv: str) -> int:
    """``hermes sidecar_echo ARGV…`` as the host mounts it."""
    [command] = discover_plugin_cli_commands(home)
    parser = argparse.ArgumentParser(prog="hermes")
    mounted = mount_plugin_cli_commands(parser.add_subparsers(dest="group", required=True), [command])
    args = parser.parse_args(["sidecar_echo", *argv])
    return run_plugin_command(mounted[args.group], args)


def test_pm_treats_it_as_sidecar_only(home: Path) -> None:
    status = gather(home, Flags()).find("sidecar_echo")
    assert status is not None
    assert (status.status, status.plugin.root.path) == ("sidecar-only", BUNDLED / "sidecar_echo")


def test_sidecar_end_to_end(clean_env: Path, home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manager = MemoryManager(home)
    load_into(manager)
    with pytest.raises(ProviderInitError) as caught:  # no sidecar environment yet: loud, not silent
        manager.initialize_all(session_id="test-0", platform="cli")
    assert str(caught.value) == ("memory provider 'sidecar_echo' is not available (is_available() "
                                 "returned False) (run `hermes memory status` for details)")
    manager.shutdown_all()

    wheels = clean_env / "sidecar-wheels"
    wheel_from_installed("packaging", wheels)
    assert _hermes_sidecar(home, "setup", "--home", str(home), "--find-links", str(wheels),
                           "--no-index") == 0, capsys.readouterr().err
    venv = home / "plugins" / ".sidecar_echo" / "venv"
    assert capsys.readouterr().out == f"sidecar environment ready: {venv}/bin/python\n"

    before = tree_digest(home / "plugins")
    assert pm.cli.main(["sync", "--home", str(home), "--no-index", "--find-links", str(wheels)]) == 0
    generation = generations.selected(home)
    assert generation is not None and generation.record["resolution"]["packages"] == []
    assert tree_digest(home / "plugins") == before  # pm never touches the sidecar

    manager = MemoryManager(home)
    try:
        loaded = load_into(manager)
        assert loaded is not None and loaded.readiness.reason == (
            "no declaration at its root (it brings its own environment)")
        manager.initialize_all(session_id="test-1", platform="cli")
        provider = loaded.provider
        info = provider.backend_info  # type: ignore[attr-defined]
        assert (info["prefix"], info["python"], info["protocol"]) == (str(venv), f"{venv}/bin/python", "1.0")
        assert info["prefix"] != sys.prefix
        assert info["hermes_home"] == str(home)  # the wrapper passes HERMES_HOME to its backend
        stored = json.loads(manager.handle_tool_call("sidecar_remember", {"content": "Miso is a cat"}))
        assert stored == {"stored": True, "count": 1}
        manager.sync_all("Where do I live?", "In Lisbon, you said.")
        assert manager.wait_idle(10)
        recall = json.loads(manager.handle_tool_call("sidecar_recall", {"query": "cat called Miso"}))
        assert recall == {"results": [{"content": "Miso is a cat", "kind": "fact"}]}
        assert manager.prefetch("do I live in Lisbon?") == (
            "## Sidecar memory (sidecar_echo)\n- User: Where do I live?\nAssistant: In Lisbon, you said.")
        process = provider._backend.process  # type: ignore[attr-defined]
        manager.on_session_end([])
    finally:
        manager.shutdown_all()
    assert process.poll() == 0  # asked to stop, it stopped
    data = home / "memory" / "sidecar_echo.jsonl"
    assert [json.loads(line)["kind"] for line in data.read_text().splitlines()] == ["fact", "turn"]


def test_setup_failure_keeps_nothing_half_built(clean_env: Path, home: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    empty = clean_env / "no-wheels"
    empty.mkdir()
    assert _hermes_sidecar(home, "setup", "--home", str(home), "--find-links", str(empty),
                           "--no-index") == 1
    err = capsys.readouterr().err
    assert err.startswith("error: sidecar_echo setup failed: `uv pip install` exited with 1\n")
    assert "packaging" in err
    assert sorted(p.name for p in (home / "plugins" / ".sidecar_echo").iterdir()) == []
