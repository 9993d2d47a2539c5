"""Resolving: the dry run (``hermes pm resolve [--with NAME]``) and the resolve step of every
operation that builds (sync, admission, update). Installs nothing; prints nothing."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pm.base.commands import hermes
from pm.base.errors import EXIT_CONFLICT, EXIT_OK, PmError
from pm.inputs.collect import Inputs
from pm.ops.failures import NotAdmissible
from pm.ops.options import SILENT, Options, Reporter
from pm.ops.transaction import Result, Transaction, cache_dir, policy_of, source_of, transaction

if TYPE_CHECKING:
    from pm.index.base import Source
    from pm.index.cache import Cache
    from pm.records.receipt import Draft
    from pm.resolver import Builder, Conflict, MissingProjects, NotOffered, Policy, Resolution, TooComplex
    from pm.resolver.preferences import Upgrade


class UnknownPlugin(PmError):
    """No plugin root of the home or its profiles is called ``name``."""

    kind = "unknown-plugin"

    def __init__(self, name: str, home: Path, close: str | None) -> None:
        self.name = name
        self.home = home
        self.close = close
        hint = f"; did you mean {close!r}?" if close else " (see `hermes plugins list`)"
        super().__init__(f"no plugin named {name!r} in {home} or its profiles{hint}")


_log = logging.getLogger("pm.steps")

def resolve(home: Path, options: Options | None = None, reporter: Reporter = SILENT, *,
            candidate: str | None = None, kind: str = "resolve", package: str | None = None) -> Result:
    """The dry run of core + selection (+ ``candidate``): outcome ok, conflict (exit 3) or failed.
    ``kind="why"`` with the ``package`` asked about is ``hermes pm why``'s resolve."""
    def work(txn: Transaction) -> Resolution | None:
        if package is not None:
            txn.draft.record(package=package)
        resolution = resolve_in(txn, candidate)
        if resolution is not None:
            txn.finish("ok", EXIT_OK)
        return resolution

    txn = transaction(home, kind, work, options, reporter, candidate=candidate, lock=False)
    return Result(txn.receipt, txn.inputs, txn.value, txn.stored_under)


def resolve_in(txn: Transaction, candidate: str | None = None) -> Resolution | None:
    """Resolve ``txn``'s inputs into its draft. A conflict finishes the receipt (exit 3, next
    steps, loud memory-provider warnings) and returns None; a failure raises (the transaction
    records it); a resolution is returned with the draft still open."""
    from pm import resolver  # its names load on first use: a reused resolution needs none of them
    from pm.index.cache import Cache  # the index client loads only when a page must be asked for
    from pm.records.reuse import fresh_resolution, lookup_refusal, refusal_key, resolve_reusing, reuse_key
    from pm.records.sections import resolution_to_json

    inputs, draft = txn.gathered, txn.draft
    started = time.perf_counter()
    proposed = check_candidate(inputs, candidate)
    previous = selected_pins(txn)
    policy = preferring(policy_of(inputs), previous, txn.options.upgrade)
    cache = Cache(cache_dir())
    txn.stored_under = stored = reuse_key(inputs, proposed, policy, cache.root)
    flags = txn.options.flags
    refused_under = refusal_key(stored, draft.kind, txn.options.shown_home,
                                operator_flags=bool(flags.constraints or flags.overrides))
    try:
        resolution = None if inputs.settings.refresh else fresh_resolution(cache, stored, offline=inputs.settings.offline)
        reused = True
        if resolution is None:
            with source_of(inputs) as source:
                try:
                    refusal = None if inputs.settings.refresh else lookup_refusal(cache, refused_under, source)
                    if refusal is not None:  # the same inputs over the same pages: the same proof
                        _refused_again(txn, refusal)
                        return None
                    resolution, reused = resolve_reusing(inputs, source, policy, key=stored, candidate=proposed,
                                                         builder=builder_of(inputs, policy), cache=cache)
                except resolver.Conflict as conflict:  # the remedies are checked on the same pages
                    _conflicted(txn, conflict, policy, source)
                    _remember_refusal(txn, cache, refused_under, source)
                    return None
                finally:
                    _log_pages(source)
    except resolver.MissingProjects as missing:
        _missing(txn, missing)
        return None
    except resolver.NotOffered as unoffered:
        _unoffered(txn, unoffered)
        return None
    except resolver.TooComplex as limit:
        _too_complex(txn, limit)
        return None
    draft.resolution = resolution_to_json(resolution)
    draft.warnings += list(resolution.warnings)
    tell_changes(draft, previous, resolution, txn.options.upgrade)
    _log.info("resolve: %d packages in %.3fs (%s)", len(resolution.pins), time.perf_counter() - started,
              "a stored resolution reused" if reused else "resolved now")
    draft.record(seconds=round(time.perf_counter() - started, 3))
    draft.record(reused_resolution=reused)
    return resolution


