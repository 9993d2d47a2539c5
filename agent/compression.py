"""Context compaction: the one lossy rewrite of a transcript, gated by pre-compress checkpoints.

:func:`compress` is the host's compaction entry point, for manual (``/compress``) and automatic
compaction alike: the messages between the leading system messages and the last ``keep_last`` are
about to be summarized away, so the memory manager's ``on_pre_compress`` runs first
(:mod:`agent.checkpoint`), with ``require_checkpoint`` mirroring ``compression.checkpoint_required``.
When that raises :class:`~agent.checkpoint.CheckpointBlocked` nothing is rewritten: the caller
keeps its transcript and may retry. Otherwise the middle becomes one summary message carrying the
persistent ``_compressed_summary`` mark, with the providers' returned text forwarded into it.

:class:`CompressionSettings` gates the other compaction authorities while the checkpoint is
required: server-side native compaction (``compression.codex_responses_native``) is suppressed,
post-turn micro-compaction (``compression.micro_compact``) is forced off at agent start-up, and
the ``codex_app_server`` API mode is refused at start-up (:class:`CompressionConfigError`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from agent import agent_config
from agent.checkpoint import CHECKPOINT_SETTING, SUMMARY_MARK, is_summary

__all__ = ["CODEX_APP_SERVER", "CompressionConfigError", "CompressionResult", "CompressionSettings",
           "compress", "default_summarizer"]

CODEX_APP_SERVER = "codex_app_server"
Message = dict[str, Any]
#: ``summarize(messages, provider_notes) -> summary text``: the model call of a real agent.
Summarizer = Callable[[list[Message], str], str]


class PreCompressHook(Protocol):
    def on_pre_compress(self, messages: list[Message], *, require_checkpoint: bool = False) -> str: ...


class CompressionConfigError(RuntimeError):
    """A start-up setting that cannot hold while the checkpoint is required; ``setting`` and
    ``value`` name it."""

    def __init__(self, setting: str, value: object, why: str) -> None:
        self.setting = setting
        self.value = value
        super().__init__(f"{setting}: {value!r} is refused while {CHECKPOINT_SETTING} is true: {why} "
                         f"(set {CHECKPOINT_SETTING}: false to use it)")


@dataclass(frozen=True)
class CompressionSettings:
    """The ``compression`` section, *as enforced*: ``notes`` say what the gate changed."""

    checkpoint_required: bool = False
    codex_responses_native: bool = False
    micro_compact: bool = False
    keep_last: int = 4
    notes: tuple[str, ...] = field(default=())

    @classmethod
    def for_home(cls, home: str | os.PathLike[str]) -> CompressionSettings:
        data = agent_config.load(home)
        required = agent_config.flag(data, CHECKPOINT_SETTING)
        native = agent_config.flag(data, "compression.codex_responses_native")
        micro = agent_config.flag(data, "compression.micro_compact")
        keep = max(0, agent_config.setting(data, "compression.keep_last", 4))
        notes = []
        if required and native:
            notes.append("compression.codex_responses_native is suppressed while "
                         f"{CHECKPOINT_SETTING} is true (native compaction has no checkpoint hook)")
        if required and micro:
            notes.append("compression.micro_compact is forced off while "
                         f"{CHECKPOINT_SETTING} is true (it rolls old turns into a summary without "
                         "a checkpoint hook)")
        return cls(required, native and not required, micro and not required, keep, tuple(notes))

    def check_api_mode(self, api_mode: str | None) -> None:
        """Refuse ``codex_app_server`` while the checkpoint is required."""
        if self.checkpoint_required and api_mode == CODEX_APP_SERVER:
            raise CompressionConfigError("api_mode", api_mode, "the codex agent compacts its own "
                                         "thread with no honest pre-compaction boundary")


@dataclass(frozen=True)
class CompressionResult:
    """The rewritten transcript, the summary message in it, and the providers' notes."""

    messages: list[Message]
    summary: Message
    compressed: int
    provider_notes: str


def default_summarizer(messages: list[Message], provider_notes: str) -> str:
    """A model-free summary: one line per user/assistant message (earlier summaries included),
    then the providers' notes. A real agent passes its model call instead."""
    lines = [f"[Summary of {len(messages)} earlier messages]"]
    for message in messages:
        content = message.get("content")
        text = content if isinstance(content, str) else ""
        if message.get("role") in ("user", "assistant") and text.strip():
            lines.append(f"- {message['role']}: {' '.join(text.split())[:200]}")
    if provider_notes.strip():
        lines += ["", "Memory provider notes:", provider_notes.strip()]
    return "\n".join(lines)


def compress(messages: Sequence[Message], memory: PreCompressHook, settings: CompressionSettings,
             *, summarize: Summarizer = default_summarizer) -> CompressionResult | None:
    """Compact ``messages`` (module docstring); ``None`` when there is nothing to compact.
    Raises :class:`~agent.checkpoint.CheckpointBlocked` before any rewrite; ``messages`` is
    never modified."""
    original = list(messages)
    head = 0
    while head < len(original) and original[head].get("role") == "system" and not is_summary(original[head]):
        head += 1
    tail_start = max(head, len(original) - settings.keep_last)
    middle = original[head:tail_start]
    if not middle:
        return None
    notes = memory.on_pre_compress(list(middle), require_checkpoint=settings.checkpoint_required)
    summary: Message = {"role": "user", "content": summarize(list(middle), notes or ""), SUMMARY_MARK: True}
    return CompressionResult(original[:head] + [summary] + original[tail_start:], summary, len(middle), notes or "")
