"""A sync never drops an enabled plugin silently (docs/design.md, invariant 11).

An enabled plugin whose declaration cannot be read (a manifest that is not YAML, a requirement that
is not PEP 508, a pyproject.toml that is not TOML, a key of the wrong type ...) would leave the
environment without its packages: the next start runs the plugin without them. So every operation
that builds for the selection — sync, update's rebuild, admission and disable — refuses first
(:class:`InvalidDeclarations`: exit 1, outcome ``failed``, nothing built or selected), naming each
plugin with its file, line and key, until the plugin is fixed or disabled, or the command is given
``--skip-invalid``: then the plugin is left out and the receipt's warnings say so.

A plugin that is broken but not enabled is no one's loss: ``hermes pm scan`` reports it, and
nothing here looks at it. Read-only commands (``resolve``, ``check``, ``scan``) keep telling, not
refusing: ``check`` says such a plugin is not ready.
"""

from __future__ import annotations

from collections.abc import Collection

from pm.base.commands import hermes
from pm.base.errors import PmError
from pm.env import generations
from pm.inputs.collect import Inputs
from pm.inputs.selection import PluginStatus, left_out_notice
from pm.ops.transaction import Transaction

#: The command to run again with ``--skip-invalid``, by receipt kind.
_RETRY = {"sync": ("pm", "sync"), "update": ("update",), "admit": ("plugins", "enable"),
          "disable": ("plugins", "disable")}


class InvalidDeclarations(PmError):
    """Enabled plugins whose declarations cannot be read: ``plugins`` holds each one's name and its
    problems (each naming the file, and the line or key); nothing was built or selected."""

    kind = "invalid-declaration"

    def __init__(self, plugins: tuple[tuple[str, tuple[str, ...]], ...]) -> None:
        self.plugins = plugins
        self.problems = tuple(problem for _, problems in plugins for problem in problems)
        told = "; ".join(f"plugin {name!r}: {'; '.join(problems)}" for name, problems in plugins)
        noun = "an enabled plugin's declaration" if len(plugins) == 1 else "enabled plugins' declarations"
        super().__init__(f"{noun} cannot be read, so nothing was built (the environment would lose what it "
                         f"declares): {told}; fix it or disable it, or pass --skip-invalid to leave it out")


def broken(inputs: Inputs, spared: Collection[str] = ()) -> list[PluginStatus]:
    """The enabled plugins of ``inputs`` whose declarations cannot be read, but those ``spared``
    (by key or leaf name: the plugin a disable takes out)."""
    return [s for s in inputs.selection.plugins if s.enabled_but_invalid
            and s.plugin.key not in spared and s.plugin.root.leaf not in spared]


def refuse_invalid(txn: Transaction, inputs: Inputs | None = None, *, spared: Collection[str] = ()) -> None:
    """Raise :class:`InvalidDeclarations` (with the next steps in ``txn``'s receipt) when an
    enabled plugin of ``inputs`` (default: ``txn``'s) cannot be read, unless ``--skip-invalid``:
    then each is left out and the receipt's warnings say so. The selection's own notice ("left out
    of the environment") gives way to the failure, or to that warning."""
    found = broken(inputs or txn.gathered, spared)
    if not found:
        return
    draft = txn.draft
    notices = {left_out_notice(s) for s in found}
    draft.warnings[:] = [w for w in draft.warnings if w not in notices]
    if txn.options.skip_invalid:
        draft.warnings += [_skip_warning(s) for s in found if _skip_warning(s) not in draft.warnings]
        # update asks twice (before its re-pins, and in its sync): the field holds every plugin left out
        draft.fields["skipped_invalid"] = sorted({*draft.fields.get("skipped_invalid", ()), *(s.plugin.key for s in found)})
        return
    current = generations.read_state(txn.home).get("selected")
    draft.record(message="nothing was built or selected; " + (f"generation {current} stays selected" if current
                                                               else "no generation is selected"))
    home = txn.options.shown_home
    for status in found:
        draft.step(hermes("plugins", "disable", status.plugin.key, home=home),
                   f"leave {status.plugin.key!r} out of the selection until its declaration is fixed")
    retry = _RETRY.get(draft.kind, ("pm", "sync"))
    candidate = (draft.candidate,) if draft.kind in ("admit", "disable") and draft.candidate else ()
    draft.step(hermes(*retry, *candidate, "--skip-invalid", home=home),
               "go on without " + ", ".join(repr(s.plugin.key) for s in found)
               + (" (its packages leave the environment)" if len(found) == 1 else " (their packages leave the environment)"))
    raise InvalidDeclarations(tuple((s.plugin.key, s.plugin.problems or (s.reason,)) for s in found))


def _skip_warning(status: PluginStatus) -> str:
    return (f"plugin {status.plugin.key!r} is enabled but its declaration cannot be read; left out of the "
            f"environment as --skip-invalid asks: {status.reason}")
