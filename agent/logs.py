"""A home's log files: ``<home>/logs/errors.log`` and ``gateway.log``, and ``hermes logs``.

:func:`log_event` appends one line per event, ``<UTC time> <LEVEL> <event>: <message>``, to the
named files (created with their folder), under a process-wide lock so lines never interleave.
``hermes logs errors`` / ``hermes logs gateway`` print a home's file (``-n`` last lines).
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

__all__ = ["LOG_FILES", "log_event", "log_path", "register", "run"]

LOG_FILES = {"errors": "errors.log", "gateway": "gateway.log"}
_LOCK = threading.Lock()


def log_path(home: str | os.PathLike[str], which: str) -> Path:
    """``<home>/logs/<which>.log`` for ``which`` in :data:`LOG_FILES`."""
    return Path(home) / "logs" / LOG_FILES[which]


def log_event(home: str | os.PathLike[str], event: str, message: str, *, level: str = "WARNING",
              files: Iterable[str] = ("errors", "gateway")) -> list[Path]:
    """Append ``event`` to each of ``files`` of ``home``; returns the paths written. An
    unwritable log is skipped (logging must never break the agent loop)."""
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    line = f"{stamp} {level} {event}: {' '.join(message.splitlines())}\n"
    written = []
    with _LOCK:
        for which in files:
            path = log_path(home, which)
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                with path.open("a", encoding="utf-8") as handle:
                    handle.write(line)
            except OSError:
                continue
            written.append(path)
    return written


def register(groups: Any) -> None:
    """``hermes logs errors|gateway [-n N] [--home DIR]`` on the top-level sub-parsers."""
    parser = groups.add_parser("logs", help="show a home's errors.log or gateway.log",
                               description="Print a log file of the home (<home>/logs/).")
    parser.add_argument("which", choices=sorted(LOG_FILES), help="which log")
    parser.add_argument("-n", "--lines", type=int, default=0, help="only the last N lines")
    parser.add_argument("--home", help="the HERMES_HOME to use (default: $HERMES_HOME or ~/.hermes)")


def run(args: argparse.Namespace) -> int:
    """Print the log; exit 0 (an absent log is empty, said on stderr)."""
    from pm.inputs.settings import resolve_home

    path = log_path(resolve_home(args.home), args.which)
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
    except FileNotFoundError:
        print(f"no {path.name} yet in {path.parent}", file=sys.stderr)
        return 0
    sys.stdout.write("".join(lines[-args.lines:] if args.lines > 0 else lines))
    return 0
