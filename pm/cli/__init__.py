"""``hermes pm <command>`` / ``python -m pm <command>``: ``main(argv) -> int``, one exit path for errors.

The commands and their parser live in :mod:`._main`, loaded on first use (PEP 562), so that
:mod:`.shortcut` can print through :mod:`._output` and :mod:`._resolved` without loading them.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pm.cli._main import TABLE, build_parser, command, dispatch, invoked, main, register

_LAZY = frozenset({"TABLE", "build_parser", "command", "dispatch", "invoked", "main", "register"})


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from pm.cli import _main

    return getattr(_main, name)


__all__ = ["TABLE", "build_parser", "command", "dispatch", "invoked", "main", "register"]
