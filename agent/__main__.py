"""``python -m agent`` is the ``hermes`` command."""

import sys

from .cli import main

sys.exit(main())
