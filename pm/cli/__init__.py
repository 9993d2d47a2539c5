"""``hermes pm <command>`` / ``python -m pm <command>``: ``main(argv) -> int``, one exit path for errors.

The commands and their parser live in :mod:`._main`, loaded on first use (PEP 562), so that
:mod:`.shortcut` answers without loading them (nor typing).
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: the shortcut's path must not load typing (~5 ms)
if TYPE_CHECKING:
    from typing import Any

    from pm.cli._main import TABLE, build_parser, command, dispatch, invoked, main, register

_LAZY = frozenset({"TABLE", "build_parser", "command", "dispatch", "invoked", "main", "register"})


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from pm.cli import _main

    return getattr(_main, name)


__all__ = ["TABLE", "build_parser", "command", "dispatch", "invoked", "main", "register"]
