"""What every operation takes besides its own arguments: frozen :class:`Options` and a
:class:`Reporter` for progress and notices (silent by default: operations print nothing)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pm.base.watch import UNWATCHED, Watch
from pm.inputs.settings import Flags
from pm.resolver.preferences import NO_UPGRADE, Upgrade


@dataclass(frozen=True)
class Options:
    """How to run an operation: the resolution ``flags`` (flag beats environment beats config),
    how long to wait for the home lock (None: ``pm.lock_timeout`` of the home's config, else
    :data:`~pm.base.lock.LOCK_TIMEOUT`), and the ``--home`` to repeat in next steps (``shown_home``;
    None when the person did not give one, so printed commands act on the default home), and the
    ``watch`` every file, folder and program the operation reads is noted in (the evidence a
    shortcut of the same command stands on; :data:`~pm.base.watch.UNWATCHED` keeps nothing), and
    the ``upgrade`` asked for (``--upgrade``, ``--upgrade-package``; :mod:`pm.resolver.preferences`):
    without one every resolve prefers the selected generation's pins.
    ``skip_invalid`` (``--skip-invalid``): an enabled plugin whose declaration cannot be read is
    left out, with a warning, instead of failing the operation (:mod:`pm.ops.invalid`).
    ``yes`` (``--yes``) consents to a change's cargo; ``consent`` is the person's question (the
    CLI's, on a terminal: True for yes), None when no one can be asked (:mod:`pm.ops.consent`)."""

    flags: Flags = field(default_factory=Flags)
    lock_timeout: float | None = None
    shown_home: Path | None = None
    watch: Watch = field(default=UNWATCHED, compare=False, repr=False)
    skip_invalid: bool = False
    upgrade: Upgrade = NO_UPGRADE
    yes: bool = False
    consent: Callable[[Any], bool] | None = field(default=None, compare=False, repr=False)


class Reporter(Protocol):
    """Where an operation tells a person what it is doing. MUST NOT raise; costs nothing to ignore."""

    def progress(self, message: str) -> None:
        """A long step starts (resolving, building); a terminal may show it, a script ignores it."""

    def notice(self, message: str) -> None:
        """Something a person should know now: waiting for a lock, a provider installed or not."""


class Silent:
    """The default reporter: says nothing."""

    def progress(self, message: str) -> None:
        pass

    def notice(self, message: str) -> None:
        pass


SILENT: Reporter = Silent()


@dataclass(frozen=True)
class Notices:
    """A reporter that hands notices to ``say`` (a logger, a list's ``append``); progress is dropped."""

    say: Callable[[str], None]

    def progress(self, message: str) -> None:
        pass

    def notice(self, message: str) -> None:
        self.say(message)
