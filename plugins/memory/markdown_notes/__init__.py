"""``markdown_notes``: notes in a Markdown file, grouped by topic.

Declares ``packaging>=22`` in the manifest's legacy ``pip_dependencies``; the host imports this
package only when ``memory.provider`` names it and pm's readiness says that requirement is met.
"""

from __future__ import annotations

from typing import Any

from .provider import PROVIDER_NAME, MarkdownNotesProvider

__all__ = ["PROVIDER_NAME", "MarkdownNotesProvider", "register"]


def register(ctx: Any) -> None:
    """Plugin entry: a fresh provider instance per load."""
    ctx.register_memory_provider(MarkdownNotesProvider())
