"""Manage peer cards: ``hermes peer_cards <subcommand> [--target-profile NAME]``.

Mounted by ``discover_plugin_cli_commands()`` while ``memory.provider: peer_cards``; imported
alone (the package's ``__init__.py`` does not run). Every subcommand works on the active home,
or with ``--target-profile NAME`` on that profile of the same primary home (``default`` is the
primary itself), so one profile can manage another's cards and settings.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent.context import active_home
from hermes_cli.config import load_config
from pm.inputs.settings import environment_home

from . import store

_USAGE = ("Usage: hermes peer_cards <status|config|set|peers|card|remember|recall|forget|sessions|"
          "export|import|profiles|reset> [--target-profile NAME]")


class _Refused(Exception):
    """A message for stderr and the exit code to return."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def _profiles(primary: Path) -> list[str]:
    folder = primary / "profiles"
    return sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []


def target_home(args: argparse.Namespace) -> Path:
    """The home a subcommand works on: the active one, or ``--target-profile``'s."""
    name = getattr(args, "target_profile", None)
    if name is None:
        return active_home()
    primary = environment_home(active_home())
    if name == "default":
        return primary
    if name in _profiles(primary):
        return primary / "profiles" / name
    known = ", ".join(["default", *_profiles(primary)])
    raise _Refused(f"--target-profile {name!r}: no such profile under {primary / 'profiles'} (known: {known})")


def _status(home: Path, args: argparse.Namespace) -> int:
    data = store.load(home)
    provider = (load_config(home).get("memory") or {}).get("provider")
    facts = sum(len(f) for f in data["peers"].values())
    print(f"home: {home}\nmemory.provider: {provider or '(not set)'}\n"
          f"peers: {len(data['peers'])}, facts: {facts}, sessions: {len(data['sessions'])}\n"
          f"cards: {store.cards_path(home)}")
    return 0 if provider == store.NAME else 4


def _config(home: Path, args: argparse.Namespace) -> int:
    print(json.dumps(store.settings(home), indent=2, sort_keys=True))
    return 0


def _set(home: Path, args: argparse.Namespace) -> int:
    if args.key not in store.DEFAULTS:
        raise _Refused(f"peer_cards has no setting {args.key!r} (known: {', '.join(store.DEFAULTS)})", 2)
    value: Any = args.value
    if isinstance(store.DEFAULTS[args.key], int):
        if not args.value.isdigit():
            raise _Refused(f"setting {args.key!r}: expected integer, got {args.value!r}", 2)
        value = int(args.value)
    path = store.save_settings(home, {args.key: value})
    print(f"{args.key} = {value!r} saved in {path}")
    return 0


def _peers(home: Path, args: argparse.Namespace) -> int:
    for peer, facts in sorted(store.load(home)["peers"].items()):
        print(f"{peer}\t{len(facts)}")
    return 0


def _card(home: Path, args: argparse.Namespace) -> int:
    peer = args.peer or store.settings(home)["user_peer"]
    for fact in store.load(home)["peers"].get(peer, []):
        print(f"{fact['id']}\t{fact['fact']}")
    return 0


def _remember(home: Path, args: argparse.Namespace) -> int:
    peer = args.peer or store.settings(home)["user_peer"]
    print(f"kept fact {store.add(home, peer, args.fact)} on {peer}'s card")
    return 0


def _recall(home: Path, args: argparse.Namespace) -> int:
    for peer, fact in store.recall(home, args.query, args.limit or int(store.settings(home)["recall_limit"])):
        print(f"{fact['id']}\t{peer}\t{fact['fact']}")
    return 0


def _forget(home: Path, args: argparse.Namespace) -> int:
    if not store.forget(home, args.id):
        raise _Refused(f"no fact {args.id} in {store.cards_path(home)}")
    print(f"forgot fact {args.id}")
    return 0


def _sessions(home: Path, args: argparse.Namespace) -> int:
    for session, turns in sorted(store.load(home)["sessions"].items()):
        print(f"{session}\t{turns}")
    return 0


