"""Command lines pm prints (next steps, hints): quoted so they run exactly as printed. Pure."""

from __future__ import annotations

import shlex
from pathlib import Path


def hermes(*words: str, home: Path | None = None) -> str:
    """A ``hermes`` command line, quoted so it runs exactly as printed (``--home`` last, when given)."""
    argv = ["hermes", *words]
    if home is not None:
        argv += ["--home", str(home)]
    return shlex.join(argv)
