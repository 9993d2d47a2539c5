"""agent.context, agent.threads and agent.secrets: the home and the secrets follow the context."""

from __future__ import annotations

import functools
import os
import stat
import threading
from pathlib import Path

import pytest

from agent.context import active_home, default_home, secret_scope, use_home, use_secret_scope
from agent.secrets import SecretScopeError, get_secret, parse_env, read_env, write_secret
from agent.threads import SerialWorker, spawn_context_thread


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("HERMES_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "user"))


# -- the active home ---------------------------------------------------------------------------


def test_default_home_is_dot_hermes_in_the_user_home(tmp_path: Path) -> None:
    assert default_home() == tmp_path / "user" / ".hermes"
    assert active_home() == tmp_path / "user" / ".hermes"


def test_hermes_home_variable_beats_the_default(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "env-home"))
    assert active_home() == tmp_path / "env-home"


def test_use_home_beats_the_variable_nests_and_restores(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "env-home"))
    with use_home(tmp_path / "a") as a:
        assert a == tmp_path / "a" and active_home() == a and secret_scope() == a
        with use_home(tmp_path / "b"):
            assert active_home() == tmp_path / "b"
        assert active_home() == a
    assert active_home() == tmp_path / "env-home"
    assert secret_scope() is None


def test_use_home_restores_after_an_error(tmp_path: Path) -> None:
    with pytest.raises(KeyError), use_home(tmp_path / "a"):
        raise KeyError("boom")
    assert secret_scope() is None
    assert active_home() == default_home()


def test_use_home_can_leave_the_secret_scope_alone(tmp_path: Path) -> None:
    with use_home(tmp_path / "a", bind_secrets=False):
        assert active_home() == tmp_path / "a"
        assert secret_scope() is None


# -- threads -----------------------------------------------------------------------------------


def _observe_in(start: object) -> dict[str, object]:
    seen: dict[str, object] = {}

    def look() -> None:
        seen["home"] = active_home()
        seen["scope"] = secret_scope()

    if start == "bare":
        thread = threading.Thread(target=look)
        thread.start()
    else:
        thread = spawn_context_thread(look, name="observer")
        thread.start()
    thread.join(5)
    return seen


def test_spawn_context_thread_carries_the_home_and_the_secret_scope(tmp_path: Path) -> None:
    with use_home(tmp_path / "profile"):
        seen = _observe_in("spawn")
    assert seen == {"home": tmp_path / "profile", "scope": tmp_path / "profile"}


def test_a_bare_thread_sees_the_default_home_and_no_secret_scope(tmp_path: Path) -> None:
    with use_home(tmp_path / "profile"):
        seen = _observe_in("bare")
    assert seen == {"home": tmp_path / "user" / ".hermes", "scope": None}


def test_spawn_context_thread_passes_arguments_and_names_the_thread() -> None:
    out: list[object] = []
    thread = spawn_context_thread(
        lambda a, b=0: out.extend([a, b, threading.current_thread().name]),
        name="worker-x", args=(1,), kwargs={"b": 2},
    )
    assert not thread.is_alive() and out == []  # the caller starts it
    thread.start()
    thread.join(5)
    assert out == [1, 2, "worker-x"]


def test_the_context_is_the_one_at_the_call_not_at_start(tmp_path: Path) -> None:
    seen: list[Path] = []
    with use_home(tmp_path / "at-call"):
        thread = spawn_context_thread(lambda: seen.append(active_home()))
    with use_home(tmp_path / "at-start"):
        thread.start()
    thread.join(5)
    assert seen == [tmp_path / "at-call"]


def test_changes_inside_a_spawned_thread_stay_in_its_copy(tmp_path: Path) -> None:
    def rebind() -> None:
        use_home(tmp_path / "elsewhere").__enter__()  # never exited: stays in the copy

    with use_home(tmp_path / "profile"):
        thread = spawn_context_thread(rebind)
        thread.start()
        thread.join(5)
        assert active_home() == tmp_path / "profile"


def test_serial_worker_runs_jobs_in_order_in_the_submitters_context(tmp_path: Path) -> None:
    worker = SerialWorker("test-worker")
    seen: list[tuple[int, Path]] = []
    with use_home(tmp_path / "profile"):
        for i in range(5):
            assert worker.submit(functools.partial(lambda i: seen.append((i, active_home())), i))
    assert worker.wait_idle(5)
    assert seen == [(i, tmp_path / "profile") for i in range(5)]
    assert worker.close(5) and worker.closed
    assert worker.submit(lambda: None) is False


def test_serial_worker_survives_a_failing_job(caplog: pytest.LogCaptureFixture) -> None:
    worker = SerialWorker("test-worker")
    done: list[int] = []
    def boom() -> None:
        raise ZeroDivisionError("boom")

    worker.submit(boom)
    worker.submit(lambda: done.append(1))
    assert worker.wait_idle(5)
    assert done == [1]
    assert "a job of test-worker failed" in caplog.text
    assert worker.close(5)


# -- secrets -----------------------------------------------------------------------------------


