"""Prefetch caps and opt-in spill; multi-profile caller rules and their log event."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any

import pytest

from agent.context import use_home
from agent.logs import log_path
from agent.memory_manager import MemoryManager
from agent.memory_provider import MemoryProvider


class Big(MemoryProvider):
    def __init__(self, size: int = 0) -> None:
        self.size, self.tool_kwargs = size, []  # type: ignore[var-annotated]

    @property
    def name(self) -> str:
        return "big"

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        pass

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [{"name": "big_tool", "description": "", "parameters": {"type": "object"}}]

    def handle_tool_call(self, name: str, args: dict[str, Any], **kwargs: Any) -> str:
        self.tool_kwargs.append(kwargs)
        return "{}"

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        return "H" * 500 + "m" * (self.size - 1000) + "T" * 500


def _mgr(home: Path, size: int, config: str = "", **kw: Any) -> MemoryManager:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(config)
    mgr = MemoryManager(home, **kw)
    mgr.add_provider(Big(size))
    mgr.initialize_all("s")
    return mgr


def test_prefetch_is_whole_by_default_up_to_the_safety_cap(tmp_path: Path) -> None:
    assert len(_mgr(tmp_path / "a", 99_000).prefetch("q")) == 99_000  # ~10x the threshold: whole
    capped = _mgr(tmp_path / "b", 120_000).prefetch("q")  # above max(10 * 10,000, 100,000)
    spilled = list((tmp_path / "b" / "spill").iterdir())
    assert len(spilled) == 1 and len(spilled[0].read_text()) == 120_000
    assert capped.startswith("H" * 500 + "\n\n[memory prefetch of 'big': 120000 chars; the 119000 chars")
    assert capped.endswith("]\n\n" + "T" * 500) and str(spilled[0]) in capped
    assert oct(spilled[0].stat().st_mode & 0o777) == "0o600"
    # the cap is 10 x max_chars when that is larger than 100,000
    assert len(_mgr(tmp_path / "c", 150_000, "hooks:\n  output_spill:\n    max_chars: 20000\n").prefetch("q")) == 150_000


def test_opt_in_spill_uses_the_threshold_and_the_preview_settings(tmp_path: Path) -> None:
    config = ("memory:\n  prefetch_spill_enabled: true\nhooks:\n  output_spill:\n    max_chars: 2000\n"
              f"    preview_head_chars: 100\n    preview_tail_chars: 50\n    dir: {tmp_path / 'out'}\n")
    mgr = _mgr(tmp_path / "h", 3000, config)
    text = mgr.prefetch("q")
    assert text.startswith("H" * 100 + "\n\n[") and text.endswith("]\n\n" + "T" * 50)
    assert len(list((tmp_path / "out").iterdir())) == 1
    assert len(_mgr(tmp_path / "h2", 2000, config).prefetch("q")) == 2000  # at the threshold: whole
    # values are fixed at registration: a later change needs a restart
    (tmp_path / "h" / "config.yaml").write_text("")
    assert len(mgr.prefetch("q")) < 3000


def test_output_spill_disabled_overrides_the_memory_opt_in(tmp_path: Path) -> None:
    config = "memory:\n  prefetch_spill_enabled: true\nhooks:\n  output_spill:\n    enabled: false\n"
    assert len(_mgr(tmp_path / "a", 50_000, config).prefetch("q")) == 50_000
    cut = _mgr(tmp_path / "b", 200_000, config).prefetch("q")
    assert "199000 of 200000 chars omitted (safety cap; hooks.output_spill.enabled is false)" in cut
    assert not (tmp_path / "b" / "spill").exists()


def test_tool_calls_receive_home_identity_and_caller_gsk(tmp_path: Path) -> None:
    home = tmp_path / "profiles" / "work"
    mgr = _mgr(home, 1000)
    provider = mgr.providers[0]
    mgr.handle_tool_call("big_tool", {}, caller_gsk="gw:work:42", hermes_home="/spoofed")
    assert provider.tool_kwargs == [{"session_id": "s", "hermes_home": str(home),  # type: ignore[attr-defined]
                                     "agent_identity": "work", "caller_gsk": "gw:work:42"}]


def test_only_the_initializing_profile_calls_in(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    mgr = _mgr(tmp_path / "a", 1000)
    with use_home(tmp_path / "b"):  # another profile's caller
        assert "refused" in json.loads(mgr.handle_tool_call("big_tool", {}))["error"]
        assert mgr.prefetch("q") == ""
    with use_home(tmp_path / "a"):
        assert mgr.prefetch("q") != ""
    assert mgr.prefetch("q") != ""  # single-profile process: an unnamed caller is this profile
    assert "memory_caller_profile_mismatch" in log_path(tmp_path / "a", "errors").read_text()


def test_a_gateway_refuses_a_caller_that_names_no_profile_and_logs_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str],
) -> None:
    from agent.cli import main as hermes

    home = tmp_path / "profiles" / "work"
    mgr = _mgr(home, 1000, multi_profile=True)
    out: dict[str, Any] = {}

    def unnamed() -> None:  # a bare thread: the caller names no profile
        out["tool"] = json.loads(mgr.handle_tool_call("big_tool", {}))
        out["prefetch"] = mgr.prefetch("q")
        mgr.sync_all("u", "a")

    with caplog.at_level(logging.WARNING):
        t = threading.Thread(target=unnamed)
        t.start()
        t.join(10)
    assert "error" in out["tool"] and out["prefetch"] == ""
    for which in ("errors", "gateway"):
        lines = log_path(home, which).read_text().splitlines()
        assert len(lines) == 3 and all(" WARNING memory_caller_profile_unresolved: " in line for line in lines)
    assert any(getattr(r, "event", None) == "memory_caller_profile_unresolved" for r in caplog.records)
    with use_home(home):  # a caller that names the profile is served
        assert mgr.prefetch("q") != ""
    assert hermes(["logs", "errors", "--home", str(home), "-n", "1"]) == 0
    assert "memory_caller_profile_unresolved: sync_turn refused" in capsys.readouterr().out
    mgr.shutdown_all()
