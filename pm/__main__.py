"""``python -m pm <command>`` is ``hermes pm <command>``; an identical resolve over unchanged
files is answered by :mod:`pm.cli.shortcut` before the rest of pm is loaded. The full command
ends without finalizing the interpreter (:mod:`pm.cli._exit`): it loaded the rest of pm."""

import sys

from pm.cli.shortcut import answer

ENTRY = "python -m pm"

code = answer([ENTRY, *sys.argv[1:]])
if code is not None:
    sys.exit(code)
from pm.cli import main  # noqa: E402 - only when the shortcut did not answer
from pm.cli._exit import leave  # noqa: E402

leave(main(sys.argv[1:], entry=ENTRY))
