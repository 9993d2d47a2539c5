"""Opt-in sdist builds through the real uv, on real sdists served by a real local index.

The sdists here carry an in-tree PEP 517 backend (``backend-path = ["."]``, standard library
only), so ``uv build`` needs no build requirements from any index and runs offline. Their
PKG-INFO is Metadata-Version 2.1, so their dependencies are only known by building them.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from pm.base.uv import Uv
from pm.index import IndexFailure, MetadataUnavailable, SimpleIndexSource
from pm.index.base import FileLink
from pm.index.builds import BuildFailure, SdistBuilder
from pm.index.findlinks import FindLinksSource
from pm.inputs.core import Core
from pm.inputs.target import current_target
from pm.inputs.union import Origin, Tagged, Union
from pm.resolver import Policy, resolve_union
from pm.testing import LocalIndex, build_packages
from pm.testing.sdists import backend_sdist

TARGET = current_target()
PLUGIN = Origin("p", "plugins/p/plugin.yaml")

class Recorder:
    """A runner that runs the real program and remembers each argv (to count builds)."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def __call__(self, argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        self.calls.append(argv)
        return subprocess.run(argv, **kwargs)  # noqa: PLW1510 - the caller passes check=False

    @property
    def builds(self) -> int:
        return sum(1 for argv in self.calls if argv[1:2] == ["build"])


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalIndex]:
    dest = tmp_path_factory.mktemp("dists")
    files: list[Any] = build_packages(dest, {"base": {"1.0": [], "2.0": []}, "build-helper": {"1.0": []}})
    files += [backend_sdist(dest, "dyn", "1.0", ("base<2",)), backend_sdist(dest, "broken", "1.0", fail="the compiler exploded"),
              backend_sdist(dest, "needs-helper", "1.0", build_requires=("build-helper",))]
    with LocalIndex(files) as served:
        yield served


def builder(tmp_path: Path, index: LocalIndex | None = None, runner: Any = subprocess.run) -> SdistBuilder:
    uv = Uv(tmp_path / "cache" / "uv", runner=runner)
    return SdistBuilder(uv, tmp_path / "cache", python=TARGET.python, index_urls=[index.url] if index else [])


def resolve(index: LocalIndex, requirements: list[str], build: SdistBuilder | None, allow: set[str]):
    union = Union(Core((), (), "test", None), (), tuple(Tagged(Requirement(r), PLUGIN) for r in requirements))
    with SimpleIndexSource(index.url) as source:
        return resolve_union(union, TARGET, source, Policy(allow_builds=frozenset(allow)), builder=build)


def test_an_allowed_sdist_is_built_once_and_its_dependencies_resolved(index: LocalIndex, tmp_path: Path) -> None:
    recorder = Recorder()
    with builder(tmp_path, index, recorder) as build:
        resolution = resolve(index, ["dyn"], build, {"dyn"})
        pins = {p.name: p for p in resolution.pins}
        assert {n: str(p.version) for n, p in pins.items()} == {"dyn": "1.0", "base": "1.0"}
        sdist = pins[canonicalize_name("dyn")].link
        assert sdist.filename == "dyn-1.0.tar.gz" and not sdist.is_wheel
        wheel = build.built_wheel(sdist)
        assert wheel == tmp_path / "cache" / "builds" / sdist.sha256 / "dyn-1.0-py3-none-any.whl"
        assert recorder.builds == 1
    with builder(tmp_path, index, recorder) as again:  # another process, same cache: no second build
        assert resolve(index, ["dyn"], again, {"dyn"}).pins == resolution.pins
        assert again.build(sdist) == wheel
    assert recorder.builds == 1


def test_without_a_builder_a_dynamic_sdist_is_a_failure_naming_it(index: LocalIndex) -> None:
    with pytest.raises(MetadataUnavailable) as caught:
        resolve(index, ["dyn"], None, {"dyn"})
    assert str(caught.value) == (
        f"{index.root}/files/dyn-1.0.tar.gz: the dependencies of this sdist are only known by building it "
        "(its PKG-INFO is older than Metadata-Version 2.2 or marks them Dynamic)")


