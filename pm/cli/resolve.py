"""``hermes pm resolve [--with NAME]``: a dry run of core + selection (+ candidate); installs nothing."""

from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING

from ..errors import EXIT_CONFLICT, EXIT_FAILURE, EXIT_OK, PmError
from ..inputs import Inputs, gather
from ..receipt import Receipt
from ._common import cache_dir, flags_from, home_of, policy_of, shown_home, source_of, start_receipt
from ._output import emit_json, paint, say, table

if TYPE_CHECKING:
    from ..resolver import Conflict, MissingProjects, Resolution


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--with", dest="candidate", metavar="NAME", help="also resolve this plugin, as if enabled")


def run(args: argparse.Namespace) -> int:
    inputs = gather(home_of(args), flags_from(args), candidate=args.candidate)
    receipt = start_receipt("resolve", inputs, args.candidate)
    code, resolution = resolve_with_receipt(inputs, receipt, args)
    if args.json:
        emit_json(receipt.as_written())
    elif resolution is not None:
        print(render(inputs, resolution, receipt.extra.get("seconds", 0.0)))
        for warning in resolution.warnings:
            say(f"warning: {warning}")
    if not args.json and receipt.path is not None:
        say(f"receipt: {receipt.path}")
    return code


def unknown_plugin(inputs: Inputs, name: str) -> str:
    """The message for a plugin name nothing provides, with a "did you mean" when one is close."""
    import difflib

    known = sorted({s.plugin.key for s in inputs.selection.plugins} | {s.plugin.root.leaf for s in inputs.selection.plugins})
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else " (see `hermes plugins list`)"
    return f"no plugin named {name!r} in {inputs.home} or its profiles{hint}"


def check_candidate(inputs: Inputs, candidate: str | None) -> str | None:
    """The candidate's plugin key (``category/name`` for a plugin in a category folder); raises
    when it does not exist or cannot join the union."""
    if candidate is None:
        return None
    found = inputs.find(candidate)
    if found is None:
        raise PmError(unknown_plugin(inputs, candidate))
    if found.status in ("invalid", "sits-out", "shadowed"):
        raise PmError(f"plugin {candidate!r} cannot join the union: {found.status}: {found.reason}")
    return found.plugin.key


def resolve_with_receipt(inputs: Inputs, receipt: Receipt, args: argparse.Namespace,
                         *, finish_ok: bool = True) -> tuple[int, Resolution | None]:
    """Resolve, fill the receipt, tell the person; returns (exit code, resolution).

    A conflict or failure finishes (writes) the receipt; a success does too unless ``finish_ok``
    is False (the caller goes on to build, and finishes it).
    """
    from ..index.base import IndexFailure  # the resolver and the index client load only when used
    from ..index.cache import Cache
    from ..records import conflict_steps, conflict_to_json, resolution_to_json
    from ..resolver import Conflict, MissingProjects, TooComplex
    from ..reuse import resolve_reusing

    started = time.perf_counter()
    try:
        key = check_candidate(inputs, args.candidate)
        policy = policy_of(inputs)
        with source_of(inputs) as source:
            resolution, reused = resolve_reusing(inputs, source, policy, candidate=key,
                                                 builder=builder_of(inputs, policy), cache=Cache(cache_dir()))
    except Conflict as conflict:
        receipt.conflict = conflict_to_json(conflict)
        for command, why in conflict_steps(conflict, shown_home(args), admission=receipt.kind == "admit"):
            if not (receipt.kind == "why" and command.startswith("hermes pm why")):  # not itself
                receipt.step(command, why)
        receipt.warnings += _memory_warnings(inputs, conflict)
        receipt.finish("conflict", EXIT_CONFLICT)
        if not args.json:
            tell_conflict(conflict, receipt)
        return EXIT_CONFLICT, None
    except MissingProjects as missing:
        return tell_missing(missing, receipt, args), None
    except (IndexFailure, TooComplex, PmError) as failure:
        kind = ("build" if type(failure).__name__ == "BuildFailure" else "index" if isinstance(failure, IndexFailure)
                else "too-complex" if isinstance(failure, TooComplex) else "error")
        receipt.failure = {"kind": kind, "message": str(failure), "url": getattr(failure, "url", None)}
        receipt.finish("failed", EXIT_FAILURE)
        if not args.json:
            say(f"{paint('error', 'red')}: {failure}")
            if kind == "index":
                say("this is a failure to fetch, not a verdict on your plugins: nothing was changed")
        return EXIT_FAILURE, None
    receipt.resolution = resolution_to_json(resolution)
    receipt.warnings += list(resolution.warnings)
    receipt.extra["seconds"] = round(time.perf_counter() - started, 3)
    receipt.extra["reused_resolution"] = reused
    if finish_ok:
        receipt.finish("ok", EXIT_OK)
    return EXIT_OK, resolution


def _memory_warnings(inputs: Inputs, conflict: Conflict) -> list[str]:
    """Memory providers get the loudest message: an agent without its memory looks like data loss.
    In every conflict's receipt (resolve, sync, admission, update), written before it is finished."""
    memory = {s.plugin.key for s in inputs.selection.plugins if s.plugin.is_memory and s.is_member}
    return [f"MEMORY PROVIDER {name!r} is involved: until this is resolved the agent cannot load its memory"
            for name in conflict.plugins if name in memory]


def builder_of(inputs: Inputs, policy: object):  # type: ignore[no-untyped-def]
    """The uv-based sdist builder when ``pm.allow_builds`` names packages, else None (no builds)."""
    if not getattr(policy, "allow_builds", None):
        return None
    from ..index.builds import uv_builder

    settings = inputs.settings
    return uv_builder(inputs.target.python, settings.index_urls, settings.find_links, offline=settings.offline)


def tell_missing(missing: MissingProjects, receipt: Receipt, args: argparse.Namespace) -> int:
    """A requirement on a project no source has: a failure about a declaration (exit 1), never a
    conflict; nothing changes but the receipt."""
    from ..records import missing_steps, missing_to_json

    receipt.failure = missing_to_json(missing)
    for command, why in missing_steps(missing, shown_home(args), kind=receipt.kind):
        receipt.step(command, why)
    receipt.finish("failed", EXIT_FAILURE)
    if not args.json:
        say(f"{paint('error', 'red')}: {missing}")
        say("this is not a conflict between plugins: a required project does not exist where pm looked; "
            "nothing was changed")
        for step in receipt.next_steps:
            say(f"  {step['command']}\n      {step['why']}")
    return EXIT_FAILURE


def tell_conflict(conflict: Conflict, receipt: Receipt) -> None:
    lead = (f"plugin {conflict.candidate!r} cannot be added" if conflict.candidate
            else "the selected plugins cannot live together in one environment")
    say(f"{paint('conflict', 'red')}: {lead}")
    say(f"  {conflict}")
    if receipt.next_steps:
        say("next steps:")
        for step in receipt.next_steps:
            say(f"  {step['command']}\n      {step['why']}")


def render(inputs: Inputs, resolution: Resolution, seconds: float) -> str:
    members = len(inputs.union.members)
    head = (f"resolved {len(resolution.pins)} packages for core + {members} plugin(s) "
            f"(Python {inputs.target.python_full_version}, {inputs.target.platform}) in {seconds:.2f}s")
    rows = []
    for pin in resolution.pins:
        who = ", ".join(dict.fromkeys("core" if o.is_core else o.plugin or "" for o in pin.required_by))
        rows.append([pin.name, str(pin.version), who])
    return head + "\n" + table(rows, ["package", "version", "required by"])
