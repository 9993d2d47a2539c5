"""What installs a memory provider that ``memory.provider`` names but nothing provides: the one
rule behind every hint that names ``hermes update`` (the receipts' next steps, the selection's
warning, the host's loader and its start-up warning, ``hermes update`` itself).

``hermes update`` installs such a provider from the catalog only when the catalog has an entry of
that name (and has not removed it); otherwise no pm command can, and the hint says what can: the
provider's own source (``hermes plugins install SOURCE``), or another provider
(``hermes memory setup NAME``). The catalog is read as :func:`pm.ops.install.catalog_for` reads it,
the live catalog from its kept copy only (a hint never reaches the network), and what was read is
noted in the watch: a shortcut's answer stands on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pm.base.commands import hermes
from pm.base.errors import PmError
from pm.base.watch import UNWATCHED, Watch


@dataclass(frozen=True)
class Remedy:
    """What to run for a missing provider (``command`` None: nothing pm runs installs it) and why."""

    command: str | None
    why: str

    def said(self) -> str:
        """The remedy in one clause, for a warning: ``run `hermes update` to …`` or the why alone."""
        return f"run `{self.command}` to {self.why}" if self.command else self.why


def provider_remedy(home: Path, provider: str, *, configured: bool = True, shown_home: Path | None = None,
                    watch: Watch = UNWATCHED) -> Remedy:
    """The remedy for ``provider``, which nothing in ``home`` provides. ``configured``: named by
    ``memory.provider`` (``hermes update`` installs it); else asked for by name (``hermes plugins
    install NAME`` does)."""
    from pm.ops.install import catalog_for  # read only when a provider is missing

    try:
        catalog = catalog_for(home, fetch=False, watch=watch)
        entry = catalog.find(provider)
    except PmError as exc:  # removed from the catalog, or a catalog that cannot be read
        return Remedy(None, f"the catalog cannot install it ({exc}): {_otherwise(shown_home)}")
    if entry is None:
        return Remedy(None, f"the catalog ({catalog.file}) has no entry {provider!r}, so `hermes update` cannot "
                            f"install it: {_otherwise(shown_home)}")
    if configured:
        return Remedy(hermes("update", home=shown_home), "install it from the catalog")
    return Remedy(hermes("plugins", "install", provider, home=shown_home), "install it from the catalog")


def _otherwise(shown_home: Path | None) -> str:
    return (f"install it from its source (`{hermes('plugins', 'install', 'SOURCE', home=shown_home)}`) or choose "
            f"an installed provider (`{hermes('memory', 'setup', 'NAME', home=shown_home)}`)")
