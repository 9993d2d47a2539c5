"""Core metadata parsing and project page parsing: pure functions, whole-message errors."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from pm.index import FileLink, IndexFailure, Metadata
from pm.index._metadata import is_static, parse_metadata
from pm.index._pages import parse_html, parse_json, parse_page

URL = "https://files.example/pkg-1.0-py3-none-any.whl.metadata"


def test_parse_metadata_reads_what_the_resolver_needs() -> None:
    text = (b"Metadata-Version: 2.1\nName: My.Pkg\nVersion: 1.0\nRequires-Python: >=3.9\n"
            b"Provides-Extra: Fast_IO\nRequires-Dist: requests (>=2.0)\n"
            b"Requires-Dist: uvloop; (\n  sys_platform != 'win32' and extra == 'fast-io')\n"
            b"\nLong description: Name: not-a-header\n")
    assert parse_metadata(text, URL) == Metadata(
        "my-pkg", Version("1.0"),  # type: ignore[arg-type]
        (Requirement("requests>=2.0"),
         Requirement("uvloop; (sys_platform != 'win32' and extra == 'fast-io')")),
        SpecifierSet(">=3.9"), frozenset({"fast-io"}))  # type: ignore[arg-type]


@pytest.mark.parametrize("newline", [b"\n", b"\r\n"])
def test_only_the_headers_count_whatever_the_description_holds(newline: bytes) -> None:
    """The body is cut off before parsing: header-like lines after the first blank line (a
    README quoting metadata) are no fields, with either line ending."""
    head = [b"Metadata-Version: 2.1", b"Name: a", b"Version: 1", b"Requires-Dist: b>=1",
            b"Requires-Dist: c; extra == 'x'", b"Description-Content-Type: text/markdown"]
    body = [b"Requires-Dist: evil", b"", b"Name: other", b"Version: 9"] * 50
    metadata = parse_metadata(newline.join([*head, b"", *body]), URL)
    assert (metadata.name, metadata.version) == ("a", Version("1"))
    assert [str(r) for r in metadata.requires_dist] == ["b>=1", 'c; extra == "x"']
    no_body = parse_metadata(newline.join(head), URL)  # no blank line at all: every line is a header
    assert no_body == metadata


def test_a_requires_dist_line_seen_before_gives_an_equal_requirement() -> None:
    """Lines are parsed once per process and shared: the second file gets the same answer."""
    first = parse_metadata(b"Name: a\nVersion: 1\nRequires-Dist: b[x]>=2; python_version>'3'\n", URL)
    second = parse_metadata(b"Name: a\nVersion: 2\nRequires-Dist: b[x]>=2; python_version>'3'\n", URL)
    assert first.requires_dist == second.requires_dist == (Requirement("b[x]>=2; python_version>'3'"),)


def test_an_invalid_requires_dist_names_the_file_and_the_line() -> None:
    with pytest.raises(IndexFailure) as caught:
        parse_metadata(b"Name: a\nVersion: 1\nRequires-Dist: b >>> 2\n", URL)
    assert caught.value.url == URL
    assert caught.value.detail.startswith("invalid Requires-Dist 'b >>> 2': ")


@pytest.mark.parametrize(("text", "detail"), [
    (b"Version: 1\n", "core metadata has no Name field"),
    (b"Name: a\n", "core metadata has no Version field"),
    (b"Name: a\nVersion: one\n", "invalid Version 'one' in core metadata"),
    (b"Name: a\nVersion: 1\nRequires-Python: >=3.6.*\n",
     "invalid Requires-Python '>=3.6.*' in core metadata"),
    (b"", "core metadata is empty or not in email-header format"),
])
def test_unusable_metadata_is_an_index_failure(text: bytes, detail: str) -> None:
    with pytest.raises(IndexFailure) as caught:
        parse_metadata(text, URL)
    assert str(caught.value) == f"{URL}: {detail}"


@pytest.mark.parametrize(("text", "static"), [
    (b"Metadata-Version: 2.1\nName: a\nVersion: 1\n", False),
    (b"Metadata-Version: 2.2\nName: a\nVersion: 1\n", True),
    (b"Metadata-Version: 2.4\nName: a\nVersion: 1\nDynamic: Description\n", True),
    (b"Metadata-Version: 2.2\nName: a\nVersion: 1\nDynamic: Requires-Dist\n", False),
])
def test_sdist_metadata_is_static_from_2_2_without_dynamic_dependencies(
        text: bytes, static: bool) -> None:
    assert is_static(text, URL) is static


PAGE = "https://example.org/simple/pkg/"


def test_json_page_resolves_relative_urls_and_reads_pep_691_fields() -> None:
    body = b"""{"meta": {"api-version": "1.3"}, "name": "pkg", "files": [
      {"filename": "pkg-1.0-py3-none-any.whl", "url": "../../files/pkg-1.0-py3-none-any.whl",
       "hashes": {"sha256": "ABC", "md5": "x"}, "requires-python": ">=3.8", "yanked": true,
       "dist-info-metadata": {"sha256": "DEF"}, "upload-time": "2024-05-06T07:08:09.123456Z",
       "size": 12},
      {"filename": "pkg-1.0.tar.gz", "url": "https://cdn.example/pkg-1.0.tar.gz", "hashes": {},
       "yanked": "bad", "core-metadata": true, "dist-info-metadata": false},
      {"filename": "README.txt", "url": "README.txt", "hashes": {}}]}"""
    wheel, sdist = parse_json(body, PAGE, "idx")
    assert wheel == FileLink("pkg-1.0-py3-none-any.whl",
                             "https://example.org/files/pkg-1.0-py3-none-any.whl", "abc", 12,
                             ">=3.8", "", datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=UTC),
                             "def", "idx")
    assert (sdist.url, sdist.sha256, sdist.yanked, sdist.metadata_sha256) == (
        "https://cdn.example/pkg-1.0.tar.gz", None, "bad", "")


def test_html_page_reads_pep_503_592_658_714_attributes() -> None:
    body = b"""<html><head><base href="https://mirror.example/root/"></head><body>
      <a href="f/pkg-1.0-py3-none-any.whl#sha256=AB12" data-requires-python="&gt;=3.8"
         data-yanked="" data-dist-info-metadata="sha256=CD34">pkg-1.0-py3-none-any.whl</a>
      <a href="f/pkg-1.1-py3-none-any.whl#md5=00" data-core-metadata="true"
         data-yanked="no &lt;good&gt;">x</a>
      <a href="f/pkg-1.2.tar.gz">pkg-1.2.tar.gz</a>
    </body></html>"""
    first, second, third = parse_html(body, PAGE, "idx")
    assert first == FileLink("pkg-1.0-py3-none-any.whl",
                             "https://mirror.example/root/f/pkg-1.0-py3-none-any.whl", "ab12",
                             None, ">=3.8", "", None, "cd34", "idx")
    assert (second.sha256, second.yanked, second.metadata_sha256) == (None, "no <good>", "")
    assert (third.is_wheel, third.yanked, third.metadata_sha256) == (False, None, None)


def test_a_broken_json_page_is_an_index_failure() -> None:
    with pytest.raises(IndexFailure) as caught:
        parse_page(b"{nope", "application/vnd.pypi.simple.v1+json", PAGE, "idx")
    assert caught.value.url == PAGE and caught.value.detail.startswith("invalid PEP 691 JSON page")
    with pytest.raises(IndexFailure) as caught:
        parse_json(b'{"meta": {"api-version": "2.0"}, "files": []}', PAGE, "idx")
    assert str(caught.value) == f"{PAGE}: unsupported simple API version '2.0' (1.x only)"


def test_metadata_unavailable_is_public_in_base_and_still_importable_from_metadata():
    from pm.index import _metadata, base

    assert _metadata.MetadataUnavailable is base.MetadataUnavailable
    assert issubclass(base.MetadataUnavailable, base.IndexFailure)
