"""Opt-in sdist builds (``pm.allow_builds``): an sdist built into a wheel by uv, cached by its sha256.

The resolver learns an allowed sdist's dependencies from its static PKG-INFO when it has one
(PEP 643); otherwise it asks a :class:`~pm.resolver.provider.Builder`, and :class:`SdistBuilder`
is that builder: it downloads the sdist when it is remote (verifying the sha256 the index gave),
runs ``uv build --wheel`` through :class:`~pm.base.uv.Uv` (the one subprocess choke point) for the
target interpreter, and keeps the wheel under ``<cache>/builds/<sdist sha256>/``, so a later
install uses the very wheel whose metadata the resolver read. Building runs the package's own
build backend: that is why it is opt-in, per package name.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Self
from urllib.parse import unquote, urldefrag, urlsplit

from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from pm.base.cachedir import default_cache_dir
from pm.base.uv import Uv, UvError
from pm.index._metadata import parse_metadata, wheel_metadata
from pm.index.base import FileLink, IndexFailure, Metadata
from pm.index.http import HashingSink, HttpClient

BUILDS = "builds"
_TAIL_LINES = 12


class BuildFailure(IndexFailure):
    """Building an allowed sdist failed: a failure (exit 1), never a conflict.

    ``package`` is ``"name version"``; ``output`` is the build's whole output, of which the
    message quotes the last lines.
    """

    kind = "build"

    def __init__(self, link: FileLink, detail: str, output: str = "") -> None:
        self.package = f"{link.name} {link.version}"
        self.output = output
        tail = "\n".join(line for line in output.strip().splitlines()[-_TAIL_LINES:])
        super().__init__(link.url, f"building {self.package} from its sdist failed: {detail}"
                                   + (f"\n{tail}" if tail else ""))


class SdistBuilder:
    """Builds sdists into wheels for one target interpreter, at most once per sdist sha256.

    Contract: :meth:`build` returns a wheel of exactly the sdist's project and version, stored at
    ``<cache_dir>/builds/<sha256>/<wheel filename>`` (written by rename, so concurrent processes
    see a whole folder or none); any problem raises :class:`BuildFailure` (the build) or
    :class:`IndexFailure` (the download). uv resolves the build requirements from
    ``index_urls`` / ``find_links`` (none: ``--no-index``) and never touches the network with
    ``offline``. Cost of a miss: one download and one ``uv build``; of a hit: one directory listing.
    """

    def __init__(
        self,
        uv: Uv,
        cache_dir: Path,
        *,
        python: str,
        index_urls: Iterable[str] = (),
        find_links: Iterable[Path | str] = (),
        offline: bool = False,
        client: HttpClient | None = None,
    ) -> None:
        self.uv = uv
        self.root = Path(cache_dir) / BUILDS
        self.python = python
        self.index_urls = tuple(index_urls)
        self.find_links = tuple(str(f) for f in find_links)
        self.offline = offline
        self.client = client if client is not None else HttpClient()
        for url in (*self.index_urls, *self.find_links):
            if "://" in url:
                self.client.authorize(url)  # an sdist on a private host is downloaded with its credentials

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connections used to download sdists."""
        self.client.close()

    # -- the Builder interface the resolver uses ----------------------------------------------------

    def metadata(self, link: FileLink) -> Metadata:
        """The core metadata of the wheel built from ``link``."""
        wheel = self.build(link)
        return parse_metadata(wheel_metadata(str(wheel), wheel.as_uri(), link.name), link.url)

    # -- for the install step ---------------------------------------------------------------------

    def built_wheel(self, link: FileLink) -> Path | None:
        """The wheel already built from ``link`` (by its sha256), or None. Never builds."""
        if not link.sha256:
            return None
        return self._stored(link.sha256.lower())

    def build(self, link: FileLink) -> Path:
        """The wheel built from sdist ``link``: from the cache, else downloaded and built now."""
        if (found := self.built_wheel(link)) is not None:
            return found
        self.root.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=self.root, prefix=".work-") as work:
            sdist, sha256 = self._sdist(link, Path(work))
            if (found := self._stored(sha256)) is not None:
                return found
            wheel = self._run_build(link, sdist, Path(work) / "out")
            return self._store(sha256, wheel, Path(work))

    # -- internals --------------------------------------------------------------------------------

    def _stored(self, sha256: str) -> Path | None:
        wheels = sorted((self.root / sha256).glob("*.whl"))
        return wheels[0] if wheels else None

    def _sdist(self, link: FileLink, work: Path) -> tuple[Path, str]:
        """A local copy of the sdist and its verified sha256."""
        url = urldefrag(link.url)[0]
        if url.startswith("file://"):
            path = Path(unquote(urlsplit(url).path))
            if not path.is_file():
                raise IndexFailure(url, "the sdist is not there")
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            if self.offline:
                raise IndexFailure(url, "building needs the sdist, which is not downloaded, and --offline was given")
            path = work / link.filename
            with path.open("wb") as handle:
                sink = HashingSink(handle)
                self.client.get(url, sink=sink)
                digest = sink.hash.hexdigest()
        if link.sha256 and link.sha256.lower() != digest:
            raise IndexFailure(url, f"hash mismatch: expected sha256 {link.sha256.lower()}, got {digest}")
        return path, digest

    def _run_build(self, link: FileLink, sdist: Path, out: Path) -> Path:
        argv = ["build", "--wheel", "--out-dir", str(out), "--python", self.python, *self._index_args(), str(sdist)]
        try:
            self.uv.run(*argv, env=self._index_env())
        except UvError as failure:
            raise BuildFailure(link, failure.detail, failure.output) from None
        wheels = sorted(out.glob("*.whl"))
        if len(wheels) != 1:
            raise BuildFailure(link, f"expected one wheel, uv wrote {[w.name for w in wheels]}")
        try:
            name, version, _, _ = parse_wheel_filename(wheels[0].name)
        except InvalidWheelFilename as exc:
            raise BuildFailure(link, f"the built wheel has an invalid name: {exc}") from None
        if (name, version) != (link.name, link.version):
            raise BuildFailure(link, f"the built wheel is {name} {version}, not {link.name} {link.version}")
        return wheels[0]

    def _index_env(self) -> dict[str, str]:
        """Index URLs and find-links (folders and pages) go through the environment, so credentials
        in them never show in argv. ``UV_FIND_LINKS`` is comma-separated, as uv splits
        ``--find-links`` too.

        ``index_urls`` is in search order (extra indexes first, the index URL last), which is how
        uv searches ``UV_INDEX`` before ``UV_DEFAULT_INDEX``."""
        env = {"UV_FIND_LINKS": ",".join(self.find_links)} if self.find_links else {}
        if not self.index_urls:
            return env
        *extra, default = self.index_urls
        env["UV_DEFAULT_INDEX"] = default
        if extra:
            env["UV_INDEX"] = " ".join(extra)
        return env

    def _index_args(self) -> list[str]:
        args: list[str] = [] if self.index_urls else ["--no-index"]
        if self.offline:
            args.append("--offline")
        return args

    def _store(self, sha256: str, wheel: Path, work: Path) -> Path:
        """Move ``wheel`` into ``builds/<sha256>/`` by renaming a whole folder; a racing winner stays."""
        staged = work / "stored"
        staged.mkdir()
        shutil.move(str(wheel), staged / wheel.name)
        try:
            os.rename(staged, self.root / sha256)
        except OSError:
            if (found := self._stored(sha256)) is None:
                raise
            return found
        return self.root / sha256 / wheel.name


def uv_builder(python: str, index_urls: Iterable[str], find_links: Iterable[Path | str], *, offline: bool,
               cache_dir: Path | None = None) -> SdistBuilder:
    """The builder for these settings: uv's cache at ``<cache>/uv``, builds at ``<cache>/builds``."""
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    return SdistBuilder(Uv(root / "uv"), root, python=python, index_urls=index_urls, find_links=find_links,
                        offline=offline)
