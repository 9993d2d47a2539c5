"""``sidecar_echo``: a memory provider whose backend runs in its own environment.

No declaration at this root, so pm leaves it out of the union (sidecar-only) and the host loads it
without any generation. The backend's environment is made by ``hermes sidecar_echo setup``
(:func:`.sidecar.setup_sidecar`).
"""

from __future__ import annotations

from typing import Any

from .provider import PROVIDER_NAME, SidecarEchoProvider

__all__ = ["PROVIDER_NAME", "SidecarEchoProvider", "register"]


def register(ctx: Any) -> None:
    """Plugin entry: a fresh provider instance per load."""
    ctx.register_memory_provider(SidecarEchoProvider())
