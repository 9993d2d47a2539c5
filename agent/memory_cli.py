"""``hermes memory setup [NAME]`` and ``hermes memory status``.

``register(subparsers)`` mounts both on the ``memory`` group's sub-parsers (``dest`` of the
command: ``memory_command``) and ``run(args) -> int`` runs the parsed one; ``main(argv)`` is the
same as a standalone program (``python -m agent.memory_cli``). Data goes to stdout (JSON with
``--json``), people's messages to stderr.

Bare ``setup`` takes the provider ``memory.provider`` names, else asks on a terminal which
installed provider to use, else is a usage error. Once the provider is prepared (admission) and its
settings are stored, ``setup`` records ``memory.provider: NAME`` in the home's ``config.yaml``
(:func:`pm.ops.admit.choose_memory_provider`: the config editor, under the home lock).

Exit codes: 0 ok; 1 failure (unknown or unusable provider, import failure); 2 usage (bad
``--set``, unknown setting, missing required value, invalid value); 4 not ready (the provider's
declared requirements are not met, or ``is_available()`` says no).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agent import bounded
from agent.context import use_home
from agent.discovery import ProviderInfo, discover_memory_providers
from agent.errors import (
    EXIT_FAILURE,
    EXIT_NOT_READY,
    EXIT_USAGE,
    ActivationError,
    MemoryPluginError,
    ProviderLoadFailed,
)
from agent.gate import ready
from agent.loader import load_memory_provider, resolve_provider
from agent.memory_setup import (
    SetupError,
    parse_sets,
    prepare_provider,
    run_setup,
    terminal_asker,
)
from agent.process_env import load_profile_env
from agent.skills import skills_of
from pm.base.errors import PmError
from pm.cli._common import add_common, consent_asker, existing_home
from pm.cli._output import configure, terminal_safe
from pm.cli._parser import Parser
from pm.cli.resolve import tell_resolved
from pm.inputs.config import read_config

__all__ = ["main", "register", "run", "status_report"]


def register(subparsers: Any) -> None:
    """Add ``setup`` and ``status`` to ``subparsers`` (of the ``hermes memory`` parser)."""
    setup = subparsers.add_parser(
        "setup", help="prepare a memory provider and store its settings",
        description="Prepare the memory provider NAME (its declared requirements must be ready), "
                    "then ask for its settings: secrets go to <home>/.env, the rest to the "
                    "provider's own settings.")
    setup.add_argument("name", metavar="NAME", nargs="?",
                       help="the memory provider (default: the one memory.provider names; on a terminal "
                            "without it, you are asked which installed provider to use)")
    setup.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                       help="a setting's value, without prompting (repeatable)")
    status = subparsers.add_parser(
        "status", help="the active memory provider, its readiness and availability",
        description="Show the memory provider memory.provider names, whether its declared "
                    "requirements are ready, and whether it is available.")
    for parser in (setup, status):
        add_common(parser)
    setup.set_defaults(memory_command="setup")
    status.set_defaults(memory_command="status")


def run(args: argparse.Namespace) -> int:
    """Run the parsed ``hermes memory`` command; every deliberate failure becomes a message on
    stderr and an exit code here. ``-q`` and ``-v``/``-vv`` act as on every pm command
    (:func:`pm.cli._output.configure`: pm's log, with timings, for the admission setup runs)."""
    configure(quiet=bool(getattr(args, "quiet", False)), verbose=int(getattr(args, "verbose", 0) or 0))
    try:
        home = existing_home(args.home)
        load_profile_env(home)  # this command serves one profile: its .env in os.environ (agent.process_env)
        if args.memory_command == "setup":
            from pm.env.managed import check as refuse_if_managed
            from pm.inputs.settings import environment_home

            # setup may run admission, which changes the environment: a profile's is its primary's
            refuse_if_managed(environment_home(home), "memory-setup")
            return _setup(home, args)
        return _status(home, args)
    except SetupError as exc:
        _say(f"error: {exc}")
        return EXIT_USAGE
    except MemoryPluginError as exc:
        _say(f"error: {exc}")
        return exc.exit_code
    except PmError as exc:
        _say(f"error: {exc}")
        return exc.exit_code
    except ActivationError as exc:
        _say(f"error: {exc}")
        return EXIT_FAILURE


def main(argv: Sequence[str] | None = None) -> int:
    parser = Parser(prog="hermes memory", description="Memory providers.")
    register(parser.add_subparsers(dest="memory_command", required=True, metavar="COMMAND"))
    return run(parser.parse_args(list(sys.argv[1:] if argv is None else argv)))


def _say(text: str) -> None:
    print(terminal_safe(text), file=sys.stderr)


# -- setup ---------------------------------------------------------------------------------------


def _chosen(home: Path, asked: str | None) -> str:
    """The provider to set up: ``asked``, else ``memory.provider``, else the terminal's answer."""
    if asked is not None:
        return asked
    config = read_config(home)
    if config.memory_provider is not None:
        return config.memory_provider
    names = [i.name for i in discover_memory_providers(home) if not i.shadowed_by and not i.problems]
    listed = ", ".join(names) or "none"
    if not sys.stdin.isatty():
        raise SetupError(f"hermes memory setup: no NAME given and memory.provider is not set in {config.file}; "
                         f"installed memory providers: {listed} (run `hermes memory setup NAME`)")
    return _ask_provider(names, config.file)


def _ask_provider(names: list[str], config_file: Path) -> str:
    if not names:
        raise SetupError(f"no memory provider is installed, and memory.provider is not set in {config_file}")
    _say(f"memory.provider is not set in {config_file}; installed memory providers:")
    for number, name in enumerate(names, 1):
        _say(f"  {number}. {name}")
    print("which one? (number or name): ", end="", file=sys.stderr, flush=True)
    try:
        answer = input().strip()
    except EOFError:
        answer = ""
    if answer.isdigit() and 1 <= int(answer) <= len(names):
        return names[int(answer) - 1]
    if answer in names:
        return answer
    raise SetupError(f"{answer!r} is not one of the installed memory providers: {', '.join(names)}")


def _setup(home: Path, args: argparse.Namespace) -> int:
    from pm.base.names import check_name
    from pm.ops.admit import choose_memory_provider

    args.name = _chosen(home, args.name)
    check_name(args.name, "memory provider name")  # '' or a name no folder can have: a usage error
    presets = parse_sets(args.sets)
    preparation = prepare_provider(home, args.name, consent=consent_asker(args))
    if preparation.receipt is not None and not args.json:
        tell_resolved(preparation.receipt)  # the admission's conflict or failure, as `plugins enable` tells it
    if not preparation.ready:
        _say(f"error: {preparation.readiness.error()}")
        _say("next steps:")
        for command, why in preparation.next_steps:
            _say(f"  {command}\n      {why}")
        if args.json:
            print(json.dumps({"provider": args.name, "ready": False,
                              "readiness": preparation.readiness.to_json(),
                              "next_steps": [{"command": c, "why": w}
                                             for c, w in preparation.next_steps]}, indent=2))
        return EXIT_NOT_READY
    result = run_setup(home, args.name, presets, None if args.json else terminal_asker())
    load_profile_env(home)  # the secrets just written, for what this process runs next
    previous = choose_memory_provider(home, result.provider)
    recorded = previous != result.provider
    if args.json:
        print(json.dumps({"provider": result.provider, "ready": True,
                          "settings": list(result.settings), "secrets": list(result.secrets),
                          "env_file": str(result.env_file), "config": str(home / "config.yaml"),
                          "memory_provider_recorded": recorded, "previous_provider": previous}, indent=2))
        return 0
    print("\n".join(result.said(home / "config.yaml", previous)))
    return 0


# -- status --------------------------------------------------------------------------------------


def status_report(home: Path) -> tuple[dict[str, Any], int]:
    """The status of ``home``'s memory provider as data, and the exit code it means."""
    config = read_config(home)
    providers = [_provider_row(i) for i in discover_memory_providers(home)]
    report: dict[str, Any] = {"home": str(home), "config": str(config.file),
                              "provider": config.memory_provider, "providers": providers}
    if config.memory_provider is None:
        return report, 0
    info = resolve_provider(home)
    assert info is not None
    readiness = ready(info, home)
    report.update(source=info.source, root=str(info.root),
                  requirements=[str(r) for r in info.requirements],
                  declared_in=str(info.declaration_file) if info.declaration_file else None,
                  readiness=readiness.to_json(), available=None)
    if not readiness.ready:
        report["error"] = str(readiness.error())
        return report, EXIT_NOT_READY
    try:
        loaded = load_memory_provider(home)
    except ProviderLoadFailed as failure:  # its import or register(ctx) raised or hung: still a status
        report.update(available=False, unavailable_because=failure.problem, error=str(failure))
        return report, failure.exit_code
    assert loaded is not None
    with use_home(home):
        available, why = _available(loaded.info.name, loaded.provider)
    report["available"] = available
    if why:
        report["unavailable_because"] = why
    report["skills"] = sorted(skills_of(home))
    return report, 0 if available else EXIT_NOT_READY


def _available(name: str, provider: Any) -> tuple[bool, str | None]:
    """``is_available()``, bounded (:mod:`agent.bounded`): a raise (SystemExit included) or a hang
    means "no", with the reason; it never ends the command."""
    try:
        return bool(bounded.call(name, "is_available() failed", provider.is_available)), None
    except ProviderLoadFailed as failure:
        return False, failure.problem


def _provider_row(info: ProviderInfo) -> dict[str, Any]:
    return {"name": info.name, "source": info.source, "root": str(info.root),
            "shadowed_by": str(info.shadowed_by) if info.shadowed_by else None,
            "problems": list(info.problems)}


def _status(home: Path, args: argparse.Namespace) -> int:
    try:
        report, code = status_report(home)
    except MemoryPluginError as exc:
        report, code = {"home": str(home), "error": str(exc)}, exc.exit_code
        if not args.json:
            raise
    if args.json:
        print(json.dumps(report, indent=2))
        return code
    print(render_status(report))
    if "error" in report:
        _say(f"error: {report['error']}")
    return code


def render_status(report: dict[str, Any]) -> str:
    """The human form of :func:`status_report`'s data."""
    if report.get("provider") is None:
        names = ", ".join(p["name"] for p in report["providers"] if not p["shadowed_by"]) or "none"
        return (f"memory provider: none (memory.provider is not set in {report['config']})\n"
                f"installed providers: {names}")
    readiness = report["readiness"]
    lines = [f"memory provider: {report['provider']} ({report['source']}, {report['root']})"]
    if report["requirements"]:
        lines.append(f"requirements:    {', '.join(report['requirements'])} "
                     f"(declared in {report['declared_in']})")
    else:
        lines.append("requirements:    none")
    verdict = "ready" if readiness["ready"] else "NOT READY"
    lines.append(f"readiness:       {verdict}: {readiness['reason']}")
    available = report["available"]
    lines.append("available:       " + ("not checked (not ready)" if available is None else "yes" if available
                                      else f"no ({report.get('unavailable_because') or 'is_available() is false'})"))
    if report.get("skills"):
        lines.append(f"skills:          {', '.join(report['skills'])}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
