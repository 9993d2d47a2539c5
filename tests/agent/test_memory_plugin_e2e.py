"""The guide's own code samples, assembled into a provider and run end to end.

The samples are read at test time from ``../shared/seeds`` (the Japanese translation, the newest;
relative to the repository root) and used as written: this file adds only glue of its own (a
backend, tools, an archive) around them, never edits them. Skipped, with the reason, when the
seeds are absent.
"""

from __future__ import annotations

import ast
import json
import re
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from agent.checkpoint import BLOCKED_MISSING_PREREQUISITE, CheckpointBlocked
from agent.cli import main as hermes
from agent.context import use_home
from agent.discovery import find_memory_provider
from agent.loader import load_memory_provider
from agent.session import AgentSession
from agent.testing import ROOT

SEEDS = ROOT.parent / "shared" / "seeds"
_CODE_START = re.compile(r"(\s|def |class |from |import |@|#|[A-Za-z_][\w.]*\s*(=|\())")


def _guide() -> list[str]:
    found = sorted(SEEDS.glob("003_*.txt")) if SEEDS.is_dir() else []
    if not found:
        pytest.skip(f"the guide's samples are not here: {SEEDS}/003_*.txt (../shared is absent)")
    return found[0].read_text(encoding="utf-8").splitlines()


def _paragraphs(lines: list[str], start: int) -> list[list[str]]:
    out: list[list[str]] = [[]]
    for line in lines[start:]:
        if line.strip():
            out[-1].append(line)
        elif out[-1]:
            out.append([])
    return [p for p in out if p]


def code_sample(lines: list[str], first: str, nth: int = 1, until: str | None = None) -> str:
    """The Python sample whose first line is exactly ``first`` (its ``nth`` occurrence): the
    paragraphs from there on for as long as they read as code and still parse together."""
    starts = [i for i, line in enumerate(lines) if line == first]
    assert len(starts) >= nth, f"the guide has no sample starting {first!r} (occurrence {nth})"
    taken: list[str] = []
    pending: list[str] = []  # paragraphs of a statement cut by blank lines (a docstring's)
    for paragraph in _paragraphs(lines, starts[nth - 1]):
        if until is not None and paragraph[0].startswith(until):
            break
        if taken and not pending and not _CODE_START.match(paragraph[0]):
            break
        pending = pending + [""] + paragraph if pending else paragraph
        candidate = taken + [""] + pending if taken else pending
        try:
            ast.parse("\n".join(candidate))
        except SyntaxError:
            if pending.count("") >= 3:
                break
            continue
        taken, pending = candidate, []
    return "\n".join(taken) + "\n"


def yaml_sample(lines: list[str], first: str) -> dict[str, Any]:
    start = lines.index(first)
    data = yaml.safe_load("\n".join(_paragraphs(lines, start)[0]))
    assert isinstance(data, dict)
    return data


def _indent(code: str) -> str:
    return textwrap.indent(code, "    ")


GLUE_HEAD = '''"""my-provider, assembled by the test from the plugin guide's samples (glue marked GLUE)."""
import hashlib as _hashlib  # GLUE
import json as _json  # GLUE
import logging  # GLUE

logger = logging.getLogger(__name__)  # GLUE


class _Backend:  # GLUE: the "self._api" the guide's sync_turn talks to
    def __init__(self, folder):
        self.folder = folder

    def ingest(self, user, assistant, *, session_id="", messages=None):
        from agent.runtime_cwd import resolve_agent_cwd
        from agent.secret_scope import get_secret
        self.folder.mkdir(parents=True, exist_ok=True)
        record = {"user": user, "assistant": assistant, "session_id": session_id,
                  "key": get_secret("MY_API_KEY"), "cwd": str(resolve_agent_cwd())}
        with (self.folder / "turns.jsonl").open("a") as handle:
            handle.write(_json.dumps(record) + "\\n")

'''

GLUE_METHODS = '''
# GLUE: tools, recall, the archive and the built-in memory mirror of the test's provider
_sync_thread = None

@property
def _api(self):
    return _Backend(self._data_dir)

def get_tool_schemas(self):
    return [{"name": "my_tool", "description": "Add a note",
             "parameters": {"type": "object", "properties": {"action": {"type": "string"},
                                                              "content": {"type": "string"}}}}]

def handle_tool_call(self, tool_name, args, **kwargs):
    self.tool_kwargs = kwargs
    self._data_dir.mkdir(parents=True, exist_ok=True)
    with (self._data_dir / "notes.jsonl").open("a") as handle:
        handle.write(_json.dumps(args["content"]) + "\\n")
    return _json.dumps({"ok": True, "action": args["action"]})

def prefetch(self, query, *, session_id=""):
    notes = self._data_dir / "notes.jsonl"
    lines = notes.read_text().splitlines() if notes.exists() else []
    return "\\n".join(_json.loads(line) for line in lines)

def _archive(self, messages):
    if (self._data_dir / "archive-down").exists():
        raise OSError("the archive store is down")
    digest = _hashlib.sha256(_json.dumps(messages).encode()).hexdigest()[:12]
    (self._data_dir / "archive").mkdir(parents=True, exist_ok=True)
    (self._data_dir / "archive" / f"{digest}.json").write_text(_json.dumps(messages))
    return digest

def on_memory_write(self, action, target, content, metadata=None):
    self._data_dir.mkdir(parents=True, exist_ok=True)
    with (self._data_dir / "memory-writes.jsonl").open("a") as handle:
        handle.write(_json.dumps([action, target, content, metadata]) + "\\n")
'''

