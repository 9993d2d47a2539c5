"""Errors the host raises about memory plugins. They carry data; ``str()`` is the one sentence.

Every error names the plugin, says what is wrong, and (where one exists) the command that fixes it,
runnable exactly as printed. A memory provider that cannot be used is never replaced by
another one silently: these errors go up to the caller (the ``hermes`` CLI prints them and exits
with :attr:`MemoryPluginError.exit_code`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

__all__ = [
    "EXIT_FAILURE",
    "EXIT_NOT_READY",
    "EXIT_USAGE",
    "ActivationError",
    "MemoryPluginError",
    "ProviderInvalid",
    "ProviderLoadFailed",
    "ProviderNotFound",
    "ProviderNotReady",
]

EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_NOT_READY = 4


class MemoryPluginError(Exception):
    """Base: ``plugin`` (its name), ``problem`` (what is wrong, a phrase after the name) and
    ``command`` (what to run next, or ``None``)."""

    exit_code = EXIT_FAILURE

    def __init__(self, plugin: str, problem: str, command: str | None = None) -> None:
        self.plugin = plugin
        self.problem = problem
        self.command = command
        super().__init__(self.message())

    def message(self) -> str:
        """The whole sentence: ``memory provider 'x' <problem>[; run `<command>`]``."""
        text = f"memory provider {self.plugin!r} {self.problem}"
        return text + (f"; run `{self.command}`" if self.command else "")


class ProviderNotFound(MemoryPluginError):
    """No source provides a memory provider of that name; ``known`` lists the names that exist."""

    def __init__(self, plugin: str, known: Sequence[str], *, where: Path | None = None,
                 command: str | None = "hermes update", otherwise: str = "") -> None:
        self.known = tuple(known)
        names = ", ".join(repr(n) for n in self.known) or "none"
        origin = f" (named by memory.provider in {where})" if where else ""
        instead = f"; {otherwise}" if otherwise and command is None else ""
        super().__init__(plugin, f"is not installed{origin}; known memory providers: {names}{instead}", command)


class ProviderInvalid(MemoryPluginError):
    """The plugin root cannot be used as it is (bad manifest or declaration, disabled, sits
    out, an entry point that cannot be located)."""


class ProviderNotReady(MemoryPluginError):
    """Declared requirements are not met in the environment this process runs on.

    ``unmet`` has one entry per unmet requirement (``requires x>=2; installed: x 1.0``);
    ``declared_in`` is the declaration file.
    """

    exit_code = EXIT_NOT_READY

    def __init__(self, plugin: str, unmet: Sequence[str], declared_in: Path | None,
                 command: str) -> None:
        self.unmet = tuple(unmet)
        self.declared_in = declared_in
        where = f" (declared in {declared_in})" if declared_in else ""
        super().__init__(plugin, f"is not ready: {'; '.join(self.unmet)}{where}", command)


class ProviderLoadFailed(MemoryPluginError):
    """Importing the plugin or calling its ``register(ctx)`` failed, or it registered no
    usable provider. The original exception, if any, is the ``__cause__``."""


class ActivationError(Exception):
    """The selected generation cannot be activated in this process (missing or broken
    environment, another Python, another generation already active)."""
