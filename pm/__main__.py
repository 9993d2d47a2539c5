"""``python -m pm <command>`` is ``hermes pm <command>``; an identical resolve over unchanged
files is answered by :mod:`pm.cli.shortcut` before the rest of pm is loaded."""

import sys

from pm.cli.shortcut import answer

ENTRY = "python -m pm"

code = answer([ENTRY, *sys.argv[1:]])
if code is None:
    from pm.cli import main

    code = main(sys.argv[1:], entry=ENTRY)
sys.exit(code)
