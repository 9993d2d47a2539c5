"""A provider's settings schema from its own ``get_config_schema()``, asked in a child process.

The dashboard holds a token and never imports plugin code. A provider that ships
``config_schema.py`` has its schema read as data (:mod:`agent.config_schema`); one whose schema
exists only as the guide's ``get_config_schema()`` method is loaded here, in a separate
interpreter (``python -P -m agent.schema_probe HOME NAME``): the same load ``hermes memory setup``
does (the selected generation activated, the provider's calls bounded), its schema written as
JSON on the child's standard output. The parent (:func:`probe_schema`) waits at most
:func:`deadline` seconds, reads at most :data:`~agent.config_schema.MAX_SCHEMA_BYTES`, and kills
the child's whole process group when either is passed.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from agent.bounded import timeout
from agent.config_schema import MAX_SCHEMA_BYTES

__all__ = ["ProbeFailed", "deadline", "main", "probe_schema"]

#: Seconds the child may take besides the provider's own bounded calls (interpreter start, activation).
STARTUP_SECONDS = 10.0


class ProbeFailed(ValueError):
    """The child gave no schema: ``provider`` and the ``problem``, as a person reads it."""

    def __init__(self, provider: str, problem: str) -> None:
        self.provider = provider
        self.problem = problem
        super().__init__(f"{provider}: {problem}")


def deadline() -> float:
    """Seconds :func:`probe_schema` waits: a provider call's limit (``HERMES_PROVIDER_TIMEOUT``)
    plus :data:`STARTUP_SECONDS`."""
    return timeout() + STARTUP_SECONDS


def probe_schema(home: Path, name: str) -> list[dict[str, Any]]:
    """Provider ``name``'s ``get_config_schema()`` for ``home``, from a child process; raises
    :class:`ProbeFailed` naming the provider (its own error, the deadline, or the size bound)."""
    from pm.base.uv import die_with_parent

    argv = [sys.executable, "-P", "-m", "agent.schema_probe", str(Path(home).absolute()), name]
    child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             start_new_session=True, preexec_fn=die_with_parent())  # noqa: PLW1509 - prctl only
    assert child.stdout is not None
    read: list[bytes] = []
    reader = threading.Thread(target=_read_bounded, args=(child.stdout, read), daemon=True)
    reader.start()
    limit = deadline()
    reader.join(limit)
    if reader.is_alive() or len(b"".join(read)) > MAX_SCHEMA_BYTES:
        _kill(child)
        reader.join(1.0)
        if reader.is_alive():
            raise ProbeFailed(name, f"get_config_schema() gave no schema within {limit:g}s (a provider's code must "
                              "not block; a config_schema.py beside its __init__.py is read without running it)")
        raise ProbeFailed(name, f"get_config_schema() gave more than {MAX_SCHEMA_BYTES} bytes; refused")
    try:
        child.wait(timeout=1.0)  # the answer is in: a child that lingers (a provider's thread) is killed
    except subprocess.TimeoutExpired:
        _kill(child)
    return _schema(name, b"".join(read))


def _read_bounded(stream: Any, read: list[bytes]) -> None:
    """Read ``stream`` to its end, keeping at most one byte over the bound (then stop reading)."""
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


def _schema(name: str, data: bytes) -> list[dict[str, Any]]:
    try:
        answer = json.loads(data)
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        raise ProbeFailed(name, "loading the provider to ask its get_config_schema() gave no answer (it wrote to "
                          "standard output, or its process died)")
    if "error" in answer:
        raise ProbeFailed(name, str(answer["error"]))
    schema = answer.get("schema")
    if not isinstance(schema, list) or not all(isinstance(f, dict) for f in schema):
        raise ProbeFailed(name, "get_config_schema() did not return a list of dicts")
    return schema


def main(argv: list[str]) -> int:
    """The child: ``HOME NAME``; one JSON object on the standard output it started with
    (``{"schema": [...]}`` or ``{"error": "..."}``); whatever the provider prints goes to stderr."""
    from agent.errors import MemoryPluginError
    from agent.memory_setup import SetupError, settings_schema

    answer = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # a provider's print (or os.write(1, ...)) cannot corrupt the answer
    home, name = Path(argv[0]), argv[1]
    try:
        said: dict[str, Any] = {"schema": settings_schema(home, name)}
    except (SetupError, MemoryPluginError) as exc:
        said = {"error": str(exc)}
    try:
        text = json.dumps(said, default=str)
    except (TypeError, ValueError) as exc:
        text = json.dumps({"error": f"{name}: get_config_schema() returned what JSON cannot hold ({exc})"})
    answer.write(text)
    answer.close()  # the parent reads to the end of this: the end is now, whatever lingers
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
