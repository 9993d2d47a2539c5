"""A provider's own code, when the dashboard needs it, run in a child process — never in the
dashboard's, which holds the token.

A provider that ships ``config_schema.py`` has its schema read as data (:mod:`agent.config_schema`);
one whose schema exists only as the guide's ``get_config_schema()`` method, and every provider's
``save_config``, run here, in a separate interpreter (``python -P -m agent.provider_child COMMAND
HOME NAME``), loaded as ``hermes memory setup`` loads it (the selected generation activated, the
provider's calls bounded):

- ``schema``: :func:`agent.memory_setup.settings_schema`;
- ``save``: :func:`agent.memory_setup.run_setup` with the form read as JSON from the child's
  standard input (only the schema's keys; secrets never reach a command line).

The child writes one JSON object on the standard output it started with (what the provider prints
goes to stderr). The parent (:func:`schema`, :func:`save`) waits at most :func:`deadline` seconds,
reads at most :data:`~agent.config_schema.MAX_SCHEMA_BYTES`, and kills the child's whole process
group when either is passed.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agent.bounded import timeout
from agent.config_schema import MAX_SCHEMA_BYTES

__all__ = ["ChildFailed", "deadline", "main", "save", "schema"]

#: Seconds the child may take besides the provider's own bounded calls (interpreter start, activation).
STARTUP_SECONDS = 10.0


class ChildFailed(ValueError):
    """The child gave no answer, or its answer is an error: ``provider``, the ``problem`` as a
    person reads it, and the HTTP ``status`` of the page that says it."""

    def __init__(self, provider: str, problem: str, status: int = 409) -> None:
        self.provider = provider
        self.problem = problem
        self.status = status
        super().__init__(problem if problem.startswith(f"{provider}: ") else f"{provider}: {problem}")


def deadline() -> float:
    """Seconds the parent waits: a provider call's limit (``HERMES_PROVIDER_TIMEOUT``) plus
    :data:`STARTUP_SECONDS`."""
    return timeout() + STARTUP_SECONDS


def schema(home: Path, name: str) -> list[dict[str, Any]]:
    """Provider ``name``'s ``get_config_schema()`` for ``home``; raises :class:`ChildFailed`."""
    fields = _ask("schema", home, name).get("schema")
    if not isinstance(fields, list) or not all(isinstance(f, dict) for f in fields):
        raise ChildFailed(name, "get_config_schema() did not return a list of dicts")
    return fields


def save(home: Path, name: str, form: Mapping[str, str]) -> dict[str, Any]:
    """``hermes memory setup NAME`` with ``form``'s values: ``{"settings", "secrets", "env_file"}``
    as :class:`agent.memory_setup.SetupResult` holds them; raises :class:`ChildFailed`."""
    return _ask("save", home, name, json.dumps(dict(form)).encode())


def _ask(command: str, home: Path, name: str, given: bytes = b"") -> dict[str, Any]:
    from pm.base.uv import die_with_parent

    argv = [sys.executable, "-P", "-m", "agent.provider_child", command, str(Path(home).absolute()), name]
    child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             start_new_session=True, preexec_fn=die_with_parent())  # noqa: PLW1509 - prctl only
    assert child.stdin is not None and child.stdout is not None
    with contextlib.suppress(OSError):
        child.stdin.write(given)
    with contextlib.suppress(OSError):
        child.stdin.close()
    read: list[bytes] = []
    reader = threading.Thread(target=_read_bounded, args=(child.stdout, read), daemon=True)
    reader.start()
    limit = deadline()
    reader.join(limit)
    if reader.is_alive() or len(b"".join(read)) > MAX_SCHEMA_BYTES:
        _kill(child)
        reader.join(1.0)
        if reader.is_alive():
            raise ChildFailed(name, f"the provider's code did not answer within {limit:g}s (a provider's code must "
                              "not block; a config_schema.py beside its __init__.py is read without running it)")
        raise ChildFailed(name, f"the provider's answer is over {MAX_SCHEMA_BYTES} bytes; refused")
    try:
        child.wait(timeout=1.0)  # the answer is in: a child that lingers (a provider's thread) is killed
    except subprocess.TimeoutExpired:
        _kill(child)
    return _answer(name, b"".join(read))


def _read_bounded(stream: Any, read: list[bytes]) -> None:
    """Read ``stream`` to its end, keeping at most one chunk over the bound (then stop reading)."""
    size = 0
    while size <= MAX_SCHEMA_BYTES and (chunk := stream.read1(65536)):
        read.append(chunk)
        size += len(chunk)


def _kill(child: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError):
        if hasattr(os, "killpg"):
            os.killpg(child.pid, signal.SIGKILL)
        else:
            child.kill()
    child.wait()


def _answer(name: str, data: bytes) -> dict[str, Any]:
    try:
        answer = json.loads(data)
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        raise ChildFailed(name, "the child that loads the provider gave no answer (the provider wrote to its "
                          "standard output, or the process died)")
    if "error" in answer:
        status = answer.get("status")
        raise ChildFailed(name, str(answer["error"]), status if status in (400, 409) else 409)
    return answer


def _run(command: str, home: Path, name: str, given: str) -> dict[str, Any]:
    from agent.memory_setup import run_setup, settings_schema

    fields = settings_schema(home, name)
    if command == "schema":
        return {"schema": fields}
    form = json.loads(given or "{}")
    keys = {str(f["key"]) for f in fields}
    result = run_setup(home, name, {k: str(v) for k, v in form.items() if k in keys}, None)
    return {"settings": list(result.settings), "secrets": list(result.secrets), "env_file": str(result.env_file)}


def main(argv: list[str]) -> int:
    """The child: ``schema|save HOME NAME`` (the form on stdin for ``save``); one JSON object on
    the standard output it started with; whatever the provider prints goes to stderr."""
    from agent.errors import ActivationError, MemoryPluginError
    from agent.memory_setup import SetupError
    from pm.base.errors import PmError

    answer = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # a provider's print (or os.write(1, ...)) cannot corrupt the answer
    command, home, name = argv[0], Path(argv[1]), argv[2]
    try:
        said = _run(command, home, name, sys.stdin.read(MAX_SCHEMA_BYTES) if command == "save" else "")
    except SetupError as exc:
        said = {"error": str(exc), "status": 400}
    except (MemoryPluginError, PmError, ActivationError, ValueError) as exc:
        said = {"error": str(exc), "status": 409}
    try:
        text = json.dumps(said, default=str)
    except (TypeError, ValueError) as exc:
        text = json.dumps({"error": f"{name}: get_config_schema() returned what JSON cannot hold ({exc})"})
    answer.write(text)
    answer.close()  # the parent reads to the end of this: the end is now, whatever lingers
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
