"""``jsonl_journal``: a journal of completed turns as JSON lines; settings in YAML (PyYAML).

Declares its dependency in the root ``pyproject.toml``; the host imports this package only when
``memory.provider`` names it and pm's readiness says ``PyYAML>=6`` is installed.
"""

from __future__ import annotations

from typing import Any

from .provider import PROVIDER_NAME, JsonlJournalProvider

__all__ = ["PROVIDER_NAME", "JsonlJournalProvider", "register"]


def register(ctx: Any) -> None:
    """Plugin entry: a fresh provider instance per load, and the ``review`` skill (offered as
    ``jsonl_journal:review`` while this provider is the active one)."""
    ctx.register_memory_provider(JsonlJournalProvider())
    ctx.register_skill("review", "skills/review.md", "Review recurring topics of the journal")
