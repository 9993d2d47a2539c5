"""The argument parser every ``hermes`` and ``hermes pm`` command uses: uv's manners.

* No abbreviations: ``--no`` is not ``--no-index`` (argparse's default would guess).
* A typo gets a suggestion: ``unrecognized arguments: --ofline (did you mean --offline?)``, and
  ``invalid choice: 'sycn' (did you mean 'sync'?)`` for commands.

Subparsers are made with the parent's class (argparse's default), so one class at the top is
enough for every level.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterable
from typing import Any, NoReturn

_UNRECOGNIZED = re.compile(r"unrecognized arguments: (?P<args>.+)")
_PARSER = "_innermost_parser"  # the parser of the command that ran, on the namespace while parsing
_INVALID_CHOICE = re.compile(r"invalid choice: '(?P<word>[^']*)'")


def suggestion(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate closest to ``word`` (for ``--opt=value``, to its option), or None."""
    import difflib  # only when there is a mistake to explain: most commands never load it

    key = word.split("=", 1)[0]
    found = difflib.get_close_matches(key, sorted(set(candidates)), n=1, cutoff=0.6)
    return found[0] if found else None


def unrecognized(words: Iterable[str], options: Iterable[str]) -> str:
    """argparse's message for left-over words, each option with its closest real option."""
    options = list(options)
    shown = []
    for word in words:
        close = suggestion(word, options) if word.startswith("-") else None
        shown.append(f"{word} (did you mean {close}?)" if close else word)
    return f"unrecognized arguments: {' '.join(shown)}"


class Parser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` with ``allow_abbrev=False`` and "did you mean" in its errors."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        parsed, extras = super().parse_known_args(args, namespace)
        if not hasattr(parsed, _PARSER):  # the innermost parser (the command that ran) answers first
            setattr(parsed, _PARSER, self)
        return parsed, extras

    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:
        parsed, extras = self.parse_known_args(args, namespace)
        innermost = getattr(parsed, _PARSER, self)
        delattr(parsed, _PARSER)
        if extras:
            innermost.error(unrecognized(extras, innermost._option_strings()))
        return parsed

    def _option_strings(self) -> list[str]:
        return [o for action in self._actions for o in action.option_strings]

    def error(self, message: str) -> NoReturn:
        super().error(self._with_suggestions(message))

    def _with_suggestions(self, message: str) -> str:
        if (match := _UNRECOGNIZED.match(message)) is not None and "did you mean" not in message:
            return unrecognized(match["args"].split(), self._option_strings())
        if (match := _INVALID_CHOICE.search(message)) is not None:
            choices = [c for action in self._actions if action.choices for c in action.choices]
            close = suggestion(match["word"], [str(c) for c in choices])
            if close:
                return f"{message} (did you mean {close!r}?)"
        return message


#: Options every command takes, which may also come before the command (``hermes --home X pm status``).
GLOBAL_FLAGS = ("--json", "-q", "--quiet", "-v", "--verbose")
GLOBAL_VALUED = ("--home",)


def hoist_globals(argv: list[str]) -> list[str]:
    """``argv`` with the global options written before the command — before the group, between
    the group and its command, or both (``hermes --home H pm --json status``) — moved after the
    command words (before a ``--``), where the command's own parser reads them, as uv takes them
    anywhere. The walk stops at the first other option: what follows is the command's own."""
    words: list[str] = []
    hoisted: list[str] = []
    at = 0
    while at < len(argv):
        word = argv[at]
        if word in GLOBAL_FLAGS or word.startswith(tuple(f"{o}=" for o in GLOBAL_VALUED)):
            hoisted.append(word)
            at += 1
        elif word in GLOBAL_VALUED and at + 1 < len(argv):
            hoisted += argv[at:at + 2]
            at += 2
        elif word.startswith("-"):
            break
        else:
            words.append(word)
            at += 1
    rest = argv[at:]
    if not hoisted or not words:
        return argv
    return [*words, *hoisted, *rest]


def add_version(parser: argparse.ArgumentParser) -> None:
    """``-V``/``--version``: the installed hermes-pm's version, exit 0 (looked up only when asked)."""
    parser.add_argument("-V", "--version", action=_Version, nargs=0, help="show the version and exit")


class _Version(argparse.Action):
    def __call__(self, parser: argparse.ArgumentParser, namespace: Any, values: Any, option: Any = None) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            shown = version("hermes-pm")
        except PackageNotFoundError:
            shown = "unknown (not installed)"
        print(f"{parser.prog} (hermes-pm {shown})")  # data: stdout, as argparse's version action does
        parser.exit()