def _export(home: Path, args: argparse.Namespace) -> int:
    text = json.dumps(store.load(home), indent=2, sort_keys=True) + "\n"
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"exported to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _import(home: Path, args: argparse.Namespace) -> int:
    try:
        data = json.loads(Path(args.file).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise _Refused(f"{args.file}: not a peer_cards export: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("peers"), dict):
        raise _Refused(f"{args.file}: not a peer_cards export (no 'peers' mapping)")
    store.replace_all(home, data)
    print(f"imported {sum(len(f) for f in data['peers'].values())} fact(s) into {store.cards_path(home)}")
    return 0


def _profiles_command(home: Path, args: argparse.Namespace) -> int:
    primary = environment_home(active_home())
    for name in ["default", *_profiles(primary)]:
        where = primary if name == "default" else primary / "profiles" / name
        provider = (load_config(where).get("memory") or {}).get("provider") or "-"
        facts = sum(len(f) for f in store.load(where)["peers"].values())
        print(f"{name}\t{provider}\t{facts}")
    return 0


def _reset(home: Path, args: argparse.Namespace) -> int:
    if not args.yes:
        raise _Refused(f"reset deletes every card in {store.cards_path(home)}; pass --yes", 2)
    store.replace_all(home, {"peers": {}, "sessions": {}, "next_id": 1})
    print(f"reset {store.cards_path(home)}")
    return 0


_HANDLERS: dict[str, Callable[[Path, argparse.Namespace], int]] = {
    "status": _status, "config": _config, "set": _set, "peers": _peers, "card": _card,
    "remember": _remember, "recall": _recall, "forget": _forget, "sessions": _sessions,
    "export": _export, "import": _import, "profiles": _profiles_command, "reset": _reset,
}


def peer_cards_command(args: argparse.Namespace) -> int:
    """Handler dispatched by argparse (the guide's shape: one handler, the subcommand in args)."""
    sub = getattr(args, "peer_cards_command", None)
    if sub not in _HANDLERS:
        print(_USAGE, file=sys.stderr)
        return 2
    try:
        return _HANDLERS[sub](target_home(args), args)
    except _Refused as refused:
        print(f"error: {refused}", file=sys.stderr)
        return refused.code


def register_cli(subparser: argparse.ArgumentParser) -> None:
    """Build the ``hermes peer_cards`` argparse tree; called by discover_plugin_cli_commands()."""
    subs = subparser.add_subparsers(dest="peer_cards_command")
    target = argparse.ArgumentParser(add_help=False)
    target.add_argument("--target-profile", metavar="NAME",
                        help="work on this profile of the same home ('default': the primary)")
    parsers = {name: subs.add_parser(name, parents=[target], help=help_text) for name, help_text in (
        ("status", "where the cards are and whether peer_cards is the active provider"),
        ("config", "show the settings"), ("set", "change a setting"), ("peers", "peers and their fact counts"),
        ("card", "the facts on one peer's card"), ("remember", "keep a fact"), ("recall", "find facts"),
        ("forget", "drop a fact by id"), ("sessions", "sessions and their turn counts"),
        ("export", "all cards as JSON"), ("import", "replace all cards with an export"),
        ("profiles", "every profile, its memory provider and fact count"), ("reset", "delete every card"))}
    parsers["set"].add_argument("key")
    parsers["set"].add_argument("value")
    parsers["remember"].add_argument("--peer", help="the peer (default: the user_peer setting)")
    parsers["card"].add_argument("peer", nargs="?")
    parsers["remember"].add_argument("fact")
    parsers["recall"].add_argument("query")
    parsers["recall"].add_argument("--limit", type=int)
    parsers["forget"].add_argument("id", type=int)
    parsers["export"].add_argument("--output", "-o", metavar="FILE")
    parsers["import"].add_argument("file")
    parsers["reset"].add_argument("--yes", action="store_true", help="really delete every card")
    subparser.set_defaults(func=peer_cards_command)
