"""One failure vocabulary: :func:`failure_of` turns an exception into the receipt's failure
section, whichever operation raised it (sync, enable, disable, update, install …), so the same
failure reads the same in every receipt.

Each exception class carries its own ``kind``, ``outcome`` and ``exit_code``
(:class:`pm.base.errors.PmError`); the receipt schema's enum of failure kinds is generated from them
(``scripts/dev/failure_kinds.py``), with :data:`OTHER_KINDS`, the kinds no class carries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pm.base.errors import PmError

#: Failure kinds no exception class carries as its own: a frozen sync from a file that records no
#: inputs (an :class:`InputsChanged` instance).
OTHER_KINDS = ("no-inputs",)


class InputsChanged(PmError):
    """A frozen sync refused: the home's inputs differ from those FILE was made for (``changes``),
    or FILE records none (``changes`` is None)."""

    kind = "inputs-changed"
    outcome = "refused"

    def __init__(self, label: str, changes: list[str] | None) -> None:
        self.label = label
        self.changes = changes
        self.kind = "no-inputs" if changes is None else "inputs-changed"
        if changes is None:
            message = (f"refused: {label} records no inputs to check (a pylock.toml not written by "
                       "`hermes pm export`); nothing was built")
        else:
            message = "\n  - ".join([f"refused: the inputs of this home changed since {label} was made:", *changes])
            message += "\nnothing was built"
        super().__init__(message)


class NotAdmissible(PmError):
    """A plugin that exists but cannot join the union (invalid, sits out, shadowed …)."""

    kind = "not-admissible"
    outcome = "refused"

    def __init__(self, name: str, status: str, reason: str) -> None:
        self.name = name
        self.status = status
        self.reason = reason
        super().__init__(f"plugin {name!r} cannot join the union: {status}: {reason}")


class StillEnabled(PmError):
    """``plugins remove`` of a plugin that is still enabled somewhere in the environment."""

    kind = "still-enabled"
    outcome = "refused"

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"plugin {name!r} is enabled; run `hermes plugins disable {name}` first, then remove it")


class UnmetRequirements(PmError):
    """A frozen sync with ``--ignore-inputs`` refused: FILE's pins break core's lock or a declared
    range of this home (``unmet``, in words). ``--allow-unmet`` builds them anyway."""

    kind = "unmet-requirements"
    outcome = "refused"

    def __init__(self, label: str, unmet: list[str]) -> None:
        self.label = label
        self.unmet = unmet
        super().__init__("\n  - ".join([f"refused: the pins of {label} do not meet this home's requirements:", *unmet])
                         + "\nnothing was built")


class RemovalRefused(PmError):
    """``hermes uninstall`` or ``hermes profile delete`` that cannot go ahead: ``blockers`` say why
    (a running process holds a generation, a profile still has plugins), ``steps`` what to run."""

    kind = "removal-refused"
    outcome = "refused"

    def __init__(self, what: str, blockers: list[str], steps: list[str] | None = None) -> None:
        self.blockers = blockers
        self.steps = steps or []
        super().__init__(f"{what}: nothing was removed: " + "; ".join(blockers))


@dataclass(frozen=True)
class Failure:
    """What a receipt says about a failure: its ``kind``, ``outcome``, ``exit_code``, the
    ``failure`` section and any ``extra`` top-level fields."""

    kind: str
    outcome: str
    exit_code: int
    section: dict[str, Any]
    extra: dict[str, Any] = field(default_factory=dict)


def failure_of(exc: PmError) -> Failure:
    """The receipt's view of ``exc`` (table in the module docstring)."""
    kind, outcome = _classify(exc)
    section: dict[str, Any] = {"kind": kind, "message": str(exc), "url": getattr(exc, "url", None)}
    problems = getattr(exc, "problems", ())
    if problems:
        section["problems"] = [str(p) for p in problems]
    if isinstance(exc, InputsChanged):
        section["differences"] = exc.changes or []
    if isinstance(exc, UnmetRequirements):
        section["unmet"] = list(exc.unmet)
    if kind == "invalid-declaration":  # the enabled plugins that cannot be read (pm.ops.invalid)
        section["plugins"] = [name for name, _ in getattr(exc, "plugins", ())]
    if kind == "missing-project":  # the projects, who requires them, where pm searched
        from pm.records.sections import missing_to_json
        from pm.resolver import MissingProjects

        assert isinstance(exc, MissingProjects)
        section = missing_to_json(exc)
    if kind == "not-offered":  # what core asks, what the sources list, where pm looked
        section["projects"] = [p.to_json() for p in getattr(exc, "projects", ())]
        section["searched"] = list(getattr(exc, "searched", ()))
    return Failure(kind, outcome, exc.exit_code, section, _extra(exc))


def _classify(exc: PmError) -> tuple[str, str]:
    return exc.kind, exc.outcome


def _extra(exc: PmError) -> dict[str, Any]:
    from pm.env.managed import Managed

    if isinstance(exc, Managed):
        manager = exc.manager
        return {"managed": {"name": manager.name, "evidence": manager.evidence, "how": manager.how}}
    return {}
