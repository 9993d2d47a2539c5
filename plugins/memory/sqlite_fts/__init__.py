"""``sqlite_fts``: the bundled SQLite FTS5 memory provider (standard library only).

The host imports this package only when ``memory.provider`` names ``sqlite_fts``, and calls
:func:`register` with its plugin context. The provider lives in :mod:`.provider`, its storage in
:mod:`.store`; both are imported relatively, so the package must be loaded as a package (a spec
with ``submodule_search_locations``), as the host's loader does.
"""

from __future__ import annotations

from typing import Any

from .provider import PROVIDER_NAME, SqliteFtsProvider

__all__ = ["PROVIDER_NAME", "SqliteFtsProvider", "register"]


def register(ctx: Any) -> None:
    """Plugin entry: hand a fresh provider instance to the host (one per load)."""
    ctx.register_memory_provider(SqliteFtsProvider())
