"""Lazy project pages and the per-target digest cache (pm.index.project, SimpleIndexSource)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from packaging.utils import canonicalize_name
from packaging.version import Version

import pm.index.project as project_module
from pm.index import SimpleIndexSource
from pm.index.cache import Cache
from pm.index.project import Digest, Project, version_text, wheel_fits
from pm.testing import LocalIndex, build_packages

NAMES = canonicalize_name
CP311 = ("cp311-cp311-manylinux_2_17_x86_64", "cp311-abi3-manylinux_2_17_x86_64", "py3-none-any")
EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
CP312 = ("cp312-cp312-manylinux_2_17_x86_64", "py3-none-any")

#: "wide": every version has a wheel per interpreter; 1.0 only for Python 3.12; an sdist on 3.0.
SPEC = {
    "wide": {
        "1.0": {"tags": ["cp312-cp312-manylinux_2_17_x86_64"]},
        "2.0": {"tags": ["cp311-cp311-manylinux_2_17_x86_64", "cp312-cp312-manylinux_2_17_x86_64",
                         "cp310-cp310-win_amd64"]},
        "3.0": {"tags": ["cp311-cp311-manylinux_2_17_x86_64", "cp312-cp312-manylinux_2_17_x86_64"],
                "sdist": True},
    },
}


@pytest.fixture
def wide(make_index: Callable[..., LocalIndex]) -> LocalIndex:
    return make_index(SPEC)


def _source(index: LocalIndex, cache: Cache | None, tags: tuple[str, ...] | None = CP311) -> SimpleIndexSource:
    return SimpleIndexSource(index.url, cache, tags=tags)


def _names(links: object) -> list[str]:
    return sorted(link.filename for link in links)  # type: ignore[attr-defined]


def test_file_names_give_versions_and_tag_fits_without_parsing() -> None:
    assert version_text("numpy-2.1.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl") == "2.1.0"
    assert version_text("pkg-1.0-1-py3-none-any.whl") == "1.0"  # with a build tag
    assert version_text("my-pkg-0.3rc1.tar.gz") == "0.3rc1"
    assert version_text("readme.txt") is None and version_text("nodash.tar.gz") is None
    compressed = "x-1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
    assert wheel_fits(compressed, frozenset({"cp311-cp311-manylinux2014_x86_64"}))
    assert not wheel_fits(compressed, frozenset({"cp312-cp312-manylinux2014_x86_64"}))


def test_a_digest_keeps_what_fits_the_target_newest_first_with_a_sample_of_the_rest() -> None:
    entries = [(f"p-{v}-{t}.whl", f"f/p-{v}-{t}.whl", None, None, None, None, None, None)
               for v in ("1.0", "10.0", "2.0") for t in ("cp311-cp311-linux_x86_64", "cp39-cp39-win32")]
    entries.append(("p-1.0.tar.gz", "f/p-1.0.tar.gz", None, None, None, None, None, None))
    entries.append(("p-9.0-cp39-cp39-win32.whl", "f/p-9.0-cp39-cp39-win32.whl", None, None, None, None, None, None))
    digest = Digest.build(entries, "https://i/simple/p/", frozenset({"cp311-cp311-linux_x86_64"}))
    assert [(v, [e[0] for e in kept], [e[0] for e in sample]) for v, kept, sample in digest.versions] == [
        ("10.0", ["p-10.0-cp311-cp311-linux_x86_64.whl"], []),
        ("9.0", [], ["p-9.0-cp39-cp39-win32.whl"]),  # kept as a sample: explanations name its tags
        ("2.0", ["p-2.0-cp311-cp311-linux_x86_64.whl"], []),
        ("1.0", ["p-1.0-cp311-cp311-linux_x86_64.whl", "p-1.0.tar.gz"], []),
    ]
    assert digest.versions[0][1][0][1] == "https://i/simple/p/f/p-10.0-cp311-cp311-linux_x86_64.whl"
    assert Digest.from_bytes(digest.to_bytes()) == digest


def test_a_digest_keeps_no_sample_of_a_version_something_fits_whichever_file_comes_first() -> None:
    names = ["p-1.0-cp39-cp39-win32.whl", "p-1.0-cp311-cp311-linux_x86_64.whl", "p-1.0-cp39-cp39-win_amd64.whl",
             "p-2.0-cp39-cp39-win32.whl", "p-2.0-1-cp39-cp39-win32.whl", "p-2.0-cp39.whl", "p-2.0.zip"]
    entries = [(n, f"f/{n}", None, None, None, None, None, None) for n in names]
    digest = Digest.build(entries, "https://i/simple/p/", frozenset({"cp311-cp311-linux_x86_64"}))
    assert [(v, [e[0] for e in kept], [e[0] for e in sample]) for v, kept, sample in digest.versions] == [
        ("2.0", ["p-2.0.zip"], []),  # a malformed wheel name ("p-2.0-cp39.whl") is no file of any version
        ("1.0", ["p-1.0-cp311-cp311-linux_x86_64.whl"], []),
    ]
    no_target = Digest.build(entries, "https://i/simple/p/", None)
    assert [len(kept) for _, kept, _ in no_target.versions] == [3, 3]


def test_links_are_built_only_for_the_versions_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    entries = [(f"p-{i}.0-py3-none-any.whl", f"p-{i}.0-py3-none-any.whl", None, None, ">=3.8", None,
                "2024-01-01T00:00:00Z", None) for i in range(1, 500)]
    built: list[str] = []
    real = project_module.link_of
    monkeypatch.setattr(project_module, "link_of", lambda e, s: built.append(e[0]) or real(e, s))
    project = Project.from_digest(NAMES("p"), Digest.build(entries, "https://i/p/", None), "i")
    assert project.versions[0] == Version("499.0") and len(project.versions) == 499
    assert built == []
    (link,) = project.files(Version("7.0"))
    assert project.files(Version("7.0")) == (link,)  # remembered
    assert built == ["p-7.0-py3-none-any.whl"] and link.requires_python == ">=3.8"


def test_another_target_gets_its_own_digest_of_the_same_page(wide: LocalIndex, tmp_path: Path) -> None:
    cache = Cache(tmp_path)
    with _source(wide, cache, CP311) as source:
        on_311 = source.project(NAMES("wide"))
        assert on_311.versions == (Version("3.0"), Version("2.0"), Version("1.0"))
        assert _names(on_311.files(Version("2.0"))) == ["wide-2.0-cp311-cp311-manylinux_2_17_x86_64.whl"]
        assert _names(on_311.files(Version("1.0"))) == ["wide-1.0-cp312-cp312-manylinux_2_17_x86_64.whl"]  # sample
        assert _names(on_311.files(Version("3.0"))) == ["wide-3.0-cp311-cp311-manylinux_2_17_x86_64.whl",
                                                         "wide-3.0.tar.gz"]
    wide.reset_log()
    with _source(wide, cache, CP312) as source:
        assert _names(source.project(NAMES("wide")).files(Version("2.0"))) == [
            "wide-2.0-cp312-cp312-manylinux_2_17_x86_64.whl"]
    with _source(wide, cache, None) as source:  # no target: every file
        assert len(source.links(NAMES("wide"))) == 7
    assert len(list((tmp_path / "digests-v1").rglob("*"))) - len(list((tmp_path / "digests-v1").glob("*"))) == 3


def test_a_changed_page_is_digested_again(wide: LocalIndex, tmp_path: Path) -> None:
    cache = Cache(tmp_path / "cache")
    with _source(wide, cache) as source:
        assert Version("4.0") not in source.project(NAMES("wide")).versions
    wide.add_files(build_packages(tmp_path / "more", {"wide": {"4.0": {"tags": ["py3-none-any"]}}}))
    with _source(wide, cache) as source:  # max-age=0: revalidated, a new body, a new digest
        project = source.project(NAMES("wide"))
    assert project.versions[0] == Version("4.0")
    assert _names(project.files(Version("4.0"))) == ["wide-4.0-py3-none-any.whl"]


def test_a_corrupt_digest_is_a_miss_and_is_rebuilt(wide: LocalIndex, tmp_path: Path) -> None:
    cache = Cache(tmp_path)
    with _source(wide, cache) as source:
        before = source.links(NAMES("wide"))
    (digest_file,) = [p for p in (tmp_path / "digests-v1").rglob("*") if p.is_file()]
    for damage in (b"{not json", b'{"format": 1, "versions": [[1, 2]]}', b'{"format": 999, "versions": []}'):
        digest_file.write_bytes(damage)
        with _source(wide, cache) as source:
            assert source.links(NAMES("wide")) == before
        assert Digest.from_bytes(digest_file.read_bytes())  # rewritten whole


def test_a_fresh_page_needs_neither_the_network_nor_its_body(wide: LocalIndex, tmp_path: Path) -> None:
    cache = Cache(tmp_path)
    url = wide.project_url("wide")
    with _source(wide, cache) as source:
        before = source.links(NAMES("wide"))
    header = cache.get_header(url)
    assert header is not None
    cache.put_header(dataclasses.replace(header, max_age=600))
    for body in (tmp_path / "bodies-v1").rglob("*"):
        if body.is_file():
            body.unlink()  # the digest alone answers
    wide.reset_log()
    with _source(wide, cache) as source:
        assert source.links(NAMES("wide")) == before
    assert wide.requests == []


def test_an_unchanged_page_is_not_rewritten(wide: LocalIndex, tmp_path: Path) -> None:
    cache = Cache(tmp_path)
    with _source(wide, cache) as source:
        source.links(NAMES("wide"))
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    stamps = {p: p.stat().st_mtime_ns for p in files}
    for p in files:
        os.utime(p, ns=(1, 1))
    wide.reset_log()
    with _source(wide, cache) as source:  # revalidated: 304, same validators, max-age=0
        source.links(NAMES("wide"))
    assert wide.requests == [("GET", "/simple/wide/")]
    assert {p: p.stat().st_mtime_ns for p in files} == dict.fromkeys(stamps, 1)
    assert sorted(p for p in tmp_path.rglob("*") if p.is_file()) == sorted(files)


def test_pages_read_are_recorded_with_their_body_hash(wide: LocalIndex, tmp_path: Path) -> None:
    cache = Cache(tmp_path)
    with _source(wide, cache) as source:
        source.project(NAMES("wide"))
        source.project(NAMES("absent"))
        read = dict(source.pages_read)
        assert source.unchanged(wide.project_url("wide"), *read[wide.project_url("wide")])
    header = cache.get_header(wide.project_url("wide"))
    assert header is not None
    assert read == {wide.project_url("wide"): (200, header.body_sha256),
                    wide.project_url("absent"): (404, EMPTY_SHA256)}
