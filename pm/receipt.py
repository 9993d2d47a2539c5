"""Receipts: the JSON record every pm operation writes, success or not (docs/design.md, schema 1).

:class:`Receipt` collects fields while an operation runs; :meth:`Receipt.finish` stamps the
outcome and makes it a finished value. Writing it (atomically, to ``<home>/pm/receipts/`` and
``latest.json``) is the operation's: :func:`pm.ops.receipts.write`. No I/O here beyond asking
:func:`pm.uv.uv_version` (cached) for the tool section. The JSON Schema ships as
``pm/schemas/receipt.schema.json``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from . import __version__

SCHEMA_VERSION = 1
SCHEMA_FILE = Path(__file__).parent / "schemas" / "receipt.schema.json"
OUTCOMES = ("ok", "conflict", "failed", "refused", "not-ready")


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


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
    next_steps: list[dict[str, Any]] = field(default_factory=list)
    generation: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None
    written: dict[str, Any] | None = None  # the finished receipt, as :meth:`finish` wrote it

    def step(self, command: str, why: str, *, checked: bool | None = None) -> None:
        """Add a next step (a command runnable exactly as printed, and why); ``checked`` for a
        remedy: True when pm resolved the set with it applied before printing it."""
        if all(s["command"] != command for s in self.next_steps):
            self.next_steps.append({"command": command, "why": why}
                                   | ({"checked": checked} if checked is not None else {}))

    def to_json(self, outcome: str, exit_code: int) -> dict[str, Any]:
        from .uv import uv_version  # loaded when a receipt is finished, not to read or stamp one

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
        """Stamp the outcome: the receipt is then a finished value (:attr:`written`). Writing it is
        the operation's last step (:func:`pm.ops.receipts.write`), not this method's."""
        assert outcome in OUTCOMES, outcome
        self.written = self.to_json(outcome, exit_code)
        return self.written

    @property
    def finished(self) -> bool:
        return self.written is not None

    @property
    def exit_code(self) -> int:
        assert self.written is not None, "finish() the receipt first"
        return int(self.written["exit_code"])

    @property
    def outcome(self) -> str:
        assert self.written is not None, "finish() the receipt first"
        return str(self.written["outcome"])

    def as_written(self) -> dict[str, Any]:
        """What ``--json`` prints: the finished receipt exactly as written, and where it went."""
        assert self.written is not None, "finish() the receipt first"
        return self.written | {"receipt_path": str(self.path) if self.path else None}


def latest(home: Path) -> Path:
    return home / "pm" / "receipts" / "latest.json"
