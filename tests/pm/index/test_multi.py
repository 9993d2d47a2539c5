"""MultiSource and open_sources: an index and a find-links folder together."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from packaging.utils import canonicalize_name

from pm.index import FindLinksSource, IndexFailure, MultiSource, open_sources
from pm.testing import LocalIndex, build_wheel


def test_links_merge_in_source_order_and_drop_repeated_filenames(
        index: LocalIndex, tmp_path: Path) -> None:
    folder = tmp_path / "local"
    folder.mkdir()
    shutil.copy(index.served_files()["beta-1.0-py3-none-any.whl"].record.path, folder)
    build_wheel(folder, "beta", "3.0")
    with open_sources([index.url], [folder], offline=False, cache_dir=tmp_path / "c") as source:
        links = source.links(canonicalize_name("beta"))
        assert [(link.filename, link.source) for link in links] == [  # newest first
            ("beta-3.0-py3-none-any.whl", str(folder)), ("beta-2.0-py3-none-any.whl", index.url),
            ("beta-1.0-py3-none-any.whl", index.url)]
        index.reset_log()
        assert source.metadata(links[0]).version == links[0].version
        assert index.requests == []  # the folder's file was read locally
        source.prefetch_metadata(links[1:])
        assert [source.metadata(link).version for link in links[1:]] == [links[1].version,
                                                                        links[2].version]
    assert sorted(path for _, path in index.requests) == [
        "/files/beta-1.0-py3-none-any.whl.metadata", "/files/beta-2.0-py3-none-any.whl.metadata"]


def test_find_links_only_and_nothing_at_all(tmp_path: Path) -> None:
    build_wheel(tmp_path / "w", "solo", "1.0")
    with open_sources([], [(tmp_path / "w").as_uri()], offline=True) as source:
        assert [link.filename for link in source.links(canonicalize_name("solo"))] == [
            "solo-1.0-py3-none-any.whl"]
    with open_sources([], [], offline=False) as nothing:
        assert nothing.links(canonicalize_name("solo")) == ()


def test_a_failing_source_fails_the_whole_lookup(index: LocalIndex, tmp_path: Path) -> None:
    with (MultiSource([FindLinksSource(tmp_path / "missing")]) as source,
          pytest.raises(IndexFailure, match="find-links folder does not exist")):
        source.links(canonicalize_name("alpha"))


def test_metadata_of_a_file_no_source_offered_is_refused(tmp_path: Path) -> None:
    from pm.index import FileLink

    stray = FileLink("x-1.0-py3-none-any.whl", "https://elsewhere/x-1.0-py3-none-any.whl",
                     source="https://elsewhere/")
    with MultiSource([]) as source, pytest.raises(IndexFailure) as caught:
        source.metadata(stray)
    assert str(caught.value) == f"{stray.url}: no configured source offered this file"
