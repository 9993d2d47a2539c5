"""agent.memory_cli: `hermes memory setup NAME` and `hermes memory status`."""

from __future__ import annotations

import json
import os
import pty
import select
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent.memory_cli import main
from agent.memory_setup import SetupError, collect_values
from agent.testing import ROOT, set_config
from pm.env.generations import Generation
from pm.inputs.catalog import SHIPPED
from pm.testing.homes import add_plugin

SECRET = "s3cr3t-VALUE-42"

VAULT = '''
import json
from pathlib import Path
from agent.memory_provider import MemoryProvider

SCHEMA = [
    {"key": "api_key", "description": "API key", "secret": True, "env_var": "VAULT_API_KEY",
     "required": True},
    {"key": "region", "description": "Region", "choices": ["eu", "us"], "default": "eu"},
    {"key": "max_items", "description": "Items per recall", "type": "integer", "required": True},
    {"key": "verbose", "description": "Chatty", "type": "boolean", "default": False},
]


class Vault(MemoryProvider):
    name = "vault"
    def is_available(self): return True
    def initialize(self, session_id, **kwargs): pass
    def get_tool_schemas(self): return []
    def handle_tool_call(self, name, args, **kwargs): return "{}"
    def get_config_schema(self): return [dict(f) for f in SCHEMA]
    def save_config(self, values, hermes_home):
        if values.get("max_items", 1) > 100:
            raise ValueError(f"vault setting 'max_items': {values['max_items']} is above 100")
        path = Path(hermes_home) / "memory" / "vault.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values, sort_keys=True))
    def load_config(self, hermes_home):
        path = Path(hermes_home) / "memory" / "vault.json"
        return json.loads(path.read_text()) if path.exists() else {}


def register(ctx):
    ctx.register_memory_provider(Vault())
'''


@pytest.fixture
def vault_home(new_home: Callable[..., Path]) -> Path:
    home = new_home({"memory": {"provider": "vault"}})
    add_plugin(home / "plugins", "vault", style="sidecar", manifest={"kind": "memory"}, init_code=VAULT)
    return home


def _files_containing(folder: Path, text: str) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")
                  if p.is_file() and text.encode() in p.read_bytes())