def test_get_secret_fails_closed_where_no_profile_is_bound(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    home = tmp_path / "env-home"
    write_secret(home, "API_KEY", "from-env-home")
    monkeypatch.setenv("HERMES_HOME", str(home))  # the variable binds the home, not secrets
    with pytest.raises(SecretScopeError) as info:
        get_secret("API_KEY")
    assert info.value.name == "API_KEY"
    assert str(info.value) == (
        "cannot read secret 'API_KEY': no profile is bound in this context "
        "(run the code inside agent.context.use_home(home), or start the thread with "
        "agent.threads.spawn_context_thread so it carries the caller's profile)"
    )


def test_get_secret_fails_closed_in_a_bare_thread_and_works_in_a_spawned_one(
    tmp_path: Path,
) -> None:
    write_secret(tmp_path / "p", "API_KEY", "secret-p")
    results: dict[str, object] = {}

    def read(label: str) -> None:
        try:
            results[label] = get_secret("API_KEY")
        except SecretScopeError as exc:
            results[label] = exc

    with use_home(tmp_path / "p"):
        assert get_secret("API_KEY") == "secret-p"
        bare = threading.Thread(target=read, args=("bare",))
        bare.start()
        bare.join(5)
        spawned = spawn_context_thread(read, args=("spawned",))
        spawned.start()
        spawned.join(5)
        with use_secret_scope(None), pytest.raises(SecretScopeError):
            get_secret("API_KEY")
    assert isinstance(results["bare"], SecretScopeError)
    assert results["spawned"] == "secret-p"


def test_get_secret_reads_only_the_bound_profile(tmp_path: Path) -> None:
    write_secret(tmp_path / "a", "TOKEN", "aaa")
    write_secret(tmp_path / "b", "OTHER", "bbb")
    with use_home(tmp_path / "a"):
        assert get_secret("TOKEN") == "aaa"
        assert get_secret("OTHER") is None
        assert get_secret("OTHER", "fallback") == "fallback"
    with use_home(tmp_path / "b"):
        assert get_secret("TOKEN") is None
    with use_home(tmp_path / "missing"):
        assert get_secret("TOKEN") is None


def test_parse_env_quotes_comments_export_and_no_expansion() -> None:
    text = (
        "# a comment\n"
        "\n"
        "PLAIN=value\n"
        "export EXPORTED=yes\n"
        "SPACED = padded  \n"
        "TRAILING=bare # comment\n"
        "HASHED=a#b\n"
        "SINGLE='lit $HOME \\n # kept'\n"
        'DOUBLE="line\\nnext \\"q\\" # kept" # gone\n'
        "EXPAND=$PLAIN\n"
        "EMPTY=\n"
        "not a pair\n"
        "DUP=first\n"
        "DUP=second\n"
    )
    assert parse_env(text) == {
        "PLAIN": "value",
        "EXPORTED": "yes",
        "SPACED": "padded",
        "TRAILING": "bare",
        "HASHED": "a#b",
        "SINGLE": "lit $HOME \\n # kept",
        "DOUBLE": 'line\nnext "q" # kept',
        "EXPAND": "$PLAIN",
        "EMPTY": "",
        "DUP": "second",
    }


def test_write_secret_preserves_every_other_line_byte_for_byte(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text(
        "# settings of this profile\n"
        "OPENAI_API_KEY=sk-old\n"
        "\n"
        "export OTHER='keep me'   # trailing comment\n"
        "garbage line without equals\n"
        "OPENAI_API_KEY=sk-duplicate\n"
        "LAST=1",
        encoding="utf-8",
    )
    write_secret(tmp_path, "OPENAI_API_KEY", "sk-new")
    write_secret(tmp_path, "ADDED", "has spaces and \"quotes\"")
    assert env.read_text(encoding="utf-8") == (
        "# settings of this profile\n"
        "OPENAI_API_KEY=sk-new\n"
        "\n"
        "export OTHER='keep me'   # trailing comment\n"
        "garbage line without equals\n"
        "LAST=1\n"
        'ADDED="has spaces and \\"quotes\\""\n'
    )
    assert read_env(tmp_path) == {
        "OPENAI_API_KEY": "sk-new",
        "OTHER": "keep me",
        "LAST": "1",
        "ADDED": 'has spaces and "quotes"',
    }


def test_write_secret_creates_a_private_file_atomically(tmp_path: Path) -> None:
    home = tmp_path / "new-home"
    path = write_secret(home, "KEY", "multi\nline\tvalue")
    assert path == home / ".env"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert sorted(p.name for p in home.iterdir()) == [".env"]  # no temp file left behind
    assert read_env(home) == {"KEY": "multi\nline\tvalue"}


def test_write_secret_tightens_the_mode_of_an_existing_file(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text("A=1\n", encoding="utf-8")
    env.chmod(0o644)
    write_secret(tmp_path, "B", "2")
    assert stat.S_IMODE(os.stat(env).st_mode) == 0o600
    assert env.read_text(encoding="utf-8") == "A=1\nB=2\n"


@pytest.mark.parametrize("name", ["", "1ABC", "A-B", "A B", "A=B", "A\nB"])
def test_write_secret_refuses_a_name_that_is_not_a_variable_name(
    tmp_path: Path, name: str
) -> None:
    with pytest.raises(ValueError) as info:
        write_secret(tmp_path, name, "x")
    assert str(info.value) == f"invalid secret name {name!r}: expected letters, digits and '_'"
    assert not (tmp_path / ".env").exists()