GLUE_INIT = '''

_guide_initialize = MyMemoryProvider.initialize  # GLUE: run both of the guide's initialize samples


def _initialize(self, session_id, **kwargs):  # GLUE
    _guide_initialize(self, session_id, **kwargs)
    _ProfileScoped.initialize(self, session_id, **kwargs)


MyMemoryProvider.initialize = _initialize  # GLUE

'''


def assemble(lines: list[str]) -> dict[str, str]:
    """The files of ``$HERMES_HOME/plugins/my-provider/`` built from the guide's samples."""
    provider = code_sample(lines, "from agent.memory_provider import MemoryProvider", 1)
    schema = code_sample(lines, "def get_config_schema(self):")
    save = code_sample(lines, "def save_config(self, values: dict, hermes_home: str) -> None:")
    thread = code_sample(lines, "from agent.memory_provider import spawn_context_thread")
    thread_import, thread_def = thread.split("\n", 1)
    archiving = code_sample(lines, "from agent.memory_provider import MemoryProvider", 2)
    archiving_body = archiving.split("class MyArchivingProvider(MemoryProvider):\n", 1)[1]
    scoped = code_sample(lines, "# CORRECT — profile-scoped, bound on the instance", until="# WRONG")
    register = code_sample(lines, "from pathlib import Path")
    init = (GLUE_HEAD + thread_import + "\n" + provider + _indent(schema) + _indent(save)
            + _indent(thread_def) + archiving_body + _indent(GLUE_METHODS)
            + "\n\nclass _ProfileScoped:  # GLUE: holds the guide's CORRECT initialize\n"
            + _indent(scoped) + GLUE_INIT + register)
    manifest = "\n".join(_paragraphs(lines, lines.index("name: my-provider"))[0]) + "\n"
    return {"__init__.py": init, "plugin.yaml": manifest,
            "cli.py": code_sample(lines, "# plugins/memory/my-provider/cli.py"),
            "README.md": "# my-provider\n", "skills/maintenance/SKILL.md": "# Maintenance\nCompact the store.\n"}


def test_the_samples_are_read_not_copied() -> None:
    lines = _guide()
    files = assemble(lines)
    ast.parse(files["__init__.py"])
    assert "pre_compress_checkpoint_api_version = 2" in files["__init__.py"]
    assert "self._sync_thread = spawn_context_thread(_sync, name=\"myprovider-sync\")" in files["__init__.py"]
    assert "my_command" not in Path(__file__).read_text(encoding="utf-8").split("def assemble", 1)[0]


TRANSCRIPT = [
    {"role": "system", "content": "You are Hermes."},
    {"role": "user", "content": "My cat is Miso."},
    {"role": "assistant", "content": "Noted.", "tool_calls": [{"id": "t1"}]},
    {"role": "tool", "tool_call_id": "t1", "content": "tool output"},
    {"role": "user", "content": "She is three."},
    {"role": "assistant", "content": "Got it."},
    {"role": "user", "content": "last question"},
    {"role": "assistant", "content": "last answer"},
]


