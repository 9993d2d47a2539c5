"""``hermes dashboard [--home H] [--port N] [--allow-actions]``: serve the dashboard
(:mod:`agent.dashboard`) on 127.0.0.1 until interrupted.

Thin, like the other ``*_cli`` modules: parse, build the Options every action runs with (the
resolution options of ``hermes plugins enable``), start the server, print the URL with its token.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from pm.base.errors import EXIT_OK
from pm.cli._common import add_lock_option, add_resolution_options, home_of, options_from
from pm.cli._output import say


def register(groups: "argparse._SubParsersAction[Any]") -> None:
    from agent.cli import GROUPS

    parser = groups.add_parser("dashboard", help=GROUPS["dashboard"], description=GROUPS["dashboard"] + " (127.0.0.1 "
                               "only; the printed URL carries a token every request needs)")
    parser.add_argument("--home", help="the HERMES_HOME to use (default: $HERMES_HOME or ~/.hermes)")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: an ephemeral one)")
    parser.add_argument("--allow-actions", action="store_true",
                        help="let the pages enable, disable, roll back and save provider settings (default: "
                             "read-only)")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="log each request (without its token)")
    add_resolution_options(parser)
    add_lock_option(parser)


def run(args: argparse.Namespace) -> int:
    from agent.dashboard.server import App, start

    home = home_of(args)
    app = App(home, options_from(args), allow_actions=args.allow_actions)
    server, url = start(app, args.port, verbose=bool(args.verbose))
    print(url, flush=True)
    say(f"hermes dashboard for {home} ({'actions allowed' if app.allow_actions else 'read-only'}); Ctrl-C stops it")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    sys.stderr.flush()
    return EXIT_OK