def selected_pins(txn: Transaction) -> dict[str, str] | None:
    """The pins of the environment home's selected generation (None: none is selected): what every
    resolve that is not an upgrade prefers (profiles share their primary's environment, so its
    preferences too). Read through the watch: another selection is another answer."""
    from pm.env import generations

    try:
        current = generations.selected(txn.home, watch=txn.watch)
        return None if current is None else current.pins
    except (KeyError, TypeError, AttributeError):  # a record without pins prefers nothing
        return None


def preferring(policy: Policy, previous: dict[str, str] | None, upgrade: Upgrade) -> Policy:
    """``policy`` with ``previous`` as its preferences and ``upgrade`` freeing what it names."""
    from dataclasses import replace

    from pm.resolver.preferences import Preferences

    return replace(policy, preferences=Preferences.from_pins(previous or {}), upgrade=upgrade)


def tell_changes(draft: Draft, previous: dict[str, str] | None, resolution: Resolution, upgrade: Upgrade) -> None:
    """The receipt's ``changes`` (:mod:`pm.records.changes`) and the upgrade asked for."""
    from pm.records.changes import changes

    draft.record(changes=changes(previous, resolution))
    if upgrade.asked:
        draft.record(upgrade=upgrade.to_json())


def _conflicted(txn: Transaction, conflict: Conflict, policy: Policy, source: Source) -> None:
    from pm.ops.fixes import Tried, checked_fixes, hard_behind_policy
    from pm.records.sections import conflict_steps, conflict_to_json

    draft = txn.draft
    tried: Tried = {}  # the resolves with builds allowed, shared by the two checks below
    hard = hard_behind_policy(txn.gathered, conflict, policy, source, tried)
    if hard is not None:  # hard before policy: building would not help, so the collision is told
        draft.warnings.append(f"building from source would not help (checked on the static metadata): {conflict}")
        conflict = hard
    draft.conflict = conflict_to_json(conflict)
    admission, home = draft.kind == "admit", txn.options.shown_home
    fixes = checked_fixes(txn.gathered, conflict, policy, home, admission=admission, source=source, tried=tried,
                          retry=_retry_words(txn, conflict.candidate))
    aside = [f for f in fixes if f.kind == "set-aside"]
    steps = conflict_steps(conflict, home, admission=admission, set_aside=bool(aside))
    retry = steps[:1] if aside and conflict.candidate is not None else []
    for command, why, checked, kind in [*((f.command, f.why, True, f.kind) for f in aside),
                                        *((c, w, None, None) for c, w in retry),
                                        *((f.command, f.why, f.checked, f.kind) for f in fixes if f not in aside),
                                        *((c, w, None, None) for c, w in steps[len(retry):])]:
        if not (draft.kind == "why" and command.startswith("hermes pm why")):  # not itself
            draft.step(command, why, checked=checked, kind=kind)
    draft.warnings += memory_warnings(txn.gathered, conflict.plugins)
    txn.finish("conflict", EXIT_CONFLICT)


def _retry_words(txn: Transaction, candidate: str | None) -> tuple[str, ...] | None:
    """The refused command again, as words for :func:`hermes` (an override step runs it with the
    override); None when its constraints or overrides came from flags, which a printed step
    would not carry."""
    flags = txn.options.flags
    if flags.constraints or flags.overrides:
        return None
    if txn.draft.kind == "admit" and candidate is not None:
        return ("plugins", "enable", candidate)
    words = {"sync": ("pm", "sync"), "update": ("update",)}.get(txn.draft.kind)
    return words or (("pm", "resolve", "--with", candidate) if candidate else ("pm", "resolve"))


def _remember_refusal(txn: Transaction, cache: Cache, key: str, source: Source) -> None:
    """Keep the refusal with the pages it was proved on (never fails the command)."""
    from pm.records.reuse import remember_refusal

    pages = getattr(source, "pages_read", None)
    if not callable(pages) or txn.draft.conflict is None:
        return
    try:
        remember_refusal(cache, key, {"conflict": txn.draft.conflict, "next_steps": txn.draft.next_steps},
                         pages())
    except (OSError, PmError):
        pass