def test_the_guides_provider_end_to_end(
    new_home: Callable[..., Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    lines = _guide()
    config: dict[str, Any] = {"memory": {"provider": "my-provider"}}
    config["memory"].update(yaml_sample(lines, "memory:")["memory"])  # prefetch_spill_enabled: true
    config.update(yaml_sample(lines, "compression:"))  # checkpoint_required: true
    home = new_home(config)
    root = home / "plugins" / "my-provider"  # where the guide puts a user's provider
    for rel, text in assemble(lines).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    monkeypatch.setenv("HERMES_HOME", str(home))

    # discovery: found as laid out (no kind: key), nothing imported
    info = find_memory_provider(home, "my-provider")
    assert info is not None and (info.source, info.problems, info.root) == ("user", (), root)

    # hermes memory setup: the schema's prompts; the secret to .env, the rest to save_config
    code = hermes(["memory", "setup", "my-provider", "--set", "api_key=k-123", "--set", "region=eu-west"])
    assert code == 0, capsys.readouterr().err
    assert (home / ".env").read_text() == "MY_API_KEY=k-123\n"
    assert json.loads((home / "my-provider.json").read_text()) == {"region": "eu-west", "project": "hermes"}
    capsys.readouterr()

    # hermes my-provider status: the guide's cli.py, mounted for the active provider
    assert hermes(["my-provider", "status"]) == 0
    assert capsys.readouterr().out == "Provider is active and connected.\n"

    # a session with tools
    told: list[str] = []
    session = AgentSession(home, "test-1", cwd=home / "workspace", say=told.append).start()
    assert told[-1].endswith("memory providers that opted in: 'my-provider'")
    assert {t["name"] for t in session.tool_schemas()} == {"memory", "my_tool", "skill_view"}
    assert json.loads(session.call_tool("my_tool", {"action": "add", "content": "Miso is a cat"})) == {
        "ok": True, "action": "add"}
    provider = session.loaded.provider  # type: ignore[union-attr]
    assert provider.tool_kwargs["hermes_home"] == str(home)  # type: ignore[attr-defined]
    skill = json.loads(session.call_tool("skill_view", {"name": "my-provider:maintenance"}))
    assert skill["content"] == "# Maintenance\nCompact the store.\n"

    # sync_turn: the guide's thread pattern, twice (a started thread would fail the second turn)
    for turn in ("first", "second"):
        session.sync_turn(f"{turn} question", f"{turn} answer")
        assert session.manager.wait_idle(10)
        provider._sync_thread.join(10)  # type: ignore[attr-defined]
    turns = [json.loads(x) for x in (home / "my-provider" / "turns.jsonl").read_text().splitlines()]
    assert [(t["user"], t["key"], t["session_id"]) for t in turns] == [
        ("first question", "k-123", "test-1"), ("second question", "k-123", "test-1")]
    assert turns[0]["cwd"] == str(home / "workspace")  # the session cwd travelled with the thread

    # prefetch: whole under the threshold, spilled above it (memory.prefetch_spill_enabled)
    assert session.prefetch("cat?") == "Miso is a cat"
    session.call_tool("my_tool", {"action": "add", "content": "x" * 12_000})
    spilled = session.prefetch("cat?")
    assert len(spilled) < 2_000 and str(home / "spill") in spilled

    # the guide's own test snippet, with a fresh instance of the provider
    snippet = code_sample(lines, "from agent.memory_manager import MemoryManager")
    with use_home(home):
        fresh = load_memory_provider(home).provider  # type: ignore[union-attr]
        scope: dict[str, Any] = {"my_provider": fresh}
        exec(compile(snippet, "guide-test-snippet", "exec"), scope)
    assert json.loads(scope["result"]) == {"ok": True, "action": "add"}

    # compaction with the checkpoint required: failure blocks, success proceeds
    (home / "my-provider" / "archive-down").write_text("")
    with pytest.raises(CheckpointBlocked) as blocked:
        session.compress(TRANSCRIPT)
    assert blocked.value.code == BLOCKED_MISSING_PREREQUISITE and blocked.value.providers == ("my-provider",)
    (home / "my-provider" / "archive-down").unlink()
    result = session.compress(TRANSCRIPT)
    assert result is not None and result.summary["_compressed_summary"] is True
    archived = list((home / "my-provider" / "archive").iterdir())
    assert len(archived) == 1 and result.provider_notes == f"checkpoint: {archived[0].stem}"
    # the evidence: the compacted middle, user/assistant text only (the tool result and the
    # tool_calls payload were left out); the last four messages stay as they are
    assert json.loads(archived[0].read_text()) == [
        {"role": "user", "content": "My cat is Miso."}, {"role": "assistant", "content": "Noted."}]
    assert result.messages == [TRANSCRIPT[0], result.summary, *TRANSCRIPT[-4:]]

    # the built-in memory: replace hands the provider previous_content
    session.call_tool("memory", {"action": "add", "target": "memory", "content": "Miso is 3"})
    session.call_tool("memory", {"action": "replace", "target": "memory", "old_text": "Miso",
                                 "content": "Miso is 4"})
    writes = [json.loads(x) for x in (home / "my-provider" / "memory-writes.jsonl").read_text().splitlines()]
    assert writes[-1] == ["replace", "memory", "Miso is 4", {"previous_content": "Miso is 3"}]
    session.close([])


def test_absent_seeds_skip_with_the_reason(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(globals(), "SEEDS", tmp_path / "nowhere")
    with pytest.raises(pytest.skip.Exception, match=r"\.\./shared is absent"):
        _guide()
