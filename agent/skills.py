"""Skills that memory providers bring, qualified ``<provider>:<name>``.

A provider registers skills from its ``register(ctx)`` (``ctx.register_skill(name, path,
description)``). They are offered only while that provider is the active one of a home: when a
home loads a provider, the skills of any other provider of that home are withdrawn, and
:func:`withdraw` removes a provider's skills when it is unloaded. Per process, per home;
thread-safe.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Skill", "qualify", "replace_active", "skills_of", "withdraw"]

_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*\Z")


@dataclass(frozen=True)
class Skill:
    """One skill: its ``provider``, short ``name``, ``qualified`` name, file ``path`` (inside the
    provider's root) and ``description``."""

    provider: str
    name: str
    path: Path
    description: str

    @property
    def qualified(self) -> str:
        return qualify(self.provider, self.name)


def qualify(provider: str, name: str) -> str:
    """``<provider>:<name>``. Raises ``ValueError`` for a name with ``:``, ``/`` or spaces."""
    if not _NAME_RE.match(name):
        raise ValueError(f"invalid skill name {name!r}: use letters, digits, '_', '-', '.'")
    return f"{provider}:{name}"


_TABLE: dict[Path, dict[str, Skill]] = {}
_LOCK = threading.Lock()


def replace_active(home: Path, provider: str, skills: Iterable[Skill]) -> None:
    """Make ``provider`` the provider whose skills ``home`` offers: its ``skills`` replace every
    skill registered for ``home`` before (another provider's included)."""
    table = {skill.qualified: skill for skill in skills if skill.provider == provider}
    with _LOCK:
        _TABLE[Path(home)] = table


def withdraw(home: Path, provider: str) -> None:
    """Remove ``provider``'s skills from ``home`` (the provider is no longer active there)."""
    with _LOCK:
        table = _TABLE.get(Path(home), {})
        for qualified in [q for q, s in table.items() if s.provider == provider]:
            del table[qualified]


def skills_of(home: Path) -> dict[str, Skill]:
    """The skills ``home`` offers now, by qualified name."""
    with _LOCK:
        return dict(_TABLE.get(Path(home), {}))
