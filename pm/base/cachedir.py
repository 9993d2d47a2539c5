"""Where pm's cache is: one folder shared by every home of the user (index pages, metadata, wheels'
digests, resolutions, interpreter probes, the digest of pm's own code). Standard library only: the
shortcut and the uv runner need it before anything else of pm."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def default_cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$HERMES_PM_CACHE_DIR``, else ``$XDG_CACHE_HOME/hermes-pm``, else ``~/.cache/hermes-pm``."""
    env = os.environ if environ is None else environ
    if explicit := env.get("HERMES_PM_CACHE_DIR"):
        return Path(explicit).expanduser()
    if xdg := env.get("XDG_CACHE_HOME"):
        return Path(xdg).expanduser() / "hermes-pm"
    return Path.home() / ".cache" / "hermes-pm"
