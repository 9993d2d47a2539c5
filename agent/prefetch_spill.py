"""Oversized ``prefetch()`` results of an external provider: whole by default, spilled when huge.

Settings (the profile's ``config.yaml``; fixed when the provider is registered with its manager,
so a change needs a restart):

* ``hooks.output_spill.max_chars`` (default 10,000): the spill threshold;
* ``hooks.output_spill.enabled`` (default true): ``false`` turns every spill off, the memory
  opt-in included; a result above the safety cap is then cut to its head and tail in place;
* ``hooks.output_spill.preview_head_chars`` / ``preview_tail_chars`` (default 500 each) and
  ``hooks.output_spill.dir`` (default ``<home>/spill``): the preview and where files go;
* ``memory.prefetch_spill_enabled`` (default false): spill results above ``max_chars``.

Without the opt-in a result is returned whole (the provider's relevance order is kept) up to the
**safety cap**, ten times ``max_chars`` and at least 100,000 chars; above it the result is spilled
anyway. A spilled result is written to its own file (mode 0600) and replaced by the head, the
tail and the file's path: the model reads the file for the middle. The built-in memory and other
plugin hooks are not affected.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path

from agent import agent_config

__all__ = ["MIN_SAFETY_CAP", "SpillSettings", "apply_spill"]

MIN_SAFETY_CAP = 100_000


@dataclass(frozen=True)
class SpillSettings:
    """The settings of the module docstring, as read at registration."""

    directory: Path
    enabled: bool = True
    max_chars: int = 10_000
    head_chars: int = 500
    tail_chars: int = 500
    prefetch_spill_enabled: bool = False

    @classmethod
    def for_home(cls, home: str | os.PathLike[str]) -> SpillSettings:
        data = agent_config.load(home)
        spill = "hooks.output_spill."
        folder = agent_config.setting(data, spill + "dir", "")
        return cls(
            directory=Path(folder).expanduser() if folder else Path(home) / "spill",
            enabled=agent_config.setting(data, spill + "enabled", True) is not False,
            max_chars=max(1, agent_config.setting(data, spill + "max_chars", 10_000)),
            head_chars=max(0, agent_config.setting(data, spill + "preview_head_chars", 500)),
            tail_chars=max(0, agent_config.setting(data, spill + "preview_tail_chars", 500)),
            prefetch_spill_enabled=agent_config.flag(data, "memory.prefetch_spill_enabled"),
        )

    @property
    def safety_cap(self) -> int:
        """Ten times ``max_chars``, at least :data:`MIN_SAFETY_CAP`."""
        return max(10 * self.max_chars, MIN_SAFETY_CAP)

    @property
    def threshold(self) -> int:
        """Above this many chars a prefetch result does not go into the context whole."""
        opted = self.enabled and self.prefetch_spill_enabled
        return self.max_chars if opted else self.safety_cap


def _preview(text: str, settings: SpillSettings, note: str) -> str:
    head = text[: settings.head_chars]
    tail = text[len(text) - settings.tail_chars:] if settings.tail_chars else ""
    return f"{head}\n\n[{note}]\n\n{tail}"


def apply_spill(text: str, settings: SpillSettings, provider: str) -> str:
    """``text`` as it goes into the context (see the module docstring)."""
    if len(text) <= settings.threshold:
        return text
    omitted = len(text) - settings.head_chars - settings.tail_chars
    if not settings.enabled:
        return _preview(text, settings, f"memory prefetch of {provider!r}: {omitted} of {len(text)} "
                        "chars omitted (safety cap; hooks.output_spill.enabled is false)")
    settings.directory.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    path = settings.directory / f"memory-prefetch-{provider}-{time.strftime('%Y%m%dT%H%M%S')}-{digest}.txt"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    return _preview(text, settings, f"memory prefetch of {provider!r}: {len(text)} chars; the "
                    f"{omitted} chars between this head and tail are in {path} (read it for the rest)")
