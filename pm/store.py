"""Every file pm writes goes through here: atomic, and only under ``<home>/pm/`` (or the cache).

The guard is what makes invariant 2 hold by construction: nothing pm does on its own can write
under ``<home>/plugins/**``. Writes are a temporary file in the same folder, fsync, ``os.replace``
and an fsync of the folder, so a reader sees the old bytes or the new, never half.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ._files import temp_beside
from .errors import PmError


class StoreError(PmError):
    """A write pm refused or could not do; names the path."""

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

    def write_bytes(self, path: Path, data: bytes, *, mode: int = 0o644) -> Path:
        """Replace ``path`` with ``data`` atomically; the file gets ``mode`` before it appears."""
        self.check(path)
        self.mkdir(path.parent)
        try:
            fd, temp = temp_beside(path.parent, f".{path.name}.", ".tmp")
            try:
                os.fchmod(fd, mode)
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
                    handle.flush()
                    os.fsync(handle.fileno())
                os.replace(temp, path)
            except BaseException:
                Path(temp).unlink(missing_ok=True)
                raise
            _fsync_dir(path.parent)
        except OSError as exc:
            raise StoreError(path, f"cannot write: {exc.strerror or exc}") from exc
        return path

    def write_json(self, path: Path, data: Any) -> Path:
        text = json.dumps(data, indent=2, sort_keys=False, default=str) + "\n"
        return self.write_bytes(path, text.encode())

    def remove_tree(self, path: Path) -> None:
        self.check(path)
        if path.is_symlink() or path.is_file():
            path.unlink()
        elif path.exists():
            import shutil  # only removals need it

            shutil.rmtree(path)

    def unlink(self, path: Path) -> None:
        self.check(path)
        path.unlink(missing_ok=True)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
