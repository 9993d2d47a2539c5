"""Pre-compress checkpoints (API v2): the evidence a v2 provider receives, and the refusal.

A provider opts in with ``pre_compress_checkpoint_api_version = 2``: every successful
``on_pre_compress`` return then means its durable checkpoint is committed. With the operator's
``compression.checkpoint_required: true``, the host refuses the lossy rewrite unless every active
v2 provider completed its checkpoint (and there is at least one): :class:`CheckpointBlocked`,
code ``BLOCKED_MISSING_PREREQUISITE``, transcript untouched, retry later.

Version 1 providers (the default) keep the historical contract: raw messages, best effort.
Version 2 providers get :func:`normalize_evidence`: user/assistant text only — no tool results,
no system messages, no ``tool_calls`` payloads (the assistant's prose stays), no earlier summaries
(recognised by the persistent ``_compressed_summary`` mark, so a resumed session never archives a
summary of a summary).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["BLOCKED_MISSING_PREREQUISITE", "CHECKPOINT_SETTING", "SUMMARY_MARK", "CheckpointBlocked",
           "api_version", "checkpoint_providers", "is_summary", "normalize_evidence", "run_pre_compress"]

BLOCKED_MISSING_PREREQUISITE = "BLOCKED_MISSING_PREREQUISITE"
CHECKPOINT_SETTING = "compression.checkpoint_required"
SUMMARY_MARK = "_compressed_summary"

Message = dict[str, Any]


class CheckpointBlocked(RuntimeError):
    """Compaction refused before the lossy rewrite. ``reason`` (a phrase), ``providers`` (the v2
    providers involved; empty when there is none), ``setting`` (the key that arms the gate: set
    it to false to stop requiring a checkpoint). The original error is the ``__cause__``."""

    code = BLOCKED_MISSING_PREREQUISITE

    def __init__(self, reason: str, providers: Sequence[str] = ()) -> None:
        self.reason = reason
        self.providers = tuple(providers)
        self.setting = CHECKPOINT_SETTING
        super().__init__(
            f"{self.code}: compaction blocked before the lossy rewrite: {reason}; the transcript "
            f"is unchanged and the next attempt retries the checkpoint (to stop requiring it, set "
            f"{self.setting}: false)")


def api_version(provider: object) -> int:
    """The provider's ``pre_compress_checkpoint_api_version`` (1 when absent or not an int)."""
    value = getattr(provider, "pre_compress_checkpoint_api_version", 1)
    return value if isinstance(value, int) and not isinstance(value, bool) else 1


def checkpoint_providers(providers: Sequence[Any]) -> list[str]:
    """Names of the providers that opted into checkpoint API v2 (or later)."""
    return [str(p.name) for p in providers if api_version(p) >= 2]


def is_summary(message: object) -> bool:
    """Whether ``message`` is an earlier compaction summary (its ``_compressed_summary`` mark)."""
    return isinstance(message, dict) and bool(message.get(SUMMARY_MARK))


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts: keep the text ones
        parts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


def normalize_evidence(messages: Sequence[object]) -> list[Message]:
    """``[{"role": "user"|"assistant", "content": text}, ...]`` in order (see the module
    docstring); messages left with no text are dropped. Pure."""
    evidence = []
    for message in messages:
        if not isinstance(message, dict) or is_summary(message):
            continue
        role = message.get("role")
        text = _text(message.get("content"))
        if role in ("user", "assistant") and text.strip():
            evidence.append({"role": role, "content": text})
    return evidence


def run_pre_compress(providers: Sequence[Any], messages: list[Message], require: bool,
                     call: Callable[[Any, list[Message], bool], str],
                     best_effort: Callable[[Any, list[Message], bool], str]) -> list[str]:
    """The texts of every provider's ``on_pre_compress``. ``call(provider, messages, require)``
    runs a hook and raises; ``best_effort`` logs and returns ``""`` instead. v2 providers get
    :func:`normalize_evidence`; under ``require`` their failure, or the absence of any v2
    provider, raises :class:`CheckpointBlocked`."""
    opted = checkpoint_providers(providers)
    if require and not opted:
        raise CheckpointBlocked("no active memory provider declares pre_compress_checkpoint_api_version "
                                "= 2, so no checkpoint can be taken")
    evidence = normalize_evidence(messages) if opted else []
    texts = []
    for provider in providers:
        if api_version(provider) < 2:
            texts.append(best_effort(provider, messages, False))
        elif not require:
            texts.append(best_effort(provider, evidence, False))
        else:
            try:
                texts.append(call(provider, evidence, True))
            except Exception as exc:
                raise CheckpointBlocked(
                    f"memory provider {provider.name!r} did not complete its checkpoint "
                    f"({type(exc).__name__}: {exc})", opted) from exc
    return [t for t in texts if isinstance(t, str) and t.strip()]
