"""What the shortcut (:mod:`pm.cli.shortcut`) needs to answer, written with the cheapest modules
the standard library has: its answer is due in about the time Python takes to start, and the
usual helpers cost more than that to import (``pathlib`` ~3 ms, ``json`` and ``re`` ~5 ms,
``dataclasses`` and ``inspect`` ~8 ms, ``typing`` ~5 ms, ``datetime`` ~1 ms).

Each function here is the lean twin of one the full command uses, and a test holds each pair
to the same result: :func:`now` of :func:`pm.records.receipt.now`, :func:`cache_root` of
:func:`pm.base.cachedir.default_cache_dir`, :func:`write` of :meth:`pm.base.store.Store.write_bytes`
(atomic, confined to the home's ``pm`` folder, the mode given), :func:`prune` of
:func:`pm.ops.receipts.write_data`'s pruning, :data:`EXIT_FAILURE` of pm.base.errors'.
"""

from __future__ import annotations

import os
import time

from pm.base.atomic import replace_with

TYPE_CHECKING = False  # typing's costs ~5 ms: only the type checker reads these
if TYPE_CHECKING:
    from collections.abc import Mapping

#: :data:`pm.base.errors.EXIT_FAILURE` (pm.base.errors loads dataclasses).
EXIT_FAILURE = 1
#: Receipts kept per home (:data:`pm.ops.receipts.KEEP`).
KEEP_RECEIPTS = 50


def now() -> str:
    """UTC now as ``2026-12-04T07:15:53.133617Z`` (:func:`pm.records.receipt.now`, without datetime)."""
    seconds, nanos = divmod(time.time_ns(), 1_000_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{nanos // 1000:06d}Z"


def elapsed(seconds: float) -> str:
    """``1.23s``, or ``4 ms`` under a tenth of a second (a shortcut's answer is not "0.00s")."""
    return f"{seconds * 1000:.0f} ms" if seconds < 0.1 else f"{seconds:.2f}s"


def cache_root(environ: Mapping[str, str] | None = None) -> str:
    """``$HERMES_PM_CACHE_DIR``, else ``$XDG_CACHE_HOME/hermes-pm``, else ``~/.cache/hermes-pm``."""
    env = os.environ if environ is None else environ
    if explicit := env.get("HERMES_PM_CACHE_DIR"):
        return _as_path_writes(os.path.expanduser(explicit))
    if xdg := env.get("XDG_CACHE_HOME"):
        return _as_path_writes(os.path.join(os.path.expanduser(xdg), "hermes-pm"))
    return _as_path_writes(os.path.join(os.path.expanduser("~"), ".cache", "hermes-pm"))


def _as_path_writes(path: str) -> str:
    """``str(pathlib.PurePosixPath(path))``: no empty or ``.`` parts, no trailing slash (``..``
    stays, as a symlink may stand before it)."""
    lead = "//" if path.startswith("//") and not path.startswith("///") else "/" if path.startswith("/") else ""
    return lead + "/".join(part for part in path.split("/") if part not in ("", ".")) or "."


def write(root: str, path: str, data: bytes, *, mode: int) -> None:
    """Replace ``path`` with ``data``: a temporary file beside it (``mode`` before it appears),
    fsync, ``os.replace``, fsync of the folder. Raises OSError for a path that leads outside
    ``root`` (followed through every symlink) or any failure, before ``path`` is touched."""
    folder = within(root, os.path.dirname(path))
    os.makedirs(folder, exist_ok=True)
    replace_with(within(root, path), data, mode=mode)


def within(root: str, path: str) -> str:
    """``path`` when, every symlink followed, it is ``root`` or under it; else OSError."""
    real, top = os.path.realpath(path), os.path.realpath(root)
    if real != top and not real.startswith(top.rstrip(os.sep) + os.sep):
        raise OSError(f"{path}: refusing to write outside {top}")
    return path


def prune(root: str, folder: str, keep: int = KEEP_RECEIPTS) -> None:
    """Remove all but the ``keep`` newest receipts (by name: they start with their time) in
    ``folder``; ``latest.json`` stays. OSError, before anything is removed, when one leads
    outside ``root``."""
    names = sorted(n for n in os.listdir(folder) if n.endswith(".json") and not n.startswith(".") and n != "latest.json")
    stale = [within(root, os.path.join(folder, name)) for name in names[:-keep]]
    for path in stale:
        _unlink(path)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:  # another pm removed it first
        pass
