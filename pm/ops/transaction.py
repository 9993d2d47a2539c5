"""One transaction around every operation.

:func:`transaction` runs, in order: the environment home (a profile's is its primary's) → the
managed check (for commands that change the environment) → the home lock → gather the inputs →
start the receipt; then the operation's work, which finishes the receipt; on the way out a
:class:`~pm.base.errors.PmError` becomes the receipt's failure through :func:`failure_of` (one
vocabulary for every operation), and the finished receipt is written (:func:`receipts.write`).
A PmError is not re-raised: the operation returns its receipt, whose exit code says how it went.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pm.base.errors import InputError, PmError
from pm.base.lock import LOCK_TIMEOUT, checked_timeout, home_lock
from pm.base.names import check_name
from pm.base.store import Store
from pm.base.uv import uv_version
from pm.base.watch import Watch
from pm.env import managed
from pm.inputs.collect import Inputs, gather
from pm.inputs.config import read_config
from pm.inputs.settings import Settings, environment_home
from pm.ops import receipts
from pm.ops.failures import failure_of
from pm.ops.options import SILENT, Options, Reporter
from pm.records.receipt import Draft, Receipt

if TYPE_CHECKING:
    from pm.index.multi import MultiSource
    from pm.ops.providers import Remedy
    from pm.resolver import Policy, Resolution


@dataclass
class Transaction:
    """The state of one running operation: where (``home``, the environment home), how
    (``options``, ``reporter``), the ``draft`` of its receipt while it works and the ``receipt``
    :meth:`finish` (or :meth:`fail`) builds of it once, its ``store``, and the ``inputs`` once
    gathered."""

    home: Path
    options: Options
    reporter: Reporter
    draft: Draft
    store: Store
    inputs: Inputs | None = None
    value: Any = None
    stored_under: str | None = None  # the results-cache key of its resolution (pm.records.reuse)
    finished: Receipt | None = None

    @property
    def receipt(self) -> Receipt:
        """The finished receipt (after :meth:`finish` or :meth:`fail`)."""
        assert self.finished is not None, "finish() the operation first"
        return self.finished

    def gather(self, candidate: str | None = None, *, owner: Path | None = None) -> Inputs:
        """Gather the inputs (with ``candidate`` proposed in ``owner``'s config) and start the
        receipt from them; a second call (after config edits) starts it anew."""
        inputs = gather(self.home, self.options.flags, candidate=candidate, owner=owner, watch=self.watch)
        self.inputs = inputs
        start(self.draft, inputs, self.options.shown_home)
        return inputs

    @property
    def watch(self) -> Watch:
        """Where what this operation reads is noted (its options')."""
        return self.options.watch

    @property
    def gathered(self) -> Inputs:
        assert self.inputs is not None, "gather() first"
        return self.inputs

    def finish(self, outcome: str, code: int, message: str | None = None) -> Receipt:
        """Build the receipt, once: ``outcome``, ``code`` and (for people) ``message``."""
        assert self.finished is None, "the receipt is built once"
        if message is not None:
            self.draft.record(message=message)
        self.finished = self.draft.finish(outcome, code, receipts.tool_facts())
        return self.finished

    def fail(self, exc: PmError) -> Receipt:
        """Build the receipt, once, with ``exc`` as its failure (:func:`fail`)."""
        assert self.finished is None, "the receipt is built once"
        self.finished = fail(self.draft, exc)
        return self.finished


@dataclass(frozen=True)
class Result:
    """What an operation did: its finished, written ``receipt``, the ``inputs`` it read and, when
    it resolved, the ``resolution`` and the results-cache key it is stored under (``stored_under``)."""

    receipt: Receipt
    inputs: Inputs | None = None
    resolution: Resolution | None = None
    stored_under: str | None = None

    @property
    def code(self) -> int:
        return self.receipt.exit_code


def start(draft: Draft, inputs: Inputs, shown_home: Path | None = None) -> Draft:
    """Fill the draft's target, inputs and the selection's notices from ``inputs``; a configured
    memory provider that is not installed is also a next step (``hermes update``, with
    ``shown_home``) when the catalog has it, and its notice says what installs it
    (:func:`pm.ops.providers.provider_remedy`)."""
    from pm.inputs.selection import missing_provider_notice

    draft.target = inputs.target.to_receipt()
    draft.inputs = inputs.to_receipt()
    told: dict[str, str] = {}
    for home in inputs.selection.homes:
        if home.missing_provider is None:
            continue
        remedy = _provider_remedy(inputs, home.missing_provider, shown_home)
        told[missing_provider_notice(home.config.file, home.missing_provider)] = f"; {remedy.said()}"
        if remedy.command is not None and draft.kind != "update":
            draft.step(remedy.command, f"memory.provider {home.missing_provider!r} of {home.home} is not installed; "
                                       "this installs it from the catalog (the agent runs without its memory until then)",
                       aside=True)
    draft.warnings[:] = [*inputs.settings.warnings, *(n + told.get(n, "") for n in inputs.selection.notices),
                         *(w for s in inputs.selection.plugins for w in s.plugin.warnings)]
    return draft


def _provider_remedy(inputs: Inputs, provider: str, shown_home: Path | None) -> Remedy:
    from pm.ops.providers import provider_remedy

    return provider_remedy(inputs.home, provider, shown_home=shown_home, watch=inputs.watch)


def transaction(home: Path, kind: str, work: Callable[[Transaction], Any], options: Options | None = None,
                reporter: Reporter = SILENT, *, candidate: str | None = None, command: str | None = None,
                lock: bool = True, gather_inputs: bool = True, needs_config: bool = True) -> Transaction:
    """Run ``work`` as operation ``kind`` on ``home``'s environment (steps in the module
    docstring); returns the transaction, its receipt finished and written, ``work``'s return value
    in :attr:`Transaction.value` (None when it did not get to run or failed).

    ``command`` is the command as :mod:`pm.env.managed` names it (``sync``, ``plugins-enable`` …):
    given, a managed environment refuses before anything else. ``lock=False`` for read-only
    operations; ``gather_inputs=False`` when ``work`` gathers (or needs no inputs). The home's
    config is read before the lock is waited for: when it is broken the operation is refused at
    once, naming the file and key, unless ``needs_config=False`` (gc, uninstall: they work without
    it)."""
    options = options or Options()
    env_home = environment_home(home, watch=options.watch)
    txn = Transaction(env_home, options, reporter, Draft(kind, env_home, candidate=candidate),
                      Store.for_home(env_home))
    try:
        if candidate is not None and kind != "install":  # install's candidate is a source, named later
            check_name(candidate)
        if command is not None:
            managed.check(env_home, command, watch=options.watch)
        with _locked(txn, lock, needs_config):
            if gather_inputs:
                txn.gather(candidate)
            txn.value = work(txn)
    except PmError as exc:
        txn.finished = None  # a failure after finish() (writing a record, say) is what the receipt says
        txn.fail(exc)
    assert txn.finished is not None, f"operation {kind!r} ended without finishing its receipt"
    uv_version(watch=options.watch)  # the receipt names it: another uv is another answer
    txn.finished = receipts.write(txn.finished)
    return txn


def fail(draft: Draft, exc: PmError) -> Receipt:
    """The receipt of ``draft`` with ``exc`` as its failure (:func:`failure_of`)."""
    failure = failure_of(exc)
    draft.failure = failure.section
    draft.record(**failure.extra)
    return draft.finish(failure.outcome, failure.exit_code, receipts.tool_facts())


@contextlib.contextmanager
def _locked(txn: Transaction, lock: bool, needs_config: bool) -> Iterator[None]:
    if not lock:
        yield
        return
    with home_lock(txn.home, txn.store, timeout=_lock_timeout(txn, needs_config), notify=txn.reporter.notice):
        yield


def _lock_timeout(txn: Transaction, needs_config: bool) -> float:
    """``--lock-timeout``, else the home's ``pm.lock_timeout``, else :data:`LOCK_TIMEOUT`. The
    config is read (and checked) first either way: a broken one is refused here, before any wait,
    when the operation ``needs_config``."""
    try:
        configured = read_config(txn.home, watch=txn.watch).pm.get("lock_timeout")
    except InputError:
        if needs_config:
            raise
        configured = None
    if txn.options.lock_timeout is not None:
        return checked_timeout(txn.options.lock_timeout)
    return LOCK_TIMEOUT if configured is None else float(configured)  # checked by read_config


def policy_of(inputs: Inputs) -> Policy:
    return policy_for(inputs.settings)


def policy_for(settings: Settings) -> Policy:
    """The resolution policy the settings give (pre-releases, exclude-newer, allowed builds)."""
    from packaging.utils import canonicalize_name

    from pm.resolver import Policy

    return Policy(
        allow_prereleases=settings.prereleases == "allow",
        exclude_newer=settings.cutoff,
        allow_builds=frozenset(canonicalize_name(n) for n in settings.allow_builds),
    )


def source_of(inputs: Inputs) -> MultiSource:
    """The configured sources; close them (``with``) so background fetches stop."""
    from pm.index import open_sources

    settings = inputs.settings
    return open_sources(settings.index_urls, settings.find_links, offline=settings.offline,
                        refresh=settings.refresh, tags=inputs.target.tags)


def cache_dir() -> Path:
    """pm's cache, shared by every home of the user (see :func:`pm.index.cache.default_cache_dir`)."""
    from pm.base.cachedir import default_cache_dir

    return default_cache_dir()
