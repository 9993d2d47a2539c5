"""Every import path the plugin guide shows works as written (aliases where our names differ)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from agent.context import use_home
from agent.secrets import SecretScopeError, write_secret


def test_get_secret_from_agent_secret_scope_reads_the_bound_profile(tmp_path: Path) -> None:
    from agent.secret_scope import get_secret

    write_secret(tmp_path / "p", "MY_API_KEY", "k-123")
    with use_home(tmp_path / "p"):
        assert get_secret("MY_API_KEY") == "k-123"
    with pytest.raises(SecretScopeError):
        get_secret("MY_API_KEY")  # no profile bound: fails closed


def test_spawn_context_thread_of_the_guide_is_unstarted_and_carries_the_profile(
    tmp_path: Path,
) -> None:
    from agent.memory_provider import spawn_context_thread
    from agent.secret_scope import get_secret

    write_secret(tmp_path / "p", "MY_API_KEY", "k-123")
    seen: list[str | None] = []
    with use_home(tmp_path / "p"):
        t = spawn_context_thread(lambda: seen.append(get_secret("MY_API_KEY")),
                                 name="myprovider-sync")
    assert isinstance(t, threading.Thread) and not t.is_alive() and t.daemon
    t.start()  # the guide's second line: would raise if the thread were already started
    t.join(5)
    assert seen == ["k-123"] and t.name == "myprovider-sync"


def test_resolve_agent_cwd_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agent.runtime_cwd import LAUNCH_CWD, resolve_agent_cwd, use_session_cwd, use_terminal_cwd

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.delenv("TERMINAL_CWD", raising=False)
    with use_home(home):
        assert resolve_agent_cwd() == LAUNCH_CWD  # nothing set: the launch directory
        (home / "config.yaml").write_text(f"terminal:\n  cwd: {tmp_path / 'from-config'}\n")
        assert resolve_agent_cwd() == tmp_path / "from-config"
        monkeypatch.setenv("TERMINAL_CWD", str(tmp_path / "from-env"))
        assert resolve_agent_cwd() == tmp_path / "from-env"
        with use_terminal_cwd(tmp_path / "scoped"):
            assert resolve_agent_cwd() == tmp_path / "scoped"
            with use_session_cwd(tmp_path / "session"):
                assert resolve_agent_cwd() == tmp_path / "session"
            with use_session_cwd(""):  # empty: not pinned, the next source answers
                assert resolve_agent_cwd() == tmp_path / "scoped"
    assert os.getcwd() != str(tmp_path / "session")  # the process cwd is never changed


def test_register_session_cwd_updates_a_running_agent_and_remembers_for_a_late_one() -> None:
    from tui_gateway.session_workdir import _register_session_cwd, pending_session_cwd

    class Agent:
        session_cwd: str | None = "/old"

    agent = Agent()
    assert _register_session_cwd(agent, "/new") == "/new" and agent.session_cwd == "/new"
    assert _register_session_cwd(agent, "") is None and agent.session_cwd is None
    _register_session_cwd(None, "/moved", session_id="s1")
    assert pending_session_cwd("s1") == "/moved" and pending_session_cwd("s1") is None


def test_utils_json_helpers(tmp_path: Path) -> None:
    from utils import atomic_json_write, read_json_or_empty

    path = tmp_path / "my-provider.json"
    assert read_json_or_empty(path) == {}
    atomic_json_write(path, {"region": "eu-west"})
    assert read_json_or_empty(path) == {"region": "eu-west"}
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    path.write_text("{half")
    assert read_json_or_empty(path) == {}
    path.write_text("[1, 2]")
    assert read_json_or_empty(path) == {}
    assert [p.name for p in tmp_path.iterdir()] == ["my-provider.json"]  # no temp files left


def test_hermes_cli_save_config_merges_and_refuses_an_invalid_result(tmp_path: Path) -> None:
    from hermes_cli.config import ConfigWriteError, load_config, save_config

    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("memory:\n  provider: my-provider\nplugins:\n  enabled: [a]\n")
    with use_home(home):
        save_config({"memory": {"my-provider": {"region": "eu-west"}}}, merge_existing=True)
    assert load_config(home) == {"memory": {"provider": "my-provider",
                                            "my-provider": {"region": "eu-west"}},
                                 "plugins": {"enabled": ["a"]}}
    before = (home / "config.yaml").read_bytes()
    with pytest.raises(ConfigWriteError, match="plugins.enabled"):
        save_config({"plugins": {"enabled": "not-a-list"}}, home)
    assert (home / "config.yaml").read_bytes() == before
    assert sorted(p.name for p in home.iterdir()) == ["config.yaml", "pm"]  # pm/lock: saved under the home lock
    assert [p.name for p in (home / "pm").iterdir()] == ["lock"]


def test_hermes_constants_get_hermes_home_is_the_active_home(tmp_path: Path) -> None:
    from hermes_constants import get_hermes_home

    with use_home(tmp_path / "p"):
        assert get_hermes_home() == tmp_path / "p"
    assert json.dumps(str(get_hermes_home()))  # always has an answer
