"""What the dashboard does with ``--allow-actions``: the operations the CLI runs, nothing else.

Enable and disable are :func:`pm.ops.admit.enable` / :func:`~pm.ops.admit.disable` (admission:
resolve, refuse on a conflict with nothing changed, else build, write ``config.yaml`` and select),
rollback is :func:`pm.ops.gc.rollback`, and a refusal's checked next step runs the operation its
command names. Each is one pm transaction: under the home lock, with its receipt written. Provider
settings go through ``hermes memory setup``'s own steps (:mod:`agent.memory_setup`): prepare the
provider (admission), validate every value against the schema, write secrets to ``.env`` and the
rest through the provider's ``save_config``, then record ``memory.provider``.

Every action returns an :class:`Outcome`: the lines the CLI would say (:mod:`pm.ops.messages`),
the next steps, the receipt's path, and the HTTP status of the page that shows it.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.errors import ActivationError, MemoryPluginError
from pm.base.errors import EXIT_CONFLICT, EXIT_OK, PmError
from pm.inputs.settings import environment_home
from pm.ops.messages import NOTHING_CHANGED, failure_said, refusal_lead
from pm.ops.options import Options
from pm.records.receipt import Receipt

__all__ = ["Outcome", "disable", "enable", "rollback", "run_step", "runnable", "save_settings", "told",
           "told_written"]


@dataclass(frozen=True)
class Outcome:
    """How an action ended, for a page: ``ok``, the ``lines`` a person reads (as the CLI says
    them), the ``steps`` to run next, the ``receipt`` path, and the page's HTTP ``status``."""

    ok: bool
    lines: tuple[str, ...]
    steps: tuple[dict[str, Any], ...] = ()
    receipt: str | None = None
    status: int = 200


def told(receipt: Receipt, done: str) -> Outcome:
    """A finished receipt of enable, disable, rollback or sync, told as the CLI tells it."""
    assert receipt.written is not None, "a finished receipt"
    written = receipt.written | {"receipt_path": None if receipt.path is None else str(receipt.path)}
    return told_written(written, done)


def told_written(data: dict[str, Any], done: str = "done") -> Outcome:
    """:func:`told` for a receipt as written on disk (``receipt_path`` added)."""
    path, steps = data.get("receipt_path"), tuple(data.get("next_steps") or ())
    if data["exit_code"] == EXIT_OK:
        lines = [str(data.get("message") or done)]
        if data.get("generation"):
            lines.append(f"generation {data['generation']['id']} is selected; restart running hermes processes "
                         "to use it")
        return Outcome(True, (*lines, *data.get("warnings", ())), steps, path)
    conflict = data.get("conflict")
    if data["exit_code"] == EXIT_CONFLICT and conflict is not None:
        lines = [f"conflict: {refusal_lead(conflict, data.get('candidate'))}", str(conflict["message"])]
        if data["kind"] == "admit":
            lines.append(NOTHING_CHANGED)
        return Outcome(False, tuple(lines), steps, path, status=409)
    lead, message = failure_said(data["outcome"], data.get("failure"))
    return Outcome(False, (f"{lead}: {message}",), steps, path, status=409)


def enable(home: Path, name: str, options: Options) -> Outcome:
    from pm.ops.admit import enable as admit

    return told(admit(home, name, options).receipt, f"enabled {name!r}")


def disable(home: Path, name: str, options: Options) -> Outcome:
    from pm.ops.admit import disable as take_out

    return told(take_out(home, name, options).receipt, f"disabled {name!r}")


def rollback(home: Path, options: Options) -> Outcome:
    from pm.ops.gc import rollback as select_previous

    return told(select_previous(home, options).receipt, "rolled back")


def sync(home: Path, options: Options) -> Outcome:
    from pm.ops.sync import sync as build

    return told(build(home, options).receipt, "synced")


def runnable(command: str, home: Path) -> Callable[[Options], Outcome] | None:
    """The operation a next step's ``command`` names, bound to ``home``, when the dashboard can run
    it: ``hermes plugins enable|disable NAME``, ``hermes pm sync``, ``hermes pm rollback``, each for
    this home (its ``--home``, or none when the dashboard's home is the one a bare command finds).
    Any other step is shown to copy, not run (None)."""
    try:
        argv = shlex.split(command)
    except ValueError:
        return None
    if "--home" in argv:
        at = argv.index("--home")
        if at + 1 >= len(argv) or Path(argv[at + 1]).expanduser().absolute() != home.absolute():
            return None
        argv = argv[:at] + argv[at + 2:]
    match argv:
        case ["hermes", "plugins", "enable", name]:
            return lambda options: enable(home, name, options)
        case ["hermes", "plugins", "disable", name]:
            return lambda options: disable(home, name, options)
        case ["hermes", "pm", "sync"]:
            return lambda options: sync(home, options)
        case ["hermes", "pm", "rollback"]:
            return lambda options: rollback(home, options)
    return None


def run_step(home: Path, command: str, steps: list[dict[str, Any]], options: Options) -> Outcome:
    """Run ``command`` if it is one of ``steps`` (the latest refusal's), checked, and runnable."""
    offered = [s for s in steps if s.get("command") == command and s.get("checked")]
    operation = runnable(command, home) if offered else None
    if operation is None:
        return Outcome(False, (f"refused: {command!r} is not a checked next step of the latest refusal that the "
                               "dashboard can run; run it in a terminal",), status=400)
    return operation(options)


def save_settings(home: Path, name: str, form: Mapping[str, str]) -> Outcome:
    """``hermes memory setup NAME --set …`` with the form's values (only the schema's keys; an
    empty field keeps its default, or the secret already in ``.env``): the provider prepared here
    (pm's admission), its values validated and saved by its own code in a child process
    (:func:`agent.provider_child.save`: its code is never imported into the dashboard's), then
    ``memory.provider`` recorded here."""
    from agent import provider_child
    from agent.memory_setup import SetupResult, prepare_provider
    from pm.env.managed import check as refuse_if_managed
    from pm.ops.admit import choose_memory_provider

    messages: list[str] = []
    try:
        refuse_if_managed(environment_home(home), "memory-setup")
        preparation = prepare_provider(home, name, say=messages.append, activate_here=False)
        if not preparation.ready:
            steps = tuple({"command": c, "why": w} for c, w in preparation.next_steps)
            said = told(preparation.receipt, "").lines if preparation.receipt is not None else ()
            return Outcome(False, (*said, f"error: {preparation.readiness.error()}"), steps, status=409)
        saved = provider_child.save(home, name, form)
        result = SetupResult(name, tuple(saved["settings"]), tuple(saved["secrets"]), Path(saved["env_file"]))
        previous = choose_memory_provider(home, result.provider)
    except provider_child.ChildFailed as exc:
        # a form the provider's schema refuses (400) is said as setup says it, on the provider's own
        # page; a child that failed names the provider
        return Outcome(False, (f"error: {exc.problem if exc.status == 400 else exc}",), status=exc.status)
    except (MemoryPluginError, PmError, ActivationError) as exc:
        return Outcome(False, (f"error: {exc}",), status=409)
    return Outcome(True, (*messages, *(line.strip() for line in result.said(home / "config.yaml", previous))))