def _refused_again(txn: Transaction, refusal: dict[str, Any]) -> None:
    """A stored refusal of these inputs, over unchanged pages: told as it was proved, remedies
    included (they were checked on the same pages)."""
    draft = txn.draft
    draft.conflict = refusal["conflict"]
    for step in refusal["next_steps"]:
        draft.step(step["command"], step["why"], checked=step.get("checked"), kind=step.get("kind"))
    draft.record(reused_refusal=True)
    draft.warnings += memory_warnings(txn.gathered, draft.conflict["plugins"])
    txn.finish("conflict", EXIT_CONFLICT)


def _missing(txn: Transaction, missing: MissingProjects) -> None:
    """A requirement on a project no source has: a failure about a declaration (exit 1, kind
    ``missing-project``), never a conflict; its next steps say where to look, then retry."""
    from pm.records.sections import missing_steps

    for command, why in missing_steps(missing, txn.options.shown_home, kind=txn.draft.kind):
        txn.draft.step(command, why)
    txn.fail(missing)


def _log_pages(source: object) -> None:
    """``-v``: how the index pages of this resolve were had (the sources count them)."""
    import collections

    counts: collections.Counter[str] = collections.Counter()
    for part in getattr(source, "sources", None) or (source,):
        counts.update(getattr(part, "page_counts", {}))
    if counts:
        _log.info("index pages: %s", ", ".join(f"{n} {how}" for how, n in sorted(counts.items())))


def _unoffered(txn: Transaction, error: NotOffered) -> None:
    """Core's own pins are not on the sources: the index is wrong for this home (exit 1, kind
    ``not-offered``); the next steps point at the index setting, never at a plugin."""
    home = txn.options.shown_home
    given = dict(txn.inputs.settings.sources).get("index_url") if txn.inputs else None
    origin = f"the index URL from {given}" if given else "the index URL is pm's default"
    where = f" (now {', '.join(error.searched)}; {origin})" if error.searched else ""
    txn.draft.step(hermes("pm", "resolve", "--index-url", "URL", home=home),
                     f"try the index that holds the host's pins{where}; then set pm.index_url in config.yaml to keep it")
    retry = {"admit": ("plugins", "enable", txn.draft.candidate or ""), "sync": ("pm", "sync"),
             "update": ("update",)}.get(txn.draft.kind, ("pm", "resolve"))
    txn.draft.step(hermes(*retry, home=home), "then try again")
    txn.fail(error)


def _too_complex(txn: Transaction, limit: TooComplex) -> None:
    """The resolver's round limit: a failure (exit 1, kind ``too-complex``) whose next step is the
    same command with a higher limit; the message names where the rounds went."""
    retry = {"admit": ("plugins", "enable", txn.draft.candidate or ""), "sync": ("pm", "sync"),
             "update": ("update",)}.get(txn.draft.kind, ("pm", "resolve"))
    txn.draft.step(f"HERMES_PM_MAX_ROUNDS={limit.rounds * 5} " + hermes(*retry, home=txn.options.shown_home),
                     "the same, with five times the resolver rounds")
    txn.fail(limit)


def memory_warnings(inputs: Inputs, plugins: Sequence[str]) -> list[str]:
    """Memory providers get the loudest message: an agent without its memory looks like data loss.
    In every conflict's receipt (resolve, sync, admission, update), written before it is finished."""
    memory = {s.plugin.key for s in inputs.selection.plugins if s.plugin.is_memory and s.is_member}
    return [f"MEMORY PROVIDER {name!r} is involved: until this is resolved the agent cannot load its memory"
            for name in plugins if name in memory]


def unknown_plugin(inputs: Inputs, name: str) -> UnknownPlugin:
    """The error for a plugin name nothing provides, with a "did you mean" when one is close."""
    known = sorted({s.plugin.key for s in inputs.selection.plugins} | {s.plugin.root.leaf for s in inputs.selection.plugins})
    import difflib

    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return UnknownPlugin(name, inputs.home, close[0] if close else None)


def check_candidate(inputs: Inputs, candidate: str | None) -> str | None:
    """The candidate's plugin key (``category/name`` for a plugin in a category folder); raises
    :class:`UnknownPlugin` or :class:`NotAdmissible` when it does not exist or cannot join."""
    if candidate is None:
        return None
    found = inputs.find(candidate)
    if found is None:
        raise unknown_plugin(inputs, candidate)
    if not found.status.can_join:
        raise NotAdmissible(candidate, found.status, found.reason)
    return found.plugin.key


def builder_of(inputs: Inputs, policy: Policy) -> Builder | None:
    """The uv-based sdist builder when ``pm.allow_builds`` names packages, else None (no builds)."""
    if not policy.allow_builds:
        return None
    from pm.index.builds import uv_builder

    settings = inputs.settings
    return uv_builder(inputs.target.python, settings.index_urls, settings.find_links, offline=settings.offline)
