"""The index options of a requirements export (issue 24, item 3): the places pm resolved on, in
its search order, so pip and uv install from there and never ask an index pm did not — whatever
kind the place is, with credentials left for netrc or a keyring."""

from __future__ import annotations

from pathlib import Path

from packaging.utils import canonicalize_name
from packaging.version import Version

from pm.index.base import FileLink
from pm.records.export import index_lines
from pm.resolver import Pin, Resolution

LOCAL = "http://127.0.0.1:8080/simple/"


def _resolution(*sources: str) -> Resolution:
    """One pin per source, each offered by that source (its label, as :mod:`pm.index` gives it)."""
    pins = [Pin(canonicalize_name(f"p{i}"), Version("1.0"),
                FileLink(f"p{i}-1.0-py3-none-any.whl", f"file:///w/p{i}-1.0-py3-none-any.whl", "0" * 64, source=s))
            for i, s in enumerate(sources)]
    return Resolution(tuple(pins))


def test_a_local_index_is_the_index_url() -> None:
    assert index_lines(_resolution(LOCAL), (LOCAL,), ()) == [f"--index-url {LOCAL}"]


def test_extra_indexes_come_first_in_search_order_and_the_index_url_last() -> None:
    """pm searches the extra indexes first and the index URL last (uv's order): the file says
    which is which, so uv keeps the same first-index rule."""
    extra = "https://extra.example/simple/"
    assert index_lines(_resolution(LOCAL), (extra, LOCAL), ()) == [
        f"--extra-index-url {extra}", f"--index-url {LOCAL}"]


def test_a_file_index_is_named_as_given() -> None:
    url = "file:///srv/simple/"
    assert index_lines(_resolution(url), (url,), ()) == [f"--index-url {url}"]


def test_no_index_is_written_so_the_public_index_is_never_asked(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    assert index_lines(_resolution(str(wheels)), (), (wheels,)) == [
        "--no-index", f"--find-links {wheels.as_uri()}"]


def test_a_find_links_page_and_an_index_with_credentials_keep_the_login_only() -> None:
    index = "https://ci:s3cret@private.example/simple/"
    page = "https://TOKEN@private.example/wheels/"
    lines = index_lines(_resolution("https://private.example/simple/", "https://private.example/wheels/"),
                        (index,), (page,))
    assert lines == ["--index-url https://ci@private.example/simple/",
                     "--find-links https://private.example/wheels/"]


def test_a_source_the_settings_do_not_name_is_still_written(tmp_path: Path) -> None:
    """``export --selected`` of a generation resolved under other settings: its pins' places
    are added (a URL as an extra index, a folder as find-links), never dropped."""
    old, folder = "http://127.0.0.1:9999/simple/", tmp_path / "old-wheels"
    lines = index_lines(_resolution(LOCAL, old, str(folder)), (LOCAL.rstrip("/"),), ())
    assert lines == [f"--extra-index-url {old}", f"--index-url {LOCAL.rstrip('/')}",
                     f"--find-links {folder.as_uri()}"]
