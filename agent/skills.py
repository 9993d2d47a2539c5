"""Skills that memory providers bring, qualified ``<provider>:<name>``.

A provider registers skills from its ``register(ctx)`` (``ctx.register_skill(name, path,
description)``). They are offered only while that provider is the active one of a home: when a
home loads a provider, the skills of any other provider of that home are withdrawn, and
:func:`withdraw` removes a provider's skills when it is unloaded. Per process, per home;
thread-safe.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SKILL_VIEW_SCHEMA", "Skill", "qualify", "replace_active", "skill_view", "skills_of",
           "withdraw"]

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


#: The ``skill_view`` tool as the model sees it (OpenAI function format).
SKILL_VIEW_SCHEMA: dict[str, object] = {
    "name": "skill_view",
    "description": "Read a skill: its instructions, by qualified name (e.g. 'my-provider:maintenance').",
    "parameters": {"type": "object", "properties": {"name": {"type": "string"}},
                   "required": ["name"], "additionalProperties": False},
}


def skill_view(name: str, *, home: str | os.PathLike[str] | None = None) -> str:
    """The skill ``name`` (``<provider>:<skill>``) that ``home`` offers now (default: the active
    home), as a JSON string: ``name``, ``provider``, ``description``, ``path``, ``content``. A
    skill not offered (unknown, or its provider is not the active one) or unreadable gives
    ``{"error": ..., "available": [...]}`` — never an exception, since the model calls it."""
    from agent.context import active_home

    where = Path(home if home is not None else active_home()).expanduser().absolute()
    offered = skills_of(where)
    skill = offered.get(name)
    if skill is None:
        return json.dumps({"error": f"no skill {name!r} is offered here", "available": sorted(offered)})
    try:
        content = skill.path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return json.dumps({"error": f"skill {name!r}: cannot read {skill.path}: {exc}"})
    return json.dumps({"name": skill.qualified, "provider": skill.provider,
                       "description": skill.description, "path": str(skill.path), "content": content})
