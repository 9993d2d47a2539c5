"""Small JSON helpers the plugin guide tells providers to use for ``$HERMES_HOME/<provider>.json``.

``from utils import read_json_or_empty, atomic_json_write`` — a provider's own settings file is
read forgivingly (missing or damaged: ``{}``) and written atomically (temp file in the same
folder, fsync, ``os.replace``), so a crash never leaves half a file.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["atomic_json_write", "read_json_or_empty"]


def read_json_or_empty(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The JSON object in ``path``; ``{}`` when the file is missing, unreadable, not JSON or not
    an object (the caller falls back to its defaults)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def atomic_json_write(path: str | os.PathLike[str], data: Any, *, indent: int | None = 2,
                      mode: int = 0o600) -> Path:
    """Write ``data`` as JSON to ``path`` atomically (parents created); returns the path. The
    file gets ``mode`` (default 0600: provider settings may be private)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=indent, ensure_ascii=False, default=str) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
