"""Set up and inspect the sidecar_echo backend environment.

Mounted as ``hermes sidecar_echo <setup|status>`` while sidecar_echo is the active memory
provider. Imported alone (the package's ``__init__.py`` does not run).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from agent.context import active_home

from .sidecar import SidecarSetupError, setup_sidecar, sidecar_dir, sidecar_python


def register_cli(subparser: argparse.ArgumentParser) -> None:
    """Add ``setup`` and ``status`` to the ``hermes sidecar_echo`` parser."""
    commands = subparser.add_subparsers(dest="sidecar_command", required=True, metavar="COMMAND")
    setup = commands.add_parser("setup", help="build the backend's own environment with uv")
    setup.add_argument("--find-links", action="append", default=[], metavar="DIR")
    setup.add_argument("--index-url")
    setup.add_argument("--no-index", action="store_true")
    setup.add_argument("--offline", action="store_true")
    setup.set_defaults(func=_setup)
    status = commands.add_parser("status", help="where the backend's environment is")
    status.set_defaults(func=_status)
    for parser in (setup, status):
        parser.add_argument("--home", help="the HERMES_HOME (default: $HERMES_HOME or ~/.hermes)")


def _home(args: Any) -> Path:
    return Path(args.home).expanduser().absolute() if args.home else active_home()


def _setup(args: Any) -> int:
    try:
        python = setup_sidecar(_home(args), find_links=args.find_links, index_url=args.index_url,
                               no_index=args.no_index, offline=args.offline)
    except SidecarSetupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"sidecar environment ready: {python}")
    return 0


def _status(args: Any) -> int:
    python = sidecar_python(_home(args))
    if python.is_file():
        print(f"sidecar environment: {sidecar_dir(_home(args))} (python {python})")
        return 0
    print(f"no sidecar environment at {sidecar_dir(_home(args))}; "
          "run `hermes sidecar_echo setup`", file=sys.stderr)
    return 4
