"""What ``initialize`` receives at agent start-up (AgentSession → MemoryManager.initialize_all)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from agent.memory_provider import ProviderInitError
from agent.session import AgentSession
from agent.testing import provider_init
from pm.inputs.catalog import SHIPPED

RECORDING = provider_init("rec").replace(
    '        self.home = kwargs["hermes_home"]\n',
    '        self.home = kwargs["hermes_home"]\n        self.kwargs = kwargs\n'
    '        if kwargs.get("platform") == "broken":\n            raise RuntimeError("backend down")\n')


def _home(new_home: Callable[..., Path]) -> Path:
    home = new_home({"memory": {"provider": "rec"}}, name="profiles-root")
    root = home / "plugins" / "rec"
    root.mkdir(parents=True)
    (root / "plugin.yaml").write_text("name: rec\n")
    (root / "__init__.py").write_text(RECORDING)
    return home


def test_initialize_gets_the_home_the_platform_the_identity_and_the_build_time_cwd(
    new_home: Callable[..., Path], tmp_path: Path,
) -> None:
    home = _home(new_home)
    session = AgentSession(home, "s1", platform="telegram", cwd=tmp_path / "ws").start()
    assert session.loaded is not None
    assert session.loaded.provider.kwargs == {  # type: ignore[attr-defined]
        "hermes_home": str(home), "platform": "telegram", "agent_identity": "default",
        "cwd": str(tmp_path / "ws")}
    session.close()


def test_an_empty_cwd_stays_unpinned(new_home: Callable[..., Path]) -> None:
    session = AgentSession(_home(new_home), "s1", cwd="").start()
    assert "cwd" not in session.loaded.provider.kwargs  # type: ignore[union-attr,attr-defined]
    assert session.session_cwd is None
    session.close()


def test_a_provider_that_fails_to_initialize_is_reported(new_home: Callable[..., Path]) -> None:
    with pytest.raises(ProviderInitError, match="memory provider 'rec' failed to initialize: "
                                                "RuntimeError: backend down"):
        AgentSession(_home(new_home), "s1", platform="broken").start()


def test_start_up_runs_the_lazy_install_hook(new_home: Callable[..., Path]) -> None:
    home = new_home({"memory": {"provider": "honcho-lite"}})  # configured, nothing provides it
    told: list[str] = []
    from agent.errors import ProviderNotFound

    with pytest.raises(ProviderNotFound):
        AgentSession(home, "s1", say=told.append).start()
    assert told == [f"WARNING: memory provider 'honcho-lite' (configured in {home / 'config.yaml'}) is "
                    f"not installed; the agent will run WITHOUT its memory. The catalog ({SHIPPED}) has no entry "
                    "'honcho-lite', so `hermes update` cannot install it: install it from its source (`hermes plugins "
                    "install SOURCE`) or choose an installed provider (`hermes memory setup NAME`)"]
