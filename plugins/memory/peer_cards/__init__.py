"""``peer_cards``: the bundled example of a provider with the guide's CLI shape.

The provider (:mod:`.provider`) keeps *peer cards*, short facts about each peer of a conversation
(the user, the assistant), in the profile's home; ``cli.py`` beside this file gives it a
``hermes peer_cards <subcommand>`` tree (``register_cli(subparser)``), mounted while
``memory.provider: peer_cards``, with ``--target-profile`` to manage another profile's cards.
"""

from __future__ import annotations

from typing import Any

from .provider import PeerCardsProvider

__all__ = ["PeerCardsProvider", "register"]


def register(ctx: Any) -> None:
    """Called by the memory plugin discovery system: a fresh instance per load."""
    ctx.register_memory_provider(PeerCardsProvider())
