"""FindLinksSource over a real folder of built wheels and sdists."""

from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from pm.index import FindLinksSource, IndexFailure, MetadataUnavailable
from pm.testing import build_sdist, build_wheel


def _static_sdist(folder: Path, requires: str) -> Path:
    """An sdist whose PKG-INFO is Metadata-Version 2.2 with static dependencies (PEP 643)."""
    pkg_info = f"Metadata-Version: 2.2\nName: static-pkg\nVersion: 3.0\nRequires-Dist: {requires}\n"
    path = folder / "static_pkg-3.0.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        info = tarfile.TarInfo("static_pkg-3.0/PKG-INFO")
        info.size = len(pkg_info.encode())
        archive.addfile(info, io.BytesIO(pkg_info.encode()))
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    dists = tmp_path / "wheels"
    build_wheel(dists, "Demo.Pkg", "1.0", requires_dist=["other>=2"], requires_python=">=3.8")
    build_wheel(dists, "demo-pkg", "1.1", tag="cp311-cp311-manylinux_2_17_x86_64")
    build_sdist(dists, "demo-pkg", "1.2")
    _static_sdist(dists, "other<3")
    (dists / "notes.txt").write_text("not a distribution")
    return dists


def test_links_carry_file_urls_and_computed_hashes(folder: Path) -> None:
    with FindLinksSource(folder) as source:
        links = source.links(canonicalize_name("DEMO_pkg"))
    assert [link.filename for link in links] == [
        "demo_pkg-1.0-py3-none-any.whl", "demo_pkg-1.1-cp311-cp311-manylinux_2_17_x86_64.whl",
        "demo_pkg-1.2.tar.gz"]
    for link in links:
        path = folder / link.filename
        assert link.url == path.absolute().as_uri()
        assert link.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
        assert link.size == path.stat().st_size and link.source == str(folder.absolute())


def test_metadata_is_read_from_the_wheel(folder: Path) -> None:
    with FindLinksSource(folder) as source:
        wheel = source.links(canonicalize_name("demo-pkg"))[0]
        metadata = source.metadata(wheel)
    assert (metadata.name, metadata.version, metadata.requires_dist) == (
        "demo-pkg", Version("1.0"), (Requirement("other>=2"),))
    assert str(metadata.requires_python) == ">=3.8"


def test_sdists_give_metadata_only_when_static(folder: Path) -> None:
    with FindLinksSource(folder) as source:
        (static,) = source.links(canonicalize_name("static-pkg"))
        assert source.metadata(static).requires_dist == (Requirement("other<3"),)
        dynamic = source.links(canonicalize_name("demo-pkg"))[2]
        with pytest.raises(MetadataUnavailable) as caught:
            source.metadata(dynamic)
    assert caught.value.url == dynamic.url


def test_a_file_changed_after_listing_is_refused(folder: Path) -> None:
    with FindLinksSource(folder) as source:
        wheel = source.links(canonicalize_name("demo-pkg"))[0]
        build_wheel(folder, "demo-pkg", "1.0", requires_dist=["other>=5"])  # same name, new bytes
        with pytest.raises(IndexFailure) as caught:
            source.metadata(wheel)
    assert caught.value.detail.endswith("(the file changed since it was listed)")


def test_a_missing_folder_is_an_index_failure_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(IndexFailure) as caught:
        FindLinksSource(missing).links(canonicalize_name("demo-pkg"))
    assert str(caught.value) == f"{missing}: find-links folder does not exist"
