"""A find-links page over HTTP (:class:`FindLinksPage`) against the real page LocalIndex serves at
``/links/``: files of every project on one page, relative hrefs, ``#sha256=`` fragments, the cache
and ``--offline``, and hashing a file the page gives no hash for."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from packaging.utils import canonicalize_name

from pm.index import IndexFailure, open_sources
from pm.index.base import FileLink
from pm.index.cache import Cache
from pm.index.linkpage import FindLinksPage
from pm.testing import LocalIndex, build_packages

SPEC = {"alpha": {"1.0": [], "2.0": ["beta>=1"]}, "Beta.Pkg": {"1.0": {"sdist": True}}}


@pytest.fixture
def page(tmp_path: Path):
    with LocalIndex(build_packages(tmp_path / "files", SPEC)) as served:
        yield served


def project_of(filename: str) -> str | None:
    link = FileLink.parse(filename, "http://i/links/" + filename)
    return None if link is None else link.name


def test_project_names_come_from_file_names() -> None:
    """The page's files are grouped by the project FileLink reads from each name."""
    assert project_of("Foo_Bar-1.0-py3-none-any.whl") == "foo-bar"
    assert project_of("foo.bar-2.0.tar.gz") == "foo-bar"
    assert project_of("foo-bar-2.0.zip") == "foo-bar"
    assert project_of("README.txt") is None


def test_files_of_every_project_are_grouped_by_name_with_their_hashes(page: LocalIndex, tmp_path: Path) -> None:
    served = page.served_files()
    with FindLinksPage(page.find_links_url, Cache(tmp_path / "cache")) as source:
        assert source.project_names() == ["alpha", "beta-pkg"]
        alpha = source.links(canonicalize_name("alpha"))
        beta = source.links(canonicalize_name("beta.pkg"))
        metadata = source.metadata(alpha[0])
    assert [(link.filename, link.url, link.sha256, link.source) for link in alpha] == [
        (name, f"{page.root}/files/{name}", served[name].sha256, page.find_links_url)
        for name in ("alpha-2.0-py3-none-any.whl", "alpha-1.0-py3-none-any.whl")]
    assert sorted(link.filename for link in beta) == ["beta_pkg-1.0-py3-none-any.whl", "beta_pkg-1.0.tar.gz"]
    assert (metadata.version, [str(r) for r in metadata.requires_dist]) == (alpha[0].version, ["beta>=1"])
    assert [path for _, path in page.requests if path.startswith("/links")] == ["/links/"], "the page is read once"


def test_offline_the_cached_page_is_what_there_is(page: LocalIndex, tmp_path: Path) -> None:
    cache, url = Cache(tmp_path / "cache"), page.find_links_url
    with FindLinksPage(url, cache, offline=True) as source, pytest.raises(IndexFailure) as missed:
        source.links(canonicalize_name("alpha"))
    assert str(missed.value) == f"{url}: not in the cache and --offline was given"
    with FindLinksPage(url, cache) as source:
        online = source.links(canonicalize_name("alpha"))
    page.stop()
    with FindLinksPage(url, cache, offline=True) as source:
        assert source.links(canonicalize_name("alpha")) == online


def test_a_file_without_a_hash_is_hashed_once_pinned_and_never_offline(page: LocalIndex, tmp_path: Path) -> None:
    page.find_links_hashes = False
    wheel = page.served_files()["alpha-1.0-py3-none-any.whl"]
    with open_sources([], [page.find_links_url], offline=False, cache_dir=tmp_path / "cache") as sources:
        link = next(link for link in sources.links(canonicalize_name("alpha")) if link.filename == wheel.record.filename)
        assert link.sha256 is None
        hashed = sources.hashed(link)
    assert (hashed.sha256, hashed.size) == (hashlib.sha256(wheel.record.path.read_bytes()).hexdigest(), wheel.size)
    assert hashed.url == link.url and sources.hashed(hashed) is hashed
    with open_sources([], [page.find_links_url], offline=True, cache_dir=tmp_path / "cache") as sources:
        (link,) = (link for link in sources.links(canonicalize_name("alpha")) if link.filename == wheel.record.filename)
        with pytest.raises(IndexFailure) as refused:
            sources.hashed(link)
    assert str(refused.value) == (f"{link.url}: the find-links page gives no sha256 for this file, and hashing it "
                                  "needs a download; not in the cache and --offline was given")
