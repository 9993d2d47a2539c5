"""Receipts: the JSON record every pm operation writes, success or not (docs/design.md, schema 1).

An operation fills one :class:`Draft` while it runs: the sections (target, inputs, resolution,
conflict, failure, generation), next steps, warnings, and its own top-level fields through
:meth:`Draft.record` — each recorded once. :meth:`Draft.finish` then builds the
:class:`Receipt`, once: an immutable value, the JSON as it is written (plus, after writing, where).
The tool section (pm's and uv's versions) is handed to ``finish`` by the operation
(:func:`pm.ops.receipts.tool_facts`, computed once per process): nothing here runs a program or
touches the disk. Writing is :func:`pm.ops.receipts.write`'s. The JSON Schema ships as
``pm/schemas/receipt.schema.json``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from types import MappingProxyType
from typing import Any

SCHEMA_VERSION = 1
SCHEMA_FILE = Path(__file__).resolve().parents[1] / "schemas" / "receipt.schema.json"
OUTCOMES = ("ok", "conflict", "failed", "refused", "not-ready")
#: The sections every receipt has, in order; an operation's own fields follow them.
SECTIONS = ("schema", "kind", "outcome", "exit_code", "started_at", "finished_at", "tool", "home", "target",
            "inputs", "candidate", "resolution", "conflict", "failure", "next_steps", "generation", "warnings")


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


@dataclass
class Draft:
    """What one running operation has found so far; :meth:`finish` makes the receipt of it."""

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
    asides: list[dict[str, Any]] = field(default_factory=list)  # steps about the home, not this outcome
    generation: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)
    fields: dict[str, Any] = field(default_factory=dict)  # the operation's own, by record()

    def step(self, command: str, why: str, *, checked: bool | None = None, aside: bool = False,
             kind: str | None = None) -> None:
        """Add a next step (a command runnable exactly as printed, and why); ``checked`` for a
        remedy: True when pm resolved the set with it applied before printing it. An ``aside`` is
        about the home rather than this operation's outcome (a configured provider not installed):
        it comes after the steps that answer the outcome, so a refusal's remedies are read first.
        A remedy's ``kind`` (set-aside, relax, override, allow-build) says which it is, as data."""
        if all(s["command"] != command for s in (*self.next_steps, *self.asides)):
            (self.asides if aside else self.next_steps).append(
                {"command": command, "why": why} | ({"checked": checked} if checked is not None else {})
                | ({"kind": kind} if kind else {}))

    def record(self, **fields: Any) -> None:
        """The operation's own top-level fields (``message``, ``installed``, ``frozen`` …), each
        recorded once: a second, different value for one is a bug, and so is a section's name. A
        mapping may be completed later with new keys (``frozen``'s local files, once known)."""
        for key, value in fields.items():
            assert key not in SECTIONS, f"{key!r} is a receipt section, not an operation's field"
            before = self.fields.get(key, value)
            if isinstance(before, dict) and isinstance(value, dict) and before is not value:
                assert all(before.get(k, v) == v for k, v in value.items()), f"receipt field {key}.* recorded twice"
                value = {**before, **value}
            else:
                assert before == value, f"receipt field {key!r} recorded twice"
            self.fields[key] = value

    def finish(self, outcome: str, exit_code: int, tool: Mapping[str, Any]) -> Receipt:
        """The receipt of this operation, ending now with ``outcome`` and ``exit_code``."""
        assert outcome in OUTCOMES, outcome
        data = {
            "schema": SCHEMA_VERSION,
            "kind": self.kind,
            "outcome": outcome,
            "exit_code": exit_code,
            "started_at": self.started_at,
            "finished_at": now(),
            "tool": dict(tool),
            "home": str(self.home),
            "target": self.target,
            "inputs": self.inputs,
            "candidate": self.candidate,
            "resolution": self.resolution,
            "conflict": self.conflict,
            "failure": self.failure,
            "next_steps": [*self.next_steps, *self.asides],
            "generation": self.generation,
            "warnings": list(self.warnings),
            **self.fields,
        }
        return Receipt(MappingProxyType(data), self.home)


@dataclass(frozen=True)
class Receipt:
    """A finished receipt: ``data`` as written (read-only), its ``home`` and, once written, its
    ``path`` (None when it was not written)."""

    data: Mapping[str, Any]
    home: Path
    path: Path | None = None

    finished = True

    @property
    def written(self) -> dict[str, Any]:
        """The receipt as JSON data (a copy of the top level: change it freely)."""
        return dict(self.data)

    def as_written(self) -> dict[str, Any]:
        """What ``--json`` prints: the receipt exactly as written, and where it went."""
        return self.written | {"receipt_path": str(self.path) if self.path else None}

    def with_path(self, path: Path | None, warning: str | None = None) -> Receipt:
        """This receipt written to ``path`` (None: not written, and ``warning`` says why)."""
        if warning is None:
            return replace(self, path=path)
        data = dict(self.data) | {"warnings": [*self.data["warnings"], warning]}
        return replace(self, data=MappingProxyType(data), path=path)

    @property
    def extra(self) -> Mapping[str, Any]:
        """The operation's own fields (those that are not a section)."""
        return MappingProxyType({k: v for k, v in self.data.items() if k not in SECTIONS})

    @property
    def kind(self) -> str:
        return str(self.data["kind"])

    @property
    def outcome(self) -> str:
        return str(self.data["outcome"])

    @property
    def exit_code(self) -> int:
        return int(self.data["exit_code"])

    @property
    def started_at(self) -> str:
        return str(self.data["started_at"])

    @property
    def target(self) -> dict[str, Any] | None:
        return self.data["target"]

    @property
    def inputs(self) -> dict[str, Any] | None:
        return self.data["inputs"]

    @property
    def candidate(self) -> str | None:
        return self.data["candidate"]

    @property
    def resolution(self) -> dict[str, Any] | None:
        return self.data["resolution"]

    @property
    def conflict(self) -> dict[str, Any] | None:
        return self.data["conflict"]

    @property
    def failure(self) -> dict[str, Any] | None:
        return self.data["failure"]

    @property
    def generation(self) -> dict[str, Any] | None:
        return self.data["generation"]

    @property
    def next_steps(self) -> list[dict[str, Any]]:
        return list(self.data["next_steps"])

    @property
    def warnings(self) -> list[str]:
        return list(self.data["warnings"])


def latest(home: Path) -> Path:
    return home / "pm" / "receipts" / "latest.json"