def test_a_failed_build_is_a_failure_with_uvs_last_lines(index: LocalIndex, tmp_path: Path) -> None:
    with builder(tmp_path, index) as build, pytest.raises(BuildFailure) as caught:
        resolve(index, ["broken"], build, {"broken"})
    failure = caught.value
    assert isinstance(failure, IndexFailure) and failure.package == "broken 1.0"
    lines = str(failure).splitlines()
    assert lines[0] == (f"{index.root}/files/broken-1.0.tar.gz: building broken 1.0 from its sdist failed: "
                        "`uv build` exited with 2")
    assert "the compiler exploded" in lines
    assert not (tmp_path / "cache" / "builds").exists() or not any((tmp_path / "cache" / "builds").glob("[0-9a-f]*"))


def test_a_remote_sdist_whose_bytes_do_not_match_is_refused(index: LocalIndex, tmp_path: Path) -> None:
    link = FileLink("dyn-1.0.tar.gz", f"{index.root}/files/dyn-1.0.tar.gz", sha256="0" * 64)
    with builder(tmp_path) as build, pytest.raises(IndexFailure) as caught:
        build.build(link)
    assert str(caught.value).startswith(f"{index.root}/files/dyn-1.0.tar.gz: hash mismatch: expected sha256 {'0' * 64}, got ")
    assert build.built_wheel(link) is None


def test_a_find_links_sdist_builds_without_any_index(tmp_path: Path) -> None:
    folder = tmp_path / "wheelhouse"
    backend_sdist(folder, "dyn", "2.0")
    (link,) = FindLinksSource(folder).links(canonicalize_name("dyn"))
    with builder(tmp_path) as build:
        metadata = build.metadata(link)
    assert (metadata.name, metadata.version, metadata.requires_dist) == ("dyn", Version("2.0"), ())


def test_build_requirements_come_from_the_configured_index(index: LocalIndex, tmp_path: Path) -> None:
    with SimpleIndexSource(index.url) as source:
        (link,) = source.links(canonicalize_name("needs-helper"))
    with builder(tmp_path, index) as build:
        assert build.build(link).name == "needs_helper-1.0-py3-none-any.whl"
    index.reset_log()
    with builder(tmp_path / "no-index") as build, pytest.raises(BuildFailure) as caught:
        build.build(link)
    assert "build-helper was not found" in str(caught.value).replace("\n", " ")
    assert not [path for _, path in index.requests if "build-helper" in path]


def test_build_requirements_follow_the_search_order_extra_indexes_first(index: LocalIndex, tmp_path: Path) -> None:
    """pm searches extra indexes before the index URL; uv's build must too (uv's first-index rule):
    a build requirement on both comes from the extra index, and the index URL is never asked."""
    files = build_packages(tmp_path / "extra", {"build-helper": {"1.0": []}})
    with SimpleIndexSource(index.url) as source:
        (link,) = source.links(canonicalize_name("needs-helper"))
    with LocalIndex(files) as extra:
        uv = Uv(tmp_path / "cache" / "uv")
        index.reset_log()
        with SdistBuilder(uv, tmp_path / "cache", python=TARGET.python,
                          index_urls=[extra.url, index.url]) as build:
            assert build.build(link).name == "needs_helper-1.0-py3-none-any.whl"
        assert [path for _, path in extra.requests if "build-helper" in path]
    assert not [path for _, path in index.requests if "build-helper" in path]


def test_build_requirements_come_from_a_find_links_page_whose_credentials_stay_off_argv(
        index: LocalIndex, tmp_path: Path) -> None:
    """A find-links URL reaches ``uv build`` as pm resolves with it: through ``UV_FIND_LINKS`` in
    uv's environment (credentials and all), never on its command line."""
    files = build_packages(tmp_path / "page", {"build-helper": {"1.0": []}})
    with SimpleIndexSource(index.url) as source:
        (link,) = source.links(canonicalize_name("needs-helper"))
    with LocalIndex(files) as page:
        page.basic_auth = "alice:S3CRET"
        recorder = Recorder()
        uv = Uv(tmp_path / "cache" / "uv", runner=recorder)
        url = page.find_links_url.replace("http://", "http://alice:S3CRET@")
        with SdistBuilder(uv, tmp_path / "cache", python=TARGET.python, find_links=[url]) as build:
            assert build.build(link).name == "needs_helper-1.0-py3-none-any.whl"
        assert ("GET", "/links/") in page.requests and ("GET", "/files/build_helper-1.0-py3-none-any.whl") in page.requests
    assert recorder.builds == 1 and not [argv for argv in recorder.calls if "S3CRET" in " ".join(argv)]
