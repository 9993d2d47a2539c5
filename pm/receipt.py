"""Receipts: the JSON record every pm operation writes, success or not (DESIGN.md, schema 1).

:class:`Receipt` collects fields while an operation runs; :meth:`Receipt.finish` stamps the
outcome and writes it atomically to ``<home>/pm/receipts/`` and ``latest.json``, keeping the last
:data:`KEEP` receipts. The JSON Schema ships as ``pm/schemas/receipt.schema.json``.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from . import __version__
from .errors import PmError
from .store import Store, StoreError

SCHEMA_VERSION = 1
KEEP = 50
SCHEMA_FILE = Path(__file__).parent / "schemas" / "receipt.schema.json"
OUTCOMES = ("ok", "conflict", "failed", "refused", "not-ready")


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


@functools.lru_cache(maxsize=1)
def uv_version() -> str | None:
    """``uv --version`` of the uv pm drives (``pm.uv.find_uv``), or None when it cannot be run.

    Remembered in the cache per binary (path, size, mtime), so a receipt costs no subprocess.
    """
    from .index.cache import default_cache_dir
    from .uv import find_uv

    try:
        binary = find_uv()
        stat = os.stat(binary)
    except (PmError, OSError):
        return None
    key = f"{binary}:{stat.st_size}:{stat.st_mtime_ns}"
    memo = default_cache_dir() / "uv-version.json"
    try:
        data = json.loads(memo.read_text())
        if data.get("key") == key:
            return str(data["version"])
    except (OSError, ValueError, KeyError):
        pass
    try:
        done = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    words = done.stdout.split()
    version = words[1] if done.returncode == 0 and len(words) > 1 else None
    if version is not None:
        try:
            Store(memo.parent).write_json(memo, {"key": key, "version": version})
        except PmError:
            pass
    return version


@dataclass
class Receipt:
    kind: str
    home: Path
    started_at: str = field(default_factory=now)
    target: dict[str, Any] | None = None
    inputs: dict[str, Any] | None = None
    candidate: str | None = None
    resolution: dict[str, Any] | None = None
    conflict: dict[str, Any] | None = None
    failure: dict[str, Any] | None = None
    next_steps: list[dict[str, str]] = field(default_factory=list)
    generation: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None
    written: dict[str, Any] | None = None  # the finished receipt, as :meth:`finish` wrote it

    def step(self, command: str, why: str) -> None:
        """Add a next step (a command runnable exactly as printed, and why)."""
        if all(s["command"] != command for s in self.next_steps):
            self.next_steps.append({"command": command, "why": why})

    def to_json(self, outcome: str, exit_code: int) -> dict[str, Any]:
        return {
            "schema": SCHEMA_VERSION,
            "kind": self.kind,
            "outcome": outcome,
            "exit_code": exit_code,
            "started_at": self.started_at,
            "finished_at": now(),
            "tool": {"name": "hermes-pm", "version": __version__, "uv": uv_version()},
            "home": str(self.home),
            "target": self.target,
            "inputs": self.inputs,
            "candidate": self.candidate,
            "resolution": self.resolution,
            "conflict": self.conflict,
            "failure": self.failure,
            "next_steps": self.next_steps,
            "generation": self.generation,
            "warnings": list(self.warnings),
            **self.extra,
        }

    def finish(self, outcome: str, exit_code: int) -> dict[str, Any]:
        """Write the receipt; its path goes to ``self.path``. A write failure becomes a warning
        on stderr's side (the caller's exit code stands), never a lost operation result."""
        assert outcome in OUTCOMES, outcome
        data = self.to_json(outcome, exit_code)
        try:
            self.path = write_receipt(self.home, data)
        except StoreError as exc:
            self.warnings.append(f"receipt not written: {exc}")
            data["warnings"].append(self.warnings[-1])
            self.path = None
        self.written = data
        return data

    def as_written(self) -> dict[str, Any]:
        """What ``--json`` prints: the finished receipt exactly as written, and where it went."""
        assert self.written is not None, "finish() the receipt first"
        return self.written | {"receipt_path": str(self.path) if self.path else None}


def write_receipt(home: Path, data: dict[str, Any]) -> Path:
    folder = home / "pm" / "receipts"
    store = Store.for_home(home)
    stamp = data["started_at"].replace(":", "").replace("-", "").replace(".", "")
    path = folder / f"{stamp}-{data['kind']}-{os.getpid()}.json"
    # Serialised once, compactly: a 200-plugin receipt is large and indent= takes Python's slow
    # encoder path; `jq .` or `python -m json.tool` pretty-print it for people.
    encoded = (json.dumps(data, separators=(",", ":"), default=str) + "\n").encode()
    store.write_bytes(path, encoded)
    store.write_bytes(folder / "latest.json", encoded)
    _prune(store, folder)
    return path


def _prune(store: Store, folder: Path) -> None:
    receipts = sorted(p for p in folder.glob("*.json") if p.name != "latest.json")
    for old in receipts[:-KEEP]:
        store.unlink(old)


def latest(home: Path) -> Path:
    return home / "pm" / "receipts" / "latest.json"