def test_setup_writes_secrets_to_env_only(vault_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (vault_home / ".env").write_text("# keep me\nOTHER=1\n")
    code = main(["setup", "vault", "--home", str(vault_home), "--set", f"api_key={SECRET}",
                 "--set", "max_items=7", "--set", "verbose=yes"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert out.out == ("memory provider 'vault' set up\n"
                       "  settings saved: region, max_items, verbose\n"
                       f"  secrets written to {vault_home}/.env: VAULT_API_KEY\n")
    assert (vault_home / ".env").read_text() == f"# keep me\nOTHER=1\nVAULT_API_KEY={SECRET}\n"
    assert stat.S_IMODE((vault_home / ".env").stat().st_mode) == 0o600
    saved = json.loads((vault_home / "memory" / "vault.json").read_text())
    assert saved == {"max_items": 7, "region": "eu", "verbose": True}
    assert _files_containing(vault_home, SECRET) == [".env"]
    assert SECRET not in out.out + out.err


@pytest.mark.parametrize(("argv", "message"), [
    (["--set", "max_itmes=3"], "vault has no setting 'max_itmes' (did you mean 'max_items'?)"),
    (["--set", "api_key=x"], "vault: required setting(s) without a value: max_items "
                             "(give them with --set KEY=VALUE)"),
    (["--set", "api_key=x", "--set", "max_items=many"], "setting 'max_items': expected integer, got 'many'"),
    (["--set", "api_key=x", "--set", "max_items=1", "--set", "region=mars"],
     "setting 'region': 'mars' is not one of ['eu', 'us']"),
    (["--set", "api_key=x", "--set", "max_items=500"], "vault setting 'max_items': 500 is above 100"),
    (["--set", "novalue"], "--set 'novalue': expected KEY=VALUE"),
])
def test_setup_refuses_bad_values_and_writes_nothing(vault_home: Path, capsys: pytest.CaptureFixture[str],
                                                     argv: list[str], message: str) -> None:
    before = sorted(p.name for p in vault_home.iterdir())
    assert main(["setup", "vault", "--home", str(vault_home), *argv]) == 2
    assert capsys.readouterr().err == f"error: {message}\n"
    assert sorted(p.name for p in vault_home.iterdir()) == before
    assert not (vault_home / ".env").exists()


def test_setup_of_a_provider_whose_admission_is_refused(
        new_home: Callable[..., Path], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch, make_index: Callable[..., Any]) -> None:
    index = make_index({"unrelated": {"1.0": []}})  # the index has no PyYAML: admission must refuse
    home = new_home()
    monkeypatch.setenv("HERMES_HOME", str(home))
    monkeypatch.setenv("HERMES_PM_INDEX_URL", index.url)
    before = (home / "config.yaml").read_bytes()
    assert main(["setup", "jsonl_journal"]) == 4
    err = capsys.readouterr().err
    assert "plugin 'jsonl_journal' (" in err and "requires 'PyYAML>=6', which the index does not have" in err
    assert (home / "config.yaml").read_bytes() == before
    assert not (home / "memory").exists()
    receipt = json.loads((home / "pm/receipts/latest.json").read_text())
    # a missing project is a failure about the declaration, not a conflict (issue 11)
    assert (receipt["kind"], receipt["outcome"], receipt["candidate"]) == ("admit", "failed", "jsonl_journal")
    assert receipt["failure"]["kind"] == "missing-project" and receipt["failure"]["plugins"] == ["jsonl_journal"]


def test_setup_of_an_unknown_provider(new_home: Callable[..., Path], capsys: pytest.CaptureFixture[str]) -> None:
    home = new_home()
    assert main(["setup", "honcho", "--home", str(home)]) == 1
    assert capsys.readouterr().err == (
        "error: memory provider 'honcho' is not installed; known memory providers: "
        "'jsonl_journal', 'markdown_notes', 'peer_cards', 'sidecar_echo', 'signed_notes', 'sqlite_fts'; "
        f"the catalog ({SHIPPED}) has no entry 'honcho', so `hermes update` cannot install it: install it from its "
        "source (`hermes plugins install SOURCE`) or choose an installed provider (`hermes memory setup NAME`)\n")


def test_collect_values_asks_for_what_was_not_given() -> None:
    asked: list[str] = []

    def ask(field: dict) -> str | None:  # type: ignore[type-arg]
        asked.append(field["key"])
        return {"api_key": SECRET, "max_items": "9", "region": ""}.get(field["key"])

    schema = [{"key": "api_key", "secret": True, "env_var": "K"}, {"key": "region", "default": "eu"},
              {"key": "max_items", "type": "integer"}, {"key": "verbose", "type": "boolean"}]
    values = collect_values(schema, {"verbose": "off"}, ask, "vault")
    assert asked == ["api_key", "region", "max_items"]
    assert values == {"api_key": SECRET, "region": "eu", "max_items": 9, "verbose": False}
    with pytest.raises(SetupError) as caught:
        collect_values([{"key": "token", "secret": True}], {}, None, "vault")
    assert str(caught.value) == "vault: secret setting 'token' has no env_var to store it under"


def _expect(fd: int, text: str, seen: bytearray) -> None:
    deadline = time.monotonic() + 20
    while text.encode() not in seen:
        assert time.monotonic() < deadline, f"waited for {text!r}; got {bytes(seen)!r}"
        if select.select([fd], [], [], 0.5)[0]:
            seen += os.read(fd, 4096)


def test_setup_prompts_on_a_terminal(vault_home: Path) -> None:
    """A real pseudo-terminal: plain settings through input(), the secret through getpass."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent.memory_cli", "setup", "vault", "--home", str(vault_home)],
        stdin=slave, stdout=slave, stderr=slave, close_fds=True, start_new_session=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    os.close(slave)
    seen = bytearray()
    try:
        for prompt, answer in (("api_key — API key: ", SECRET), ("region — Region [eu/us; default eu]: ", ""),
                               ("max_items — Items per recall: ", "12"),
                               ("verbose — Chatty [default False]: ", "no")):
            _expect(master, prompt, seen)
            os.write(master, answer.encode() + b"\n")
        _expect(master, "memory provider 'vault' set up", seen)
        assert proc.wait(timeout=20) == 0
    finally:
        proc.kill()
        os.close(master)
    assert SECRET not in seen.decode(errors="replace")  # getpass does not echo
    assert (vault_home / ".env").read_text() == f"VAULT_API_KEY={SECRET}\n"
    assert json.loads((vault_home / "memory" / "vault.json").read_text()) == {
        "max_items": 12, "region": "eu", "verbose": False}


def _on_a_terminal(home: Path, answers: list[tuple[str, str]]) -> str:
    """Run ``hermes memory setup vault`` on a real pseudo-terminal, answering each prompt."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent.memory_cli", "setup", "vault", "--home", str(home)],
        stdin=slave, stdout=slave, stderr=slave, close_fds=True, start_new_session=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    os.close(slave)
    seen = bytearray()
    try:
        for prompt, answer in answers:
            _expect(master, prompt, seen)
            os.write(master, answer.encode() + b"\n")
        _expect(master, "memory provider 'vault' set up", seen)
        assert proc.wait(timeout=20) == 0
    finally:
        proc.kill()
        os.close(master)
    return seen.decode(errors="replace")


def test_setup_again_offers_the_saved_settings_as_defaults(vault_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 32, finding 6: re-running setup reset saved non-secret settings to the schema's
    defaults (region eu-west -> us-east). Pressing Enter, or giving no --set, keeps what was saved."""
    assert main(["setup", "vault", "--home", str(vault_home), "--set", f"api_key={SECRET}", "--set", "region=us",
                 "--set", "max_items=12", "--set", "verbose=yes"]) == 0
    saved = vault_home / "memory" / "vault.json"
    assert json.loads(saved.read_text()) == {"max_items": 12, "region": "us", "verbose": True}

    _on_a_terminal(vault_home, [("api_key — API key: ", ""), ("region — Region [eu/us; default us]: ", ""),
                                ("max_items — Items per recall [default 12]: ", ""),
                                ("verbose — Chatty [default True]: ", "")])
    assert json.loads(saved.read_text()) == {"max_items": 12, "region": "us", "verbose": True}
    assert (vault_home / ".env").read_text() == f"VAULT_API_KEY={SECRET}\n"  # the stored secret kept

    capsys.readouterr()
    assert main(["setup", "vault", "--home", str(vault_home), "--set", "max_items=3"]) == 0  # a script: the rest kept
    assert json.loads(saved.read_text()) == {"max_items": 3, "region": "us", "verbose": True}
    saved.write_text(json.dumps({"max_items": "many", "region": "mars", "verbose": True}))  # no longer fits the schema
    assert main(["setup", "vault", "--home", str(vault_home), "--set", "max_items=4"]) == 0
    assert json.loads(saved.read_text()) == {"max_items": 4, "region": "eu", "verbose": True}


def test_status_without_a_provider(new_home: Callable[..., Path], capsys: pytest.CaptureFixture[str]) -> None:
    home = new_home()
    assert main(["status", "--home", str(home)]) == 0
    assert capsys.readouterr().out == (
        f"memory provider: none (memory.provider is not set in {home}/config.yaml)\n"
        "installed providers: jsonl_journal, markdown_notes, peer_cards, sidecar_echo, signed_notes, sqlite_fts\n")


def test_status_of_a_ready_provider(new_home: Callable[..., Path], capsys: pytest.CaptureFixture[str]) -> None:
    home = new_home({"memory": {"provider": "sqlite_fts"}})
    assert main(["status", "--home", str(home)]) == 0
    assert capsys.readouterr().out == (
        f"memory provider: sqlite_fts (bundled, {ROOT}/plugins/memory/sqlite_fts)\n"
        "requirements:    none\n"
        "readiness:       ready: declares no requirements\n"
        "available:       yes\n")


def test_status_of_a_provider_that_is_not_available(
        new_home: Callable[..., Path], capsys: pytest.CaptureFixture[str]) -> None:
    home = new_home({"memory": {"provider": "sidecar_echo"}})
    assert main(["status", "--home", str(home), "--json"]) == 4
    report = json.loads(capsys.readouterr().out)
    assert (report["provider"], report["available"], report["readiness"]["ready"]) == (
        "sidecar_echo", False, True)


def test_status_of_a_provider_that_is_not_ready(
        clean_env: Path, new_home: Callable[..., Path], sync: Callable[..., Generation],
        capsys: pytest.CaptureFixture[str]) -> None:
    home = new_home({"plugins": {"enabled": ["notes-sync"]}})
    add_plugin(home / "plugins", "notes-sync", style="manifest", dependencies=["PyYAML>=5"])
    generation = sync(home, {"PyYAML": "5.4"})
    set_config(home, memory={"provider": "jsonl_journal"})
    assert main(["status", "--home", str(home)]) == 4
    out = capsys.readouterr()
    journal = ROOT / "plugins" / "memory" / "jsonl_journal"
    assert out.out == (
        f"memory provider: jsonl_journal (bundled, {journal})\n"
        f"requirements:    PyYAML>=6 (declared in {journal}/pyproject.toml)\n"
        f"readiness:       NOT READY: not in generation {generation.id} (enabled since it was "
        "built); requires PyYAML>=6; installed: pyyaml 5.4\n"
        "available:       not checked (not ready)\n")
    assert out.err == (
        f"error: memory provider 'jsonl_journal' is not ready: not in generation {generation.id} "
        "(enabled since it was built); requires PyYAML>=6; installed: "
        f"pyyaml 5.4 (declared in {journal}/pyproject.toml); run `hermes pm sync --home {home}`\n")


def test_status_of_a_provider_with_requirements_ready(
        new_home: Callable[..., Path], sync: Callable[..., Generation],
        capsys: pytest.CaptureFixture[str]) -> None:
    home = new_home({"memory": {"provider": "jsonl_journal"}})
    generation = sync(home, {"PyYAML": "6.0.1"})
    assert main(["status", "--home", str(home), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["readiness"] == {"ready": True, "reason": f"ready in generation {generation.id}",
                                   "unmet": [], "generation": generation.id, "command": None}
    assert (report["available"], report["skills"]) == (True, ["jsonl_journal:review"])
    assert report["requirements"] == ["PyYAML>=6"]



def test_a_stored_secret_satisfies_required_on_a_rerun(vault_home: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["setup", "vault", "--home", str(vault_home), "--set", f"api_key={SECRET}",
                 "--set", "max_items=7"]) == 0
    assert main(["setup", "vault", "--home", str(vault_home), "--set", "max_items=8"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "  settings saved: region, max_items, verbose"
    assert (vault_home / ".env").read_text() == f"VAULT_API_KEY={SECRET}\n"
    assert json.loads((vault_home / "memory" / "vault.json").read_text())["max_items"] == 8
