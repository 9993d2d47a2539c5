"""The host's built-in memory: ``<home>/memories/MEMORY.md`` (notes) and ``USER.md`` (the user).

Each file is a list of entries separated by a line holding ``§``. Writes go through
:meth:`BuiltinMemoryStore.apply`, one batch at a time, under the store's lock (a thread lock and
an exclusive file lock on ``memories/.lock`` for other processes, :mod:`pm.base.filelock`): every operation is applied in order to
the current entries, each ``replace``/``remove`` choosing its entry by the caller's ``old_text``
(a search string: it must match exactly one distinct entry) and recording that entry's full text
as ``previous_content`` — so an operation sees the earlier operations of its batch. Only when the
whole batch is valid are the files written (atomically); only then are the writes announced, in
operation order, to ``notify(action, target, content, metadata)`` (the memory manager's
``on_memory_write``). A failing batch writes and announces nothing.

:class:`BuiltinMemoryProvider` is the ``builtin`` provider over it: the ``memory`` tool and the
system prompt block.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.memory_provider import MemoryProvider
from pm.base import filelock
from pm.base.store import Store

__all__ = ["DELIMITER", "TARGETS", "BuiltinMemoryError", "BuiltinMemoryProvider", "BuiltinMemoryStore",
           "MemoryOp", "MemoryWrite"]

DELIMITER = "\n§\n"
TARGETS = {"memory": "MEMORY.md", "user": "USER.md"}
ACTIONS = ("add", "replace", "remove")
Notify = Callable[[str, str, str, dict[str, Any]], None]


@dataclass(frozen=True)
class MemoryOp:
    """One operation: ``action`` on ``target``; ``content`` (add, replace) and ``old_text``
    (replace, remove: the search string)."""

    action: str
    target: str
    content: str = ""
    old_text: str = ""

    @classmethod
    def from_args(cls, args: dict[str, Any]) -> MemoryOp:
        return cls(str(args.get("action", "")), str(args.get("target", "memory")),
                   str(args.get("content", "")), str(args.get("old_text", "")))


@dataclass(frozen=True)
class MemoryWrite:
    """A write that happened: what providers are told."""

    action: str
    target: str
    content: str
    metadata: dict[str, Any] = field(default_factory=dict)


class BuiltinMemoryError(ValueError):
    """An operation that cannot apply; ``index`` (its place in the batch), ``op`` and
    ``problem``. Nothing of the batch was written."""

    def __init__(self, index: int, op: MemoryOp, problem: str) -> None:
        self.index = index
        self.op = op
        self.problem = problem
        super().__init__(f"memory operation {index + 1} ({op.action} on {op.target}): {problem}")


class BuiltinMemoryStore:
    """The two files of one home (module docstring)."""

    def __init__(self, home: str | Path, notify: Notify | None = None) -> None:
        self.folder = Path(home) / "memories"
        self.notify = notify
        self._lock = threading.Lock()

    def entries(self, target: str) -> list[str]:
        """The entries of ``target`` now."""
        try:
            text = (self.folder / TARGETS[target]).read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        return [e.strip() for e in text.split(DELIMITER) if e.strip()]

    @contextmanager
    def _locked(self) -> Iterator[None]:
        self.folder.mkdir(parents=True, exist_ok=True)
        with self._lock, (self.folder / ".lock").open("a") as handle:
            filelock.lock(handle.fileno())
            try:
                yield
            finally:
                filelock.unlock(handle.fileno())

    def apply(self, ops: Sequence[MemoryOp]) -> list[MemoryWrite]:
        """Apply the batch (module docstring); returns the writes, in order. Raises
        :class:`BuiltinMemoryError`."""
        with self._locked():
            state = {target: self.entries(target) for target in TARGETS}
            writes = [self._apply_one(i, op, state) for i, op in enumerate(ops)]
            store = Store(self.folder)
            for target in {w.target for w in writes}:
                text = DELIMITER.join(state[target]) + ("\n" if state[target] else "")
                store.write_bytes(self.folder / TARGETS[target], text.encode("utf-8"))
        for write in writes:
            if self.notify is not None:
                self.notify(write.action, write.target, write.content, dict(write.metadata))
        return writes

    def _apply_one(self, index: int, op: MemoryOp, state: dict[str, list[str]]) -> MemoryWrite:
        if op.action not in ACTIONS:
            raise BuiltinMemoryError(index, op, f"unknown action {op.action!r} (one of {', '.join(ACTIONS)})")
        if op.target not in TARGETS:
            raise BuiltinMemoryError(index, op, f"unknown target {op.target!r} (one of {', '.join(TARGETS)})")
        entries = state[op.target]
        if op.action == "add":
            if not op.content.strip():
                raise BuiltinMemoryError(index, op, "content is empty")
            entries.append(op.content.strip())
            return MemoryWrite("add", op.target, op.content.strip())
        position = self._find(index, op, entries)
        previous = entries[position]
        if op.action == "replace":
            if not op.content.strip():
                raise BuiltinMemoryError(index, op, "content is empty (use remove to delete)")
            entries[position] = op.content.strip()
            return MemoryWrite("replace", op.target, op.content.strip(), {"previous_content": previous})
        del entries[position]
        return MemoryWrite("remove", op.target, previous, {"previous_content": previous})

    @staticmethod
    def _find(index: int, op: MemoryOp, entries: list[str]) -> int:
        if not op.old_text:
            raise BuiltinMemoryError(index, op, "old_text is empty")
        hits = [i for i, entry in enumerate(entries) if op.old_text in entry]
        if not hits:
            raise BuiltinMemoryError(index, op, f"no entry contains {op.old_text!r}")
        if len({entries[i] for i in hits}) > 1:
            raise BuiltinMemoryError(index, op, f"{len(hits)} different entries contain {op.old_text!r}; "
                                     "give more of the entry's text")
        return hits[0]


_TOOL = {
    "name": "memory",
    "description": "Save, change or delete a note in the built-in memory (MEMORY.md: notes; USER.md: the user).",
    "parameters": {"type": "object", "properties": {
        "action": {"type": "string", "enum": list(ACTIONS)},
        "target": {"type": "string", "enum": list(TARGETS)},
        "content": {"type": "string"}, "old_text": {"type": "string"},
        "operations": {"type": "array", "items": {"type": "object"},
                       "description": "several operations applied as one batch, in order"}}},
}


class BuiltinMemoryProvider(MemoryProvider):
    """``builtin``: the store as a provider (tool ``memory``; the files in the system prompt)."""

    def __init__(self, notify: Notify | None = None) -> None:
        self._notify = notify
        self.store: BuiltinMemoryStore | None = None

    @property
    def name(self) -> str:
        return "builtin"

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self.store = BuiltinMemoryStore(kwargs["hermes_home"], self._notify)

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [json.loads(json.dumps(_TOOL))]

    def handle_tool_call(self, name: str, args: dict[str, Any], **kwargs: Any) -> str:
        if self.store is None or name != "memory":
            return super().handle_tool_call(name, args, **kwargs)
        raw = args.get("operations")
        ops = [MemoryOp.from_args(o) for o in raw if isinstance(o, dict)] if isinstance(raw, list) \
            else [MemoryOp.from_args(args)]
        try:
            writes = self.store.apply(ops)
        except BuiltinMemoryError as exc:
            return json.dumps({"error": str(exc)})
        return json.dumps({"ok": True, "applied": [w.action for w in writes]})

    def system_prompt_block(self) -> str:
        if self.store is None:
            return ""
        parts = []
        for target, file in TARGETS.items():
            entries = self.store.entries(target)
            if entries:
                parts.append(f"## {file}\n" + "\n".join(f"- {e}" for e in entries))
        return "\n\n".join(parts)
