"""The distributions installed in an environment, offered as a source (for offline checks).

Given a site-packages folder, or a Python executable (asked once, through one subprocess, for its
``purelib`` and ``platlib``), every ``*.dist-info`` with a METADATA file is one distribution.
Each is offered as exactly one :class:`FileLink`:

- ``url`` is ``installed://<absolute path of the .dist-info folder>``;
- ``filename`` is synthetic, ``{name}-{version}-py3-none-any.whl``, only so that
  :class:`FileLink` can parse name and version: its **tags mean nothing** for an installed
  distribution (it is already there; no compatibility check applies);
- ``sha256`` is None (no file is vouched for); ``requires_python`` comes from METADATA.

Legacy ``*.egg-info`` installs are not offered. When one name is installed twice, the first
folder wins (purelib before platlib), as with importing.
"""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterable
from pathlib import Path

from packaging.utils import NormalizedName, canonicalize_name

from pm.index._metadata import parse_metadata
from pm.index.base import FileLink, IndexFailure, Metadata

INSTALLED_SCHEME = "installed://"
_PROBE = ("import json, sysconfig; "
          "print(json.dumps([sysconfig.get_path(k) for k in ('purelib', 'platlib')]))")


def site_packages_of(python: str, *, timeout: float = 30.0) -> list[Path]:
    """The purelib and platlib folders of interpreter ``python`` (deduplicated, existing)."""
    try:
        done = subprocess.run([python, "-I", "-c", _PROBE], capture_output=True, text=True,
                              timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise IndexFailure(
            python, f"cannot ask the interpreter for its site-packages ({exc})") from None
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
        raise IndexFailure(python, f"cannot ask the interpreter for its site-packages ({tail[0]})")
    folders = [Path(p) for p in dict.fromkeys(json.loads(done.stdout))]
    return [p for p in folders if p.is_dir()]


class InstalledSource:
    """Installed distributions of one environment.

    ``location`` is a site-packages folder or a Python executable. Contract: thread-safe; the
    environment is read once, on first use (one METADATA read per distribution), and that view
    stands for the life of the source. Prefetching is a no-op.
    """

    def __init__(self, location: Path | str) -> None:
        self.location = Path(location).expanduser().absolute()
        self.label = str(self.location)
        self._lock = threading.Lock()
        self._dists: dict[NormalizedName, tuple[FileLink, Metadata]] | None = None

    def __enter__(self) -> InstalledSource:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Nothing to release; present so every source can be closed alike."""

    def folders(self) -> list[Path]:
        """The site-packages folders read (runs the interpreter when given one)."""
        if self.location.is_dir():
            return [self.location]
        if self.location.is_file():
            return site_packages_of(str(self.location))
        raise IndexFailure(self.label, "no such site-packages folder or Python executable")

    def _read(self) -> dict[NormalizedName, tuple[FileLink, Metadata]]:
        with self._lock:
            if self._dists is None:
                dists: dict[NormalizedName, tuple[FileLink, Metadata]] = {}
                for folder in self.folders():
                    for dist_info in sorted(folder.glob("*.dist-info")):
                        found = self._one(dist_info)
                        if found is not None and found[1].name not in dists:
                            dists[found[1].name] = found
                self._dists = dists
            return self._dists

    def _one(self, dist_info: Path) -> tuple[FileLink, Metadata] | None:
        url = f"{INSTALLED_SCHEME}{dist_info}"
        try:
            data = (dist_info / "METADATA").read_bytes()
        except OSError:
            return None  # a half-removed distribution: not installed
        metadata = parse_metadata(data, url)
        filename = f"{metadata.name.replace('-', '_')}-{metadata.version}-py3-none-any.whl"
        python = str(metadata.requires_python) if metadata.requires_python is not None else None
        link = FileLink(filename, url, requires_python=python, source=self.label)
        return link, metadata

    def distributions(self) -> dict[NormalizedName, Metadata]:
        """Every installed distribution's metadata, by normalized name."""
        return {name: metadata for name, (_, metadata) in self._read().items()}

    def links(self, name: NormalizedName) -> tuple[FileLink, ...]:
        found = self._read().get(canonicalize_name(name))
        return (found[0],) if found is not None else ()

    def metadata(self, link: FileLink) -> Metadata:
        found = self._read().get(link.name)
        if found is None or found[0].url != link.url:
            raise IndexFailure(link.url, f"not a distribution installed in {self.label}")
        return found[1]

    def prefetch(self, names: Iterable[NormalizedName]) -> None:
        """No-op: the environment is read once, whole."""

    def prefetch_metadata(self, links: Iterable[FileLink]) -> None:
        """No-op: the environment is read once, whole."""
