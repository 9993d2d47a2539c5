"""Every file pm writes goes through here: atomic, and only under ``<home>/pm/`` (or the cache).

The guard is what makes invariant 2 hold by construction: nothing pm does on its own can write
under ``<home>/plugins/**``. Writes are a temporary file in the same folder, fsync, ``os.replace``
and an fsync of the folder, so a reader sees the old bytes or the new, never half.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from pm.base.atomic import replace_with
from pm.base.errors import PmError


class StoreError(PmError):
    """A write pm refused or could not do; names the path."""

    kind = "store"

    def __init__(self, path: Path, detail: str) -> None:
        self.path = path
        self.detail = detail
        super().__init__(f"{path}: {detail}")


class Store:
    """Writes confined to ``roots`` (resolved); anything else is refused before touching disk."""

    def __init__(self, *roots: Path) -> None:
        self.roots = tuple(Path(os.path.realpath(r)) for r in roots)

    @classmethod
    def for_home(cls, home: Path) -> "Store":
        return cls(home / "pm")

    def check(self, path: Path) -> Path:
        real = Path(os.path.realpath(path))
        if not any(real == root or root in real.parents for root in self.roots):
            allowed = ", ".join(str(r) for r in self.roots)
            raise StoreError(path, f"refusing to write outside {allowed}")
        return real

    def mkdir(self, path: Path) -> Path:
        self.check(path)
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(path, f"cannot create folder: {exc.strerror or exc}") from exc
        return path

    def write_bytes(self, path: Path, data: bytes, *, mode: int | None = None, durable: bool = True) -> Path:
        """Replace ``path`` with ``data`` atomically; the file gets ``mode`` before it appears.
        Without one, a file that exists keeps its own (a config.yaml made 0600 because it holds
        an index token stays 0600) and a new one is 0644. ``durable=False`` skips the two fsyncs
        (file and folder) for a file whose loss a crash makes harmless: one inside a generation
        that is not complete yet, whose venv uv writes without fsync anyway."""
        self.check(path)
        self.mkdir(path.parent)
        if mode is None:
            mode = _mode_of(path, default=0o644)
        try:
            replace_with(path, data, mode=mode, durable=durable)
        except OSError as exc:
            raise StoreError(path, f"cannot write: {exc.strerror or exc}") from exc
        return path

    def write_json(self, path: Path, data: Any, *, mode: int | None = None) -> Path:
        text = json.dumps(data, indent=2, sort_keys=False, default=str) + "\n"
        return self.write_bytes(path, text.encode(), mode=mode)

    def remove_tree(self, path: Path) -> None:
        self.check(path)
        if path.is_symlink() or path.is_file():
            path.unlink()
        elif path.exists():
            import shutil  # only removals need it

            shutil.rmtree(path)

    def move(self, source: Path, target: Path) -> Path:
        """Rename ``source`` to ``target`` (one folder to another on the same file system; atomic:
        ``target`` appears whole or not at all); both must be inside the roots."""
        self.check(source)
        self.check(target)
        try:
            os.rename(source, target)
        except OSError as exc:
            raise StoreError(target, f"cannot move {source} here: {exc.strerror or exc}") from exc
        return target

    def sweep(self, folder: Path, *, older_than: float = 600.0) -> None:
        """Remove the temporary files (``.<name>.*.tmp``) a writer killed mid-write left in
        ``folder``. Call it holding the home lock; a temporary file lives for milliseconds, so one
        older than ``older_than`` seconds belongs to no live writer (receipts are written after
        the lock is released)."""
        now = time.time()
        try:
            leftovers = [p for p in folder.glob(".*.tmp") if p.is_file() and not p.is_symlink()]
        except OSError:
            return
        for path in leftovers:
            try:
                if now - path.stat().st_mtime > older_than:
                    self.unlink(path)
            except (OSError, StoreError):
                continue

    def unlink(self, path: Path) -> None:
        self.check(path)
        path.unlink(missing_ok=True)


def _mode_of(path: Path, *, default: int) -> int:
    """The permission bits of the file at ``path`` (links followed), or ``default`` when none is there."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        return default
