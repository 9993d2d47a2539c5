"""``sidecar_echo``: memory kept by a backend process running in the sidecar environment.

``initialize`` starts ``<sidecar python> -I runtime/backend.py --data
<home>/memory/sidecar_echo.jsonl`` and shakes hands (``hello``: the backend checks the protocol
with ``packaging`` and reports its interpreter). Every hook is one JSON-lines request/reply, under a lock, with a timeout. The
backend's stderr goes to ``<home>/plugins/.sidecar_echo/backend.log``. ``shutdown`` asks it to
stop and kills it if it does not.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import threading
from pathlib import Path
from typing import IO, Any

from agent.context import active_home
from agent.memory_provider import MemoryProvider

from .sidecar import backend_script, sidecar_dir, sidecar_python

__all__ = ["PROTOCOL", "PROVIDER_NAME", "BackendError", "SidecarEchoProvider", "backend_env"]

PROVIDER_NAME = "sidecar_echo"
PROTOCOL = ">=1,<2"
_TIMEOUT = 10.0
_TOOLS: list[dict[str, Any]] = [
    {"name": "sidecar_remember", "description": "Save a fact to the sidecar memory.",
     "parameters": {"type": "object", "properties": {"content": {"type": "string"}},
                    "required": ["content"], "additionalProperties": False}},
    {"name": "sidecar_recall", "description": "Recall facts sharing words with the query.",
     "parameters": {"type": "object", "properties": {"query": {"type": "string"}},
                    "required": ["query"], "additionalProperties": False}},
]


class BackendError(RuntimeError):
    """The backend replied with an error, stopped, or did not answer in time."""


def backend_env(home: Path) -> dict[str, str]:
    """The backend's whole environment: ``PATH``, and ``HERMES_HOME`` of the profile it serves
    (the guide: wrappers pass HERMES_HOME on, so the backend never falls back to ``~/.hermes``)."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HERMES_HOME": str(home)}


class _Backend:
    """One backend process and its pipes."""

    def __init__(self, home: Path) -> None:
        log_path = sidecar_dir(home) / "backend.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log: IO[bytes] = open(log_path, "ab")  # noqa: SIM115 - closed in close()
        data = home / "memory" / f"{PROVIDER_NAME}.jsonl"
        self.process = subprocess.Popen(
            [str(sidecar_python(home)), "-I", str(backend_script()), "--data", str(data)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, text=True,
            encoding="utf-8", env=backend_env(home))
        self._lock = threading.Lock()
        self._next = 0

    def request(self, op: str, **fields: Any) -> Any:
        with self._lock:
            self._next += 1
            stdin, stdout = self.process.stdin, self.process.stdout
            assert stdin is not None and stdout is not None
            try:
                stdin.write(json.dumps({"id": self._next, "op": op, **fields}) + "\n")
                stdin.flush()
            except (BrokenPipeError, ValueError) as exc:
                raise BackendError(f"backend is gone (exit {self.process.poll()})") from exc
            ready, _, _ = select.select([stdout], [], [], _TIMEOUT)
            line = stdout.readline() if ready else None
        if line is None:
            raise BackendError(f"backend did not answer {op!r} within {_TIMEOUT:.0f}s")
        if not line:
            raise BackendError(f"backend stopped (exit {self.process.poll()}); see backend.log")
        reply = json.loads(line)
        if "error" in reply:
            raise BackendError(f"backend refused {op!r}: {reply['error']}")
        return reply["result"]

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.request("shutdown")
                self.process.wait(timeout=5)
            except (BackendError, subprocess.TimeoutExpired, OSError, ValueError):
                self.process.kill()
                self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()
        self._log.close()


class SidecarEchoProvider(MemoryProvider):
    """The sidecar-backed memory of one profile."""

    def __init__(self) -> None:
        self._home: Path | None = None
        self._backend: _Backend | None = None
        self.backend_info: dict[str, Any] = {}

    @property
    def name(self) -> str:
        return PROVIDER_NAME

    def is_available(self) -> bool:
        """The sidecar environment exists (``hermes sidecar_echo setup`` made it)."""
        home = self._home or active_home()
        return sidecar_python(home).is_file() and backend_script().is_file()

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        home = kwargs.get("hermes_home")
        self._home = Path(home) if home else active_home()
        backend = _Backend(self._home)
        try:
            self.backend_info = backend.request("hello", protocol=PROTOCOL)
        except BaseException:
            backend.close()
            raise
        self._backend = backend

    def _call(self, op: str, **fields: Any) -> Any:
        if self._backend is None:
            raise RuntimeError(f"{PROVIDER_NAME} is not initialized (call initialize first)")
        return self._backend.request(op, **fields)

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [dict(tool) for tool in _TOOLS]

    def handle_tool_call(self, name: str, args: dict[str, Any], **kwargs: Any) -> str:
        try:
            if name == "sidecar_remember":
                return json.dumps(self._call("store", content=args.get("content", ""), kind="fact"))
            if name == "sidecar_recall":
                return json.dumps(self._call("search", query=args.get("query", ""), limit=5))
        except BackendError as exc:
            return json.dumps({"error": str(exc)})
        return json.dumps({"error": f"{PROVIDER_NAME} has no tool {name!r}"})

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        if self._backend is None:
            return ""
        results = self._call("search", query=query, limit=3)["results"]
        if not results:
            return ""
        lines = ["## Sidecar memory (sidecar_echo)"] + [f"- {m['content']}" for m in results]
        return "\n".join(lines)

    def sync_turn(self, user: str, assistant: str, *, session_id: str = "",
                  messages: list[dict[str, Any]] | None = None) -> None:
        if (user or "").strip() or (assistant or "").strip():
            self._call("store", content=f"User: {user}\nAssistant: {assistant}", kind="turn")

    def shutdown(self) -> None:
        backend, self._backend = self._backend, None
        if backend is not None:
            backend.close()

    def get_config_schema(self) -> list[dict[str, Any]]:
        return []

    def save_config(self, values: dict[str, Any], hermes_home: str | os.PathLike[str]) -> None:
        if values:
            raise ValueError(f"{PROVIDER_NAME} has no settings; got {sorted(values)}")
