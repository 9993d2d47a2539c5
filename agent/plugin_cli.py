"""``hermes <provider> <subcommand>``: CLI commands of the *active* memory provider only.

A provider may ship ``cli.py`` beside its ``__init__.py`` with ``register_cli(subparser)``: it
adds subcommands to the ``hermes <provider>`` parser it is given and sets ``func`` on them
(``parser.set_defaults(func=handler)``; a module-level ``handle_cli(args)`` is the fallback
handler). :func:`discover_plugin_cli_commands` looks only at the provider ``memory.provider``
names: other providers' ``cli.py`` are never read past a directory listing, never imported.

The active provider's ``cli.py`` is plugin code, so it passes the same gate as the provider
(:mod:`agent.gate`): unusable or not ready, it is not imported, and ``hermes <provider> …`` is
still mounted but answers with the loud refusal (exit 4 when not ready). For a folder provider
only ``cli.py`` is imported, never the package's ``__init__.py``, so mounting is cheap (an
entry-point package is an ordinary installed package: its ``__init__`` runs first). A broken or missing
configuration mounts nothing and never breaks the rest of ``hermes``.
"""

from __future__ import annotations

import argparse
import ast
import logging
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.discovery import ProviderInfo
from agent.errors import ActivationError, MemoryPluginError, ProviderInvalid
from agent.gate import ACTIVE, ready
from agent.imports import import_submodule
from agent.loader import resolve_provider
from pm.base.errors import PmError
from pm.inputs.settings import resolve_home

__all__ = ["PluginCliCommand", "discover_plugin_cli_commands", "mount_plugin_cli_commands",
           "run_plugin_command"]

logger = logging.getLogger(__name__)

Setup = Callable[[argparse.ArgumentParser], None]
Handler = Callable[[argparse.Namespace], Any]


@dataclass(frozen=True)
class PluginCliCommand:
    """One ``hermes <name>`` group: ``setup_fn`` is the plugin's ``register_cli`` (``None`` when
    refused), ``handler_fn`` its fallback handler, ``refusal`` the error to report instead of
    running anything (``None`` when the provider passed the gate)."""

    name: str
    help: str
    description: str
    plugin: ProviderInfo
    setup_fn: Setup | None = None
    handler_fn: Handler | None = None
    refusal: MemoryPluginError | None = None


def _defines_register_cli(path: Path) -> bool:
    """Whether ``path`` defines a top-level ``register_cli`` (read as text, never executed)."""
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (OSError, SyntaxError, ValueError):
        return False
    return any(isinstance(node, ast.FunctionDef) and node.name == "register_cli"
               for node in tree.body)


def discover_plugin_cli_commands(
    home: str | os.PathLike[str] | None = None,
    *,
    generation: Any = ACTIVE,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> list[PluginCliCommand]:
    """At most one command: the active provider's, when its ``cli.py`` defines
    ``register_cli``. ``home`` defaults to ``$HERMES_HOME`` or ``~/.hermes``; ``generation`` as
    in :func:`agent.loader.load_memory_provider` (activation happens only when a ``cli.py`` is
    about to be judged)."""
    home_path = Path(home).expanduser().absolute() if home is not None else resolve_home(None)
    try:
        info = resolve_provider(home_path, env=env, cwd=cwd)
    except (MemoryPluginError, PmError) as exc:
        logger.debug("no memory provider CLI for %s: %s", home_path, exc)
        return []
    if info is None or info.cli_file is None or not _defines_register_cli(info.cli_file):
        return []
    title = f"commands of the {info.name} memory provider"
    try:
        _gate(info, home_path, generation)
    except MemoryPluginError as refusal:
        return [PluginCliCommand(info.name, title, title, info, refusal=refusal)]
    module = import_submodule(info, "cli")
    doc = (module.__doc__ or "").strip().splitlines()
    return [PluginCliCommand(info.name, doc[0] if doc else title, (module.__doc__ or title).strip(),
                             info, module.register_cli, getattr(module, "handle_cli", None))]


def _gate(info: ProviderInfo, home: Path, generation: Any) -> None:
    """Raise a :class:`MemoryPluginError` unless ``info``'s ``cli.py`` may be imported. Only a
    provider with declared requirements activates the generation; a broken environment or
    configuration becomes a refusal of this command, never a crash of ``hermes`` itself."""
    try:
        readiness = ready(info, home, generation, lazily=True)
    except (ActivationError, PmError) as exc:
        raise ProviderInvalid(info.name, f"cannot be judged: {exc}") from exc
    if not readiness.ready:
        raise readiness.error()


def mount_plugin_cli_commands(
    subparsers: Any, commands: list[PluginCliCommand]
) -> dict[str, PluginCliCommand]:
    """Add ``hermes <name>`` for each command to ``subparsers`` (an argparse sub-parsers
    action) and return them by name; a name already taken (``pm``, ``memory`` …) is skipped
    with a warning. A refused command accepts any arguments and reports its refusal."""
    mounted: dict[str, PluginCliCommand] = {}
    for command in commands:
        if command.name in subparsers.choices:
            logger.warning("memory provider %r: `hermes %s` is taken; its CLI is not mounted",
                           command.name, command.name)
            continue
        parser = subparsers.add_parser(command.name, help=command.help,
                                       description=command.description)
        if command.setup_fn is None:
            parser.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
        else:
            command.setup_fn(parser)
        mounted[command.name] = command
    return mounted


def run_plugin_command(command: PluginCliCommand, args: argparse.Namespace) -> int:
    """Run a mounted plugin command; returns its exit code. A refused command prints the
    refusal to stderr and returns its exit code (4 when not ready)."""
    if command.refusal is not None:
        print(f"error: {command.refusal}", file=sys.stderr)
        return command.refusal.exit_code
    handler = getattr(args, "func", None) or command.handler_fn
    if handler is None:
        print(f"error: `hermes {command.name}` needs a subcommand (see --help)", file=sys.stderr)
        return 2
    from agent.process_env import load_profile_env

    load_profile_env(resolve_home(None))  # one profile's command: its .env in os.environ (agent.process_env)
    result = handler(args)
    return int(result) if isinstance(result, int) else 0
