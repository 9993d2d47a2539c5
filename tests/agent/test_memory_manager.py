"""agent.memory_manager: membership rules, routing, isolation of profiles, never raising."""

from __future__ import annotations

import gc
import json
import logging
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from agent.context import active_home, use_home
from agent.memory_manager import MemoryManager
from agent.memory_provider import MemoryProvider, ProviderInitError
from agent.secrets import SecretScopeError, get_secret, write_secret


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("HERMES_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "user"))


class Recorder(MemoryProvider):
    """A fake that implements the real interface and records, for every hook, the home and the
    secret ``TOKEN`` it saw when called."""

    def __init__(self, name: str = "recorder", *, tools: tuple[str, ...] = ("rec_tool",)) -> None:
        self._name = name
        self._tools = tools
        self.calls: list[tuple[str, Any]] = []
        self.seen: list[tuple[str, Path, str | None]] = []
        self.available = True
        self.fail_in: set[str] = set()
        self.gate: threading.Event | None = None

    def _hook(self, hook: str, payload: Any = None) -> None:
        try:
            token = get_secret("TOKEN")
        except SecretScopeError:
            token = "<unbound>"
        self.seen.append((hook, active_home(), token))
        self.calls.append((hook, payload))
        if hook in self.fail_in:
            raise RuntimeError(f"{hook} exploded")

    @property
    def name(self) -> str:
        return self._name

    def is_available(self) -> bool:
        return self.available

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self._hook("initialize", (session_id, kwargs))

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [{"name": t, "description": t, "parameters": {}} for t in self._tools]

    def handle_tool_call(self, name: str, args: dict[str, Any], **kwargs: Any) -> str:
        self._hook("tool", (name, args, kwargs))
        return json.dumps({"provider": self._name, "tool": name, "args": args})

    def get_config_schema(self) -> list[dict[str, Any]]:
        return []

    def save_config(self, values: dict[str, Any], hermes_home: str | Path) -> None:
        pass

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        self._hook("prefetch", (query, session_id))
        return f"[{self._name}] {query}"

    def sync_turn(
        self,
        user: str,
        assistant: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        if self.gate is not None:
            assert self.gate.wait(5)
        self._hook("sync_turn", (user, assistant, session_id, messages))

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        self._hook("on_session_end", messages)

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        self._hook("on_pre_compress", messages)
        return f"keep from {self._name}"

    def on_memory_write(self, action: str, target: str, content: str) -> None:
        self._hook("on_memory_write", (action, target, content))

    def shutdown(self) -> None:
        self._hook("shutdown")


class OldStyle(Recorder):
    """A provider written against the older two-argument sync_turn and one-argument prefetch."""

    def sync_turn(self, user, assistant):  # type: ignore[no-untyped-def, override]
        self._hook("sync_turn", (user, assistant))

    def prefetch(self, query):  # type: ignore[no-untyped-def, override]
        self._hook("prefetch", query)
        return "old"


def _hooks(p: Recorder) -> list[str]:
    return [hook for hook, _ in p.calls]


# -- membership --------------------------------------------------------------------------------


def test_one_external_provider_at_a_time(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    mgr = MemoryManager(hermes_home=tmp_path)
    first, second = Recorder("first"), Recorder("second")
    assert mgr.add_provider(first) is True
    with caplog.at_level(logging.WARNING, logger="agent.memory_manager"):
        assert mgr.add_provider(second) is False
    assert mgr.providers == (first,)
    [record] = caplog.records
    assert record.levelno == logging.WARNING
    assert record.getMessage() == (
        f"memory_provider_refused: memory provider 'second' refused for {tmp_path}: "
        "'first' is already the external memory provider (one at a time)"
    )
    assert record.event == "memory_provider_refused"  # type: ignore[attr-defined]


def test_the_builtin_provider_does_not_count_as_external(tmp_path: Path) -> None:
    mgr = MemoryManager(hermes_home=tmp_path)
    assert mgr.add_provider(Recorder("builtin", tools=()))
    assert mgr.add_provider(Recorder("external"))
    assert not mgr.add_provider(Recorder("builtin", tools=()))
    assert [p.name for p in mgr.providers] == ["builtin", "external"]


def test_the_same_instance_twice_is_refused(tmp_path: Path) -> None:
    mgr = MemoryManager(hermes_home=tmp_path)
    p = Recorder()
    assert mgr.add_provider(p)
    assert not mgr.add_provider(p)
    assert mgr.providers == (p,)


def test_an_instance_bound_by_another_profile_is_refused_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    shared = Recorder("shared")
    mgr_a = MemoryManager(hermes_home=tmp_path / "a")
    mgr_b = MemoryManager(hermes_home=tmp_path / "b")
    assert mgr_a.add_provider(shared)
    with caplog.at_level(logging.WARNING, logger="agent.memory_manager"):
        assert mgr_b.add_provider(shared) is False
    assert mgr_b.providers == ()
    [record] = caplog.records
    assert record.event == "memory_provider_instance_shared"  # type: ignore[attr-defined]
    assert record.getMessage() == (
        "memory_provider_instance_shared: memory provider 'shared' instance is already bound to "
        f"the manager of {tmp_path / 'a'}; refused for {tmp_path / 'b'} "
        "(each profile needs a fresh instance)"
    )
    assert mgr_b.add_provider(Recorder("shared"))  # a fresh instance is fine
    mgr_a.shutdown_all()  # releases the instance
    mgr_c = MemoryManager(hermes_home=tmp_path / "c")
    assert mgr_c.add_provider(shared)


def test_a_forgotten_manager_releases_its_instance_and_its_sync_thread(tmp_path: Path) -> None:
    p = Recorder()
    mgr = MemoryManager(hermes_home=tmp_path / "a")
    mgr.add_provider(p)
    mgr.sync_all("u", "a")
    assert mgr.wait_idle(5)
    [worker] = [t for t in threading.enumerate() if t.name == "memory-sync:a"]
    del mgr
    gc.collect()
    worker.join(5)
    assert not worker.is_alive()
    assert MemoryManager(hermes_home=tmp_path / "b").add_provider(p)


def test_add_after_shutdown_is_refused(tmp_path: Path) -> None:
    mgr = MemoryManager(hermes_home=tmp_path)
    mgr.shutdown_all()
    assert mgr.add_provider(Recorder()) is False


def test_add_provider_rejects_something_that_is_not_a_provider(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="expected a MemoryProvider, got object"):
        MemoryManager(hermes_home=tmp_path).add_provider(object())  # type: ignore[arg-type]


# -- initialize_all ----------------------------------------------------------------------------


def test_initialize_all_always_passes_the_home(tmp_path: Path) -> None:
    mgr = MemoryManager(hermes_home=tmp_path / "p")
    p = Recorder()
    mgr.add_provider(p)
    mgr.initialize_all(session_id="s", platform="telegram", user_id="u1")
    assert p.calls == [
        (
            "initialize",
            ("s", {"hermes_home": str(tmp_path / "p"), "platform": "telegram",
                   "agent_identity": "default", "user_id": "u1"}),
        )
    ]
    assert p.seen[0][1] == tmp_path / "p"


def test_initialize_all_hermes_home_argument_becomes_the_managers_home(tmp_path: Path) -> None:
    mgr = MemoryManager()
    assert mgr.home == tmp_path / "user" / ".hermes"
    p = Recorder()
    mgr.add_provider(p)
    mgr.initialize_all(session_id="s", platform="cli", hermes_home=tmp_path / "q")
    assert mgr.home == tmp_path / "q"
    assert p.calls[0][1][1]["hermes_home"] == str(tmp_path / "q")
    mgr.prefetch("x")
    assert p.seen[-1][1] == tmp_path / "q"


def test_a_provider_that_fails_to_initialize_is_dropped_and_reported(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    mgr = MemoryManager(hermes_home=tmp_path)
    builtin, broken = Recorder("builtin", tools=("b_tool",)), Recorder("broken")
    broken.fail_in = {"initialize"}
    mgr.add_provider(builtin)
    mgr.add_provider(broken)
    with pytest.raises(ProviderInitError) as info:
        mgr.initialize_all(session_id="s", platform="cli")
    assert str(info.value) == (
        "memory provider 'broken' failed to initialize: RuntimeError: initialize exploded "
        "(run `hermes memory status` for details)"
    )
    assert isinstance(info.value.failures[0].error, RuntimeError)
    assert mgr.providers == (builtin,)
    assert _hooks(broken) == ["initialize", "shutdown"]
    assert [s["name"] for s in mgr.get_tool_schemas()] == ["b_tool"]
    assert "memory provider 'broken' failed to initialize" in caplog.text


def test_an_unavailable_provider_is_reported_not_initialized(tmp_path: Path) -> None:
    mgr = MemoryManager(hermes_home=tmp_path)
    p = Recorder("offline")
    p.available = False
    mgr.add_provider(p)
    with pytest.raises(ProviderInitError, match=r"'offline' is not available"):
        mgr.initialize_all(session_id="s", platform="cli")
    assert _hooks(p) == ["shutdown"]
    assert mgr.providers == ()


# -- tools -------------------------------------------------------------------------------------


def test_tool_calls_route_to_the_provider_that_declared_the_tool(tmp_path: Path) -> None:
    mgr = MemoryManager(hermes_home=tmp_path)
    builtin, ext = Recorder("builtin", tools=("memory",)), Recorder("ext", tools=("ext_search",))
    mgr.add_provider(builtin)
    mgr.add_provider(ext)
    mgr.initialize_all(session_id="s1", platform="cli")
    assert [s["name"] for s in mgr.get_tool_schemas()] == ["memory", "ext_search"]
    assert mgr.has_tool("ext_search") and not mgr.has_tool("nope")
    result = json.loads(mgr.handle_tool_call("ext_search", {"q": 1}))
    assert result == {"provider": "ext", "tool": "ext_search", "args": {"q": 1}}
    assert json.loads(mgr.handle_tool_call("memory", '{"a": 2}'))["provider"] == "builtin"
    assert ext.calls[-1] == ("tool", ("ext_search", {"q": 1}, {
        "session_id": "s1", "hermes_home": str(tmp_path), "agent_identity": "default",
        "caller_gsk": ""}))


def test_unknown_tools_and_bad_arguments_become_error_results(tmp_path: Path) -> None:
    mgr = MemoryManager(hermes_home=tmp_path)
    mgr.add_provider(Recorder("ext", tools=("t",)))
    assert json.loads(mgr.handle_tool_call("missing", {})) == {
        "error": "unknown memory tool 'missing'; known tools: ['t']"
    }
    assert json.loads(mgr.handle_tool_call("t", "[1, 2]")) == {
        "error": "arguments of memory tool 't' must be a JSON object"
    }
    assert json.loads(mgr.handle_tool_call("t", "{nope"))["error"].startswith(
        "arguments of memory tool 't' are not JSON: "
    )


def test_a_tool_that_raises_becomes_an_error_result_and_a_log_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    mgr = MemoryManager(hermes_home=tmp_path)
    p = Recorder("ext", tools=("t",))
    p.fail_in = {"tool"}
    mgr.add_provider(p)
    assert json.loads(mgr.handle_tool_call("t", {})) == {
        "error": "memory provider 'ext' failed on tool 't'"
    }
    [record] = [r for r in caplog.records if r.name == "agent.memory_manager"]
    assert record.getMessage() == (
        "memory_provider_hook_failed: memory provider 'ext' failed in tool 't': "
        "RuntimeError: tool exploded"
    )
    assert record.provider == "ext"  # type: ignore[attr-defined]


# -- hooks never raise -------------------------------------------------------------------------


def test_hook_exceptions_are_caught_and_the_others_still_run(tmp_path: Path) -> None:
    mgr = MemoryManager(hermes_home=tmp_path)
    broken, fine = Recorder("builtin", tools=()), Recorder("fine")
    broken.fail_in = {"prefetch", "sync_turn", "on_session_end", "on_pre_compress", "shutdown"}
    mgr.add_provider(broken)
    mgr.add_provider(fine)
    mgr.initialize_all(session_id="s", platform="cli")
    assert mgr.prefetch("hello") == "[fine] hello"
    assert mgr.on_pre_compress([]) == "keep from fine"
    mgr.sync_all("u", "a")
    mgr.on_session_end([])
    mgr.shutdown_all()
    assert _hooks(fine) == ["initialize", "prefetch", "on_pre_compress", "sync_turn",
                            "on_session_end", "shutdown"]


def test_on_memory_write_reaches_external_providers_only(tmp_path: Path) -> None:
    mgr = MemoryManager(hermes_home=tmp_path)
    builtin, ext = Recorder("builtin", tools=()), Recorder("ext")
    mgr.add_provider(builtin)
    mgr.add_provider(ext)
    mgr.on_memory_write("add", "user", "likes tea")
    assert builtin.calls == []
    assert ext.calls == [("on_memory_write", ("add", "user", "likes tea"))]


# -- sync --------------------------------------------------------------------------------------


def test_sync_all_never_blocks_the_caller(tmp_path: Path) -> None:
    mgr = MemoryManager(hermes_home=tmp_path)
    p = Recorder()
    p.gate = threading.Event()
    mgr.add_provider(p)
    mgr.initialize_all(session_id="s", platform="cli")
    started = time.monotonic()
    mgr.sync_all("u1", "a1", messages=[{"role": "user", "content": "u1"}])
    mgr.sync_all("u2", "a2", session_id="other")
    assert time.monotonic() - started < 1.0
    assert mgr.wait_idle(0.05) is False  # still gated
    p.gate.set()
    assert mgr.wait_idle(5)
    assert [payload for hook, payload in p.calls if hook == "sync_turn"] == [
        ("u1", "a1", "s", [{"role": "user", "content": "u1"}]),
        ("u2", "a2", "other", None),
    ]
    mgr.shutdown_all()


def test_old_two_argument_providers_keep_working_through_the_manager(tmp_path: Path) -> None:
    mgr = MemoryManager(hermes_home=tmp_path)
    p = OldStyle("old")
    mgr.add_provider(p)
    mgr.initialize_all(session_id="s", platform="cli")
    mgr.sync_all("u", "a", session_id="s", messages=[])
    assert mgr.prefetch("q", session_id="s") == "old"
    mgr.on_session_end([])
    assert ("sync_turn", ("u", "a")) in p.calls
    assert ("prefetch", "q") in p.calls


def test_on_session_end_runs_after_queued_syncs(tmp_path: Path) -> None:
    mgr = MemoryManager(hermes_home=tmp_path)
    p = Recorder()
    p.gate = threading.Event()
    mgr.add_provider(p)
    mgr.sync_all("u", "a")
    threading.Timer(0.1, p.gate.set).start()
    mgr.on_session_end([{"role": "user"}])
    assert _hooks(p) == ["sync_turn", "on_session_end"]


def test_shutdown_all_joins_pending_syncs_and_is_idempotent(tmp_path: Path) -> None:
    mgr = MemoryManager(hermes_home=tmp_path)
    p = Recorder()
    p.gate = threading.Event()
    mgr.add_provider(p)
    for i in range(3):
        mgr.sync_all(f"u{i}", "a")
    threading.Timer(0.1, p.gate.set).start()
    mgr.shutdown_all()
    mgr.shutdown_all()
    assert _hooks(p) == ["sync_turn", "sync_turn", "sync_turn", "shutdown"]
    mgr.sync_all("late", "a")  # dropped, logged, never raises
    assert _hooks(p)[-1] == "shutdown"


# -- profiles ----------------------------------------------------------------------------------


def test_every_hook_runs_in_the_managers_profile_whatever_the_callers_context(
    tmp_path: Path,
) -> None:
    home = tmp_path / "profile"
    write_secret(home, "TOKEN", "profile-token")
    mgr = MemoryManager(hermes_home=home)
    p = Recorder()
    mgr.add_provider(p)

    def drive() -> None:  # a bare thread: no home, no secret scope of its own
        mgr.initialize_all(session_id="s", platform="cli")
        mgr.prefetch("q")
        mgr.handle_tool_call("rec_tool", {})
        mgr.sync_all("u", "a")
        mgr.on_pre_compress([])
        mgr.on_memory_write("add", "memory", "m")
        mgr.on_session_end([])
        mgr.shutdown_all()

    with use_home(tmp_path / "someone-else"):
        thread = threading.Thread(target=drive)
        thread.start()
        thread.join(10)
    assert sorted(hook for hook, _, _ in p.seen) == sorted([
        "initialize", "prefetch", "tool", "sync_turn", "on_pre_compress", "on_memory_write",
        "on_session_end", "shutdown",
    ])
    assert {(home_, token) for _, home_, token in p.seen} == {(home, "profile-token")}


def test_two_profiles_in_two_threads_never_see_each_others_home(tmp_path: Path) -> None:
    homes = {"a": tmp_path / "a", "b": tmp_path / "b"}
    for label, home in homes.items():
        write_secret(home, "TOKEN", f"token-{label}")
    providers = {label: Recorder(f"rec-{label}") for label in homes}
    barrier = threading.Barrier(2)

    def run(label: str) -> None:
        mgr = MemoryManager(hermes_home=homes[label])
        assert mgr.add_provider(providers[label])
        barrier.wait(5)
        mgr.initialize_all(session_id=label, platform="cli")
        for i in range(20):
            mgr.prefetch(f"{label}{i}")
            mgr.sync_all(f"{label}{i}", "a")
            mgr.handle_tool_call("rec_tool", {"i": i})
        mgr.on_session_end([])
        mgr.shutdown_all()

    threads = [threading.Thread(target=run, args=(label,)) for label in homes]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    for label, home in homes.items():
        seen = providers[label].seen
        assert len(seen) == 1 + 20 * 3 + 2
        assert {(h, tok) for _, h, tok in seen} == {(home, f"token-{label}")}
