"""agent.memory_provider: the contract, its defaults, and calls across signature generations."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import pytest

import agent.memory_provider as memory_provider
from agent.memory_provider import (
    PRE_COMPRESS_CHECKPOINT_API_VERSION,
    InitFailure,
    MemoryProvider,
    ProviderInitError,
    accepted_kwargs,
    call_sync_turn,
)


class Minimal(MemoryProvider):
    """Implements only what the contract requires."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    @property
    def name(self) -> str:
        return "minimal"

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self.calls.append(("initialize", session_id, kwargs))

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return []

    def handle_tool_call(self, name: str, args: dict[str, Any], **kwargs: Any) -> str:
        return "{}"

    def get_config_schema(self) -> list[dict[str, Any]]:
        return []

    def save_config(self, values: dict[str, Any], hermes_home: str | Path) -> None:
        pass


class CurrentSync(Minimal):
    def sync_turn(
        self,
        user: str,
        assistant: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        self.calls.append(("sync", user, assistant, session_id, messages))


class OldSync(Minimal):
    def sync_turn(self, user, assistant):  # type: ignore[no-untyped-def, override]
        self.calls.append(("sync", user, assistant))


class SessionOnlySync(Minimal):
    def sync_turn(  # type: ignore[no-untyped-def, override]
        self, user, assistant, *, session_id=""
    ):
        self.calls.append(("sync", user, assistant, session_id))


class KwargsSync(Minimal):
    def sync_turn(self, user, assistant, **kwargs):  # type: ignore[no-untyped-def, override]
        self.calls.append(("sync", user, assistant, kwargs))


def test_the_required_methods_are_abstract() -> None:
    assert MemoryProvider.__abstractmethods__ == frozenset(
        {
            "name",
            "is_available",
            "initialize",
            "get_tool_schemas",
        }
    )
    with pytest.raises(TypeError):
        MemoryProvider()  # type: ignore[abstract]


class EnvOnly(MemoryProvider):
    """The guide's environment-variable-only provider without tools: it leaves ``save_config``,
    ``handle_tool_call`` and ``get_config_schema`` to their defaults."""

    @property
    def name(self) -> str:
        return "env-only"

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        pass

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return []


def test_save_config_handle_tool_call_and_get_config_schema_have_no_op_defaults(
    tmp_path: Path,
) -> None:
    p = EnvOnly()
    assert p.get_config_schema() == []
    assert p.save_config({"region": "eu"}, str(tmp_path)) is None
    assert list(tmp_path.iterdir()) == []
    assert json.loads(p.handle_tool_call("nope", {}, session_id="s")) == {
        "error": "memory provider 'env-only' has no tool 'nope'"}


def test_optional_hooks_default_to_no_ops() -> None:
    p = Minimal()
    assert p.system_prompt_block() == ""
    assert p.prefetch("q") == ""
    assert p.prefetch("q", session_id="s") == ""
    assert p.on_pre_compress([{"role": "user", "content": "x"}]) == ""
    p.queue_prefetch("q", session_id="s")
    p.sync_turn("u", "a", session_id="s", messages=[])
    p.on_session_end([])
    p.on_memory_write("add", "memory", "x")
    p.on_memory_write("replace", "memory", "y", metadata={"previous_content": "x"})
    assert p.on_pre_compress([], require_checkpoint=True) == ""
    p.shutdown()
    p.shutdown()  # safe twice
    assert p.calls == []


def test_pre_compress_checkpoint_api_version() -> None:
    assert MemoryProvider.pre_compress_checkpoint_api_version == 1
    assert Minimal().pre_compress_checkpoint_api_version == 1
    assert PRE_COMPRESS_CHECKPOINT_API_VERSION == 2


def test_optional_hook_signatures_are_keyword_only_where_documented() -> None:
    sync = inspect.signature(MemoryProvider.sync_turn).parameters
    assert sync["session_id"].kind is inspect.Parameter.KEYWORD_ONLY
    assert sync["messages"].kind is inspect.Parameter.KEYWORD_ONLY
    assert inspect.signature(MemoryProvider.prefetch).parameters["session_id"].default == ""


def test_call_sync_turn_passes_everything_to_the_current_signature() -> None:
    p = CurrentSync()
    call_sync_turn(p, "u", "a", session_id="s1", messages=[{"role": "user"}])
    assert p.calls == [("sync", "u", "a", "s1", [{"role": "user"}])]


def test_call_sync_turn_keeps_the_old_two_argument_signature_working() -> None:
    p = OldSync()
    with pytest.raises(TypeError):
        p.sync_turn("u", "a", session_id="s1")  # type: ignore[call-arg]  # a naive caller
    call_sync_turn(p, "u", "a", session_id="s1", messages=[])
    assert p.calls == [("sync", "u", "a")]


def test_call_sync_turn_passes_only_what_an_intermediate_signature_accepts() -> None:
    p = SessionOnlySync()
    call_sync_turn(p, "u", "a", session_id="s1", messages=[])
    assert p.calls == [("sync", "u", "a", "s1")]


def test_call_sync_turn_passes_everything_to_a_kwargs_override() -> None:
    p = KwargsSync()
    call_sync_turn(p, "u", "a", session_id="s1", messages=None)
    assert p.calls == [("sync", "u", "a", {"session_id": "s1", "messages": None})]


def test_signatures_are_inspected_once_per_class(monkeypatch: pytest.MonkeyPatch) -> None:
    class Fresh(OldSync):
        pass

    real = inspect.signature
    seen: list[object] = []

    def counting(obj: Any, *args: Any, **kwargs: Any) -> inspect.Signature:
        seen.append(obj)
        return real(obj, *args, **kwargs)

    monkeypatch.setattr(memory_provider.inspect, "signature", counting)
    for _ in range(3):
        call_sync_turn(Fresh(), "u", "a", session_id="s")
    assert seen == [OldSync.sync_turn]


def test_accepted_kwargs_filters_by_the_override() -> None:
    kwargs = {"session_id": "s", "messages": [], "other": 1}
    assert accepted_kwargs(OldSync(), "sync_turn", kwargs) == {}
    assert accepted_kwargs(SessionOnlySync(), "sync_turn", kwargs) == {"session_id": "s"}
    assert accepted_kwargs(KwargsSync(), "sync_turn", kwargs) == kwargs


def test_provider_init_error_names_every_failed_provider() -> None:
    boom = RuntimeError("no database")
    error = ProviderInitError(
        [
            InitFailure("alpha", "failed to initialize: RuntimeError: no database", boom),
            InitFailure("beta", "is not available (is_available() returned False)"),
        ]
    )
    assert error.failures[0].error is boom
    assert str(error) == (
        "memory provider 'alpha' failed to initialize: RuntimeError: no database; "
        "memory provider 'beta' is not available (is_available() returned False) "
        "(run `hermes memory status` for details)"
    )
