"""The pre-compress checkpoint contract (API v2), as the guide states it."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from agent.checkpoint import BLOCKED_MISSING_PREREQUISITE, CheckpointBlocked, normalize_evidence
from agent.compression import CompressionConfigError, CompressionSettings, compress
from agent.memory_manager import MemoryManager
from agent.memory_provider import MemoryProvider

TRANSCRIPT: list[dict[str, Any]] = [
    {"role": "system", "content": "You are Hermes."},
    {"role": "user", "content": [{"type": "text", "text": "Earlier summary"}], "_compressed_summary": True},
    {"role": "user", "content": "My cat is Miso."},
    {"role": "assistant", "content": "Noted.", "tool_calls": [{"id": "t1", "function": {"name": "x"}}]},
    {"role": "tool", "tool_call_id": "t1", "content": "secret tool output"},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "t2"}]},
    {"role": "user", "content": [{"type": "text", "text": "Parts"}, {"type": "image_url"}]},
    {"role": "assistant", "content": "tail 1"},
    {"role": "user", "content": "tail 2"},
]


class Base(MemoryProvider):
    def __init__(self, name: str = "rec") -> None:
        self._name, self.got = name, []  # type: ignore[var-annotated]

    @property
    def name(self) -> str:
        return self._name

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        pass

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return []


class V1(Base):
    def on_pre_compress(self, messages):  # type: ignore[no-untyped-def,override]
        self.got.append(messages)
        raise RuntimeError("v1 is best effort")


class V2(Base):
    pre_compress_checkpoint_api_version = 2

    def __init__(self, fail: bool = False) -> None:
        super().__init__("archive")
        self.fail, self.archived = fail, []  # type: ignore[var-annotated]

    def on_pre_compress(self, messages, *, require_checkpoint=False):  # type: ignore[no-untyped-def,override]
        self.got.append((messages, require_checkpoint))
        if self.fail:
            raise OSError("archive unreachable")
        self.archived.append(json.dumps(messages))
        return f"checkpoint: {len(self.archived)}"


class V2WithoutKeyword(V2):  # the Portuguese sample's signature
    def on_pre_compress(self, messages):  # type: ignore[no-untyped-def,override]
        return super().on_pre_compress(messages)


def _manager(tmp_path: Path, *providers: MemoryProvider) -> MemoryManager:
    mgr = MemoryManager(tmp_path)
    for p in providers:
        assert mgr.add_provider(p)
    mgr.initialize_all("s")
    return mgr


def test_normalized_evidence_is_user_and_assistant_text_only() -> None:
    assert normalize_evidence(TRANSCRIPT) == [
        {"role": "user", "content": "My cat is Miso."},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": "Parts"},
        {"role": "assistant", "content": "tail 1"},
        {"role": "user", "content": "tail 2"},
    ]
    # the mark survives a restart: it is part of the stored message
    assert normalize_evidence(json.loads(json.dumps(TRANSCRIPT)))[0]["content"] == "My cat is Miso."


def test_v1_gets_raw_messages_and_its_failure_never_blocks(tmp_path: Path) -> None:
    v1 = V1()
    mgr = _manager(tmp_path, v1)
    assert mgr.on_pre_compress(TRANSCRIPT) == ""
    assert v1.got == [TRANSCRIPT]


def test_v2_gets_evidence_and_require_checkpoint(tmp_path: Path) -> None:
    v2 = V2()
    mgr = _manager(tmp_path, v2)
    assert mgr.on_pre_compress(TRANSCRIPT, require_checkpoint=True) == "checkpoint: 1"
    assert v2.got == [(normalize_evidence(TRANSCRIPT), True)]
    plain = V2WithoutKeyword()
    mgr2 = _manager(tmp_path / "2", plain)
    assert mgr2.on_pre_compress(TRANSCRIPT, require_checkpoint=True) == "checkpoint: 1"


def test_a_failing_v2_blocks_only_when_required(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    mgr = _manager(tmp_path, V2(fail=True))
    assert mgr.on_pre_compress(TRANSCRIPT) == ""  # not required: logged, compaction goes on
    with pytest.raises(CheckpointBlocked) as err:
        mgr.on_pre_compress(TRANSCRIPT, require_checkpoint=True)
    assert err.value.code == BLOCKED_MISSING_PREREQUISITE and err.value.providers == ("archive",)
    assert str(err.value) == (
        "BLOCKED_MISSING_PREREQUISITE: compaction blocked before the lossy rewrite: memory provider "
        "'archive' did not complete its checkpoint (OSError: archive unreachable); the transcript is "
        "unchanged and the next attempt retries the checkpoint (to stop requiring it, set "
        "compression.checkpoint_required: false)")
    assert isinstance(err.value.__cause__, OSError)


def test_compress_blocks_then_proceeds_and_marks_the_summary(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("compression:\n  checkpoint_required: true\n  keep_last: 2\n")
    settings = CompressionSettings.for_home(tmp_path)
    v2 = V2(fail=True)
    mgr = _manager(tmp_path, v2)
    before = json.dumps(TRANSCRIPT)
    with pytest.raises(CheckpointBlocked):
        compress(TRANSCRIPT, mgr, settings)
    assert json.dumps(TRANSCRIPT) == before
    v2.fail = False
    result = compress(TRANSCRIPT, mgr, settings)
    assert result is not None and result.compressed == 6 and result.provider_notes == "checkpoint: 1"
    assert result.messages[0] == TRANSCRIPT[0] and result.messages[-2:] == TRANSCRIPT[-2:]
    assert result.summary["_compressed_summary"] is True and "checkpoint: 1" in result.summary["content"]
    # the retry archived the same evidence the blocked attempt saw: idempotent keys are possible
    assert v2.got[0] == v2.got[1]
    # a resumed session never sends the summary of a summary to the archive
    assert all(m["content"] != result.summary["content"] for m in normalize_evidence(result.messages))


def test_required_without_any_v2_provider_blocks_every_compaction(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("compression:\n  checkpoint_required: true\n")
    mgr = _manager(tmp_path, V1())
    with pytest.raises(CheckpointBlocked, match="no active memory provider declares"):
        compress(TRANSCRIPT, mgr, CompressionSettings.for_home(tmp_path))


def test_other_compaction_authorities_are_gated(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(
        "compression:\n  checkpoint_required: true\n  codex_responses_native: true\n  micro_compact: true\n")
    armed = CompressionSettings.for_home(tmp_path)
    assert (armed.codex_responses_native, armed.micro_compact) == (False, False)
    assert len(armed.notes) == 2
    with pytest.raises(CompressionConfigError, match="api_mode: 'codex_app_server' is refused"):
        armed.check_api_mode("codex_app_server")
    (tmp_path / "config.yaml").write_text(
        "compression:\n  codex_responses_native: true\n  micro_compact: true\n")
    free = CompressionSettings.for_home(tmp_path)
    assert (free.codex_responses_native, free.micro_compact, free.notes) == (True, True, ())
    free.check_api_mode("codex_app_server")


def test_start_up_warns_naming_the_opted_in_providers(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from agent.session import AgentSession

    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("compression:\n  checkpoint_required: true\n  micro_compact: true\n")
    told: list[str] = []
    with caplog.at_level(logging.WARNING):
        session = AgentSession(home, "s1", say=told.append).start()
    assert told == [
        "compression.micro_compact is forced off while compression.checkpoint_required is true (it "
        "rolls old turns into a summary without a checkpoint hook)",
        "compression.checkpoint_required is true: compaction needs a pre-compress checkpoint from the "
        "memory providers that opted in: none (every compaction will be blocked)"]
    with pytest.raises(CheckpointBlocked):
        session.compress(TRANSCRIPT)
    session.close()
    with pytest.raises(CompressionConfigError):
        AgentSession(home, "s2", api_mode="codex_app_server").start()
