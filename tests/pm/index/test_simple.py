"""SimpleIndexSource against a real PEP 503/691/658 index on 127.0.0.1."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
import time
from datetime import UTC, datetime

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from pm.index import IndexFailure, Metadata, MetadataUnavailable, SimpleIndexSource
from pm.index.cache import Cache
from pm.index.http import HttpClient
from pm.testing import LocalIndex, build_packages

NAMES = canonicalize_name


def _source(index: LocalIndex, cache: Cache | None = None, **options: object) -> SimpleIndexSource:
    return SimpleIndexSource(index.url, cache, **options)  # type: ignore[arg-type]


def _sha(index: LocalIndex, filename: str) -> str:
    return index.served_files()[filename].sha256


def test_json_page_gives_every_field(index: LocalIndex) -> None:
    with _source(index) as source:
        links = {link.filename: link for link in source.links(NAMES("alpha"))}
    assert sorted(links) == ["alpha-1.0-py3-none-any.whl", "alpha-2.0-py3-none-any.whl",
                             "alpha-2.0.tar.gz"]
    wheel = links["alpha-1.0-py3-none-any.whl"]
    assert wheel.url == f"{index.root}/files/alpha-1.0-py3-none-any.whl"
    assert wheel.sha256 == _sha(index, wheel.filename)
    assert wheel.requires_python == ">=3.8"
    assert wheel.upload_time == datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert wheel.yanked is None and wheel.size == index.served_files()[wheel.filename].size
    assert wheel.metadata_sha256 == hashlib.sha256(
        index.served_files()[wheel.filename].metadata or b"").hexdigest()
    assert wheel.source == index.url
    assert links["alpha-2.0.tar.gz"].yanked == "broken <build> & more"
    assert links["alpha-2.0.tar.gz"].metadata_sha256 is None  # no PEP 658 file for sdists here


def test_html_only_index_gives_the_same_links(index: LocalIndex) -> None:
    with _source(index) as source:
        from_json = source.links(NAMES("alpha")) + source.links(NAMES("gamma"))
    index.json = False
    with _source(index) as source:
        from_html = source.links(NAMES("alpha")) + source.links(NAMES("gamma"))
    # PEP 503 HTML carries neither upload time nor size; everything else must agree.
    without = [dataclasses.replace(link, upload_time=None, size=None) for link in from_json]
    assert list(from_html) == without
    assert len(from_html) == 5


def test_pep658_metadata_is_used_without_downloading_the_wheel(index: LocalIndex) -> None:
    with _source(index) as source:
        (wheel,) = [x for x in source.links(NAMES("alpha")) if x.filename.startswith("alpha-1.0")]
        metadata = source.metadata(wheel)
    assert metadata == Metadata(
        NAMES("alpha"), Version("1.0"),
        (Requirement("beta>=1"), Requirement('gamma; extra == "fast"'),
         Requirement('beta>=2; extra == "test"')),
        SpecifierSet(">=3.8"), frozenset({NAMES("test")}))
    files = [path for method, path in index.requests if path.startswith("/files/")]
    assert files == ["/files/alpha-1.0-py3-none-any.whl.metadata"]


@pytest.mark.parametrize("ranges", [True, False])
def test_without_metadata_files_the_metadata_comes_out_of_the_wheel(make_index, cache: Cache,
                                                                    ranges: bool) -> None:
    """By range requests when the server answers them (then no hash covers it: unverified), else
    out of the whole file, checked against its sha256."""
    from tests.pm.index.conftest import SPEC

    index = make_index(SPEC, metadata_files=False, ranges=ranges)
    with _source(index, cache) as source:
        (wheel,) = [x for x in source.links(NAMES("beta")) if x.version == Version("2.0")]
        assert wheel.metadata_sha256 is None
        found = source.metadata(wheel)
        assert found.requires_dist == (Requirement("gamma<2"),)
        assert found.unverified is ranges
    assert ("GET", "/files/beta-2.0-py3-none-any.whl") in index.requests
    # The metadata read out of the wheel is cached by the wheel's hash: no second download.
    index.reset_log()
    with _source(index, cache) as source:
        again = source.metadata(wheel)
        assert again.version == Version("2.0") and again.unverified is ranges
    assert not [p for _, p in index.requests if p.startswith("/files/")]


def test_a_corrupted_file_hash_is_an_index_failure_naming_the_url(make_index) -> None:
    from tests.pm.index.conftest import SPEC

    filename = "beta-1.0-py3-none-any.whl"
    index = make_index(SPEC, metadata_files=False, ranges=False, corrupt_hashes=[filename])
    with _source(index) as source:
        (wheel,) = [x for x in source.links(NAMES("beta")) if x.filename == filename]
        with pytest.raises(IndexFailure) as caught:
            source.metadata(wheel)
    url = f"{index.root}/files/{filename}"
    assert str(caught.value) == (f"{url}: hash mismatch: expected sha256 {wheel.sha256}, "
                                 f"got {_sha(index, filename)}")
    assert caught.value.url == url


def test_a_wrong_metadata_file_hash_is_an_index_failure(index: LocalIndex) -> None:
    with _source(index) as source:
        wheel = source.links(NAMES("beta"))[0]
        lying = dataclasses.replace(wheel, metadata_sha256="0" * 64)
        with pytest.raises(IndexFailure) as caught:
            source.metadata(lying)
    assert caught.value.url == f"{wheel.url}.metadata"
    assert caught.value.detail.startswith(f"hash mismatch: expected sha256 {'0' * 64}, got ")


def test_sdist_metadata_is_unavailable_without_a_build(index: LocalIndex) -> None:
    with _source(index) as source:
        (sdist,) = [x for x in source.links(NAMES("alpha")) if not x.is_wheel]
        with pytest.raises(MetadataUnavailable) as caught:
            source.metadata(sdist)
    assert caught.value.url == sdist.url
    assert "only known by building it" in caught.value.detail


def test_a_failing_project_is_an_http_failure(make_index) -> None:
    from tests.pm.index.conftest import SPEC

    index = make_index(SPEC, fail_projects={"beta": 503})
    with _source(index) as source, pytest.raises(IndexFailure) as caught:
        source.links(NAMES("beta"))
    assert str(caught.value) == f"{index.project_url('beta')}: HTTP 503 Service Unavailable"


def test_an_unknown_project_has_no_links(index: LocalIndex) -> None:
    with _source(index) as source:
        assert source.links(NAMES("no-such-thing")) == ()


def test_a_dead_index_fails_fast_with_connection_refused(closed_port: int) -> None:
    url = f"http://127.0.0.1:{closed_port}/simple/"
    started = time.monotonic()
    with SimpleIndexSource(url) as source, pytest.raises(IndexFailure) as caught:
        source.links(NAMES("alpha"))
    assert time.monotonic() - started < 2
    assert str(caught.value) == f"{url}alpha/: connection refused"


def test_a_slow_index_times_out(make_index) -> None:
    from tests.pm.index.conftest import SPEC

    index = make_index(SPEC, delay=1.0)
    with _source(index, timeout=0.2) as source, pytest.raises(IndexFailure) as caught:
        source.links(NAMES("alpha"))
    assert str(caught.value) == f"{index.project_url('alpha')}: timed out after 0.2s"


def test_warm_cache_revalidates_with_etag_and_reuses_the_body(
        index: LocalIndex, cache: Cache) -> None:
    url = index.project_url("alpha")
    with _source(index, cache) as source:
        cold = source.links(NAMES("alpha"))
    stored = cache.get_page(url)
    assert stored is not None and stored.etag and stored.max_age == 0
    # Mark the cached body so that only a reused body can produce this answer.
    page = json.loads(stored.body)
    page["files"] = page["files"][:1]
    cache.put_page(dataclasses.replace(stored, body=json.dumps(page).encode()))
    index.reset_log()
    with _source(index, cache) as source:
        warm = source.links(NAMES("alpha"))
    assert index.requests == [("GET", "/simple/alpha/")]  # revalidated (304), not skipped
    assert warm == tuple(link for link in cold if link.filename == page["files"][0]["filename"])


def test_a_fresh_page_is_not_even_revalidated(index: LocalIndex, cache: Cache) -> None:
    url = index.project_url("beta")
    with _source(index, cache) as source:
        cold = source.links(NAMES("beta"))
    stored = cache.get_page(url)
    assert stored is not None
    cache.put_page(dataclasses.replace(stored, max_age=600))
    index.reset_log()
    with _source(index, cache) as source:
        assert source.links(NAMES("beta")) == cold
    assert index.requests == []


def test_offline_serves_the_cache_and_refuses_the_rest(index: LocalIndex, cache: Cache) -> None:
    with _source(index, cache) as source:
        (wheel,) = [x for x in source.links(NAMES("beta")) if x.version == Version("2.0")]
        online = source.metadata(wheel)
        assert source.links(NAMES("nothing-here")) == ()
    url = index.url
    index.stop()  # offline must not need the network at all
    with SimpleIndexSource(url, cache, offline=True) as source:
        assert wheel in source.links(NAMES("beta"))
        assert source.metadata(wheel) == online
        assert source.links(NAMES("nothing-here")) == ()  # the 404 was remembered
        with pytest.raises(IndexFailure) as caught:
            source.links(NAMES("gamma"))
        (other,) = [x for x in source.links(NAMES("beta")) if x.version == Version("1.0")]
        with pytest.raises(IndexFailure) as metadata_caught:
            source.metadata(other)
    assert str(caught.value) == f"{url}gamma/: not in the cache and --offline was given"
    assert str(metadata_caught.value) == (
        f"{other.url}.metadata: not in the cache and --offline was given")


def test_prefetch_fetches_in_parallel(tmp_path) -> None:
    spec = {f"proj{i}": {"1.0": None} for i in range(20)}
    names = [NAMES(name) for name in spec]
    with LocalIndex(build_packages(tmp_path / "dists", spec), delay=0.3) as index:
        started = time.monotonic()
        with _source(index) as source:
            source.prefetch(names)
            assert all(len(source.links(name)) == 1 for name in names)
            elapsed = time.monotonic() - started
            links = [source.links(name)[0] for name in names]
            started = time.monotonic()
            source.prefetch_metadata(links)
            assert [source.metadata(link).name for link in links] == names
            metadata_elapsed = time.monotonic() - started
    # one at a time would take 6 s; half of that leaves room for a loaded machine
    assert elapsed < 3.0, f"20 pages at 0.3 s each took {elapsed:.2f}s: not parallel"
    assert metadata_elapsed < 3.0, f"20 metadata files at 0.3 s each took {metadata_elapsed:.2f}s"
    assert len(index.requests) == 40


def test_concurrent_links_of_one_name_fetch_the_page_once(make_index) -> None:
    from tests.pm.index.conftest import SPEC

    index = make_index(SPEC, delay=0.2)
    barrier = threading.Barrier(8)
    results: list[object] = []

    def ask(source: SimpleIndexSource) -> None:
        barrier.wait()
        results.append(source.links(NAMES("alpha")))

    with _source(index) as source:
        source.prefetch([NAMES("alpha")])
        threads = [threading.Thread(target=ask, args=(source,)) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert index.requests == [("GET", "/simple/alpha/")]
    assert len(results) == 8 and all(r == results[0] for r in results)


def test_a_failed_fetch_is_retried_by_the_next_caller(make_index) -> None:
    from tests.pm.index.conftest import SPEC

    index = make_index(SPEC, fail_projects={"alpha": 500})
    with _source(index) as source:
        with pytest.raises(IndexFailure, match="HTTP 500 Internal Server Error"):
            source.links(NAMES("alpha"))
        index.fail_projects = {}
        assert len(source.links(NAMES("alpha"))) == 3


def test_client_follows_redirects_and_reuses_its_connection(index: LocalIndex) -> None:
    client = HttpClient(timeout=5)
    try:
        response = client.get(f"{index.url}Alpha/", headers={"Accept": "text/html"})
        again = client.get(f"{index.url}alpha/", headers={"Accept": "text/html"})
    finally:
        client.close()
    assert response.status == 200 and response.url == index.project_url("alpha")
    assert response.body == again.body and b"alpha-1.0-py3-none-any.whl" in response.body
    assert index.requests == [("GET", "/simple/Alpha/"), ("GET", "/simple/alpha/"),
                              ("GET", "/simple/alpha/")]


def test_client_keeps_one_connection_alive(counting_server) -> None:
    server = counting_server(100)
    client = HttpClient(timeout=5)
    try:
        bodies = [client.get(server.url).body for _ in range(3)]
    finally:
        client.close()
    assert bodies == [b"ok"] * 3
    assert server.connections == 1


def test_client_reconnects_once_when_a_kept_connection_was_dropped(counting_server) -> None:
    server = counting_server(1)
    client = HttpClient(timeout=5)
    try:
        bodies = [client.get(server.url).body for _ in range(3)]
    finally:
        client.close()
    assert bodies == [b"ok"] * 3
    assert server.connections == 3


@pytest.mark.network
def test_the_public_index_over_https(cache: Cache) -> None:
    """Opt-in (``pytest -m network``): TLS, gzip, PEP 691 and PEP 658 on pypi.org."""
    with SimpleIndexSource("https://pypi.org/simple/", cache, timeout=20) as source:
        links = source.links(NAMES("resolvelib"))
        wheel = next(x for x in links if x.version == Version("1.2.1") and x.is_wheel)
        assert wheel.sha256 and wheel.upload_time is not None
        assert source.metadata(wheel).requires_python == SpecifierSet(">=3.9")


def test_credentials_in_the_index_url_become_basic_auth_and_go_nowhere_else(
        counting_server, closed_port: int) -> None:
    server = counting_server(100)
    root = server.url.removesuffix("/page")
    secret_url = root.replace("http://", "http://me:s%40cret@") + "/simple/"
    with SimpleIndexSource(secret_url) as source:
        with pytest.raises(IndexFailure, match="links to no distribution file"):
            source.links(NAMES("alpha"))  # the server answers "ok": no project page (issue 15)
        assert source.label == f"{root}/simple/"
    (head,) = server.heads
    assert head.startswith("GET /simple/alpha/ HTTP/1.1\r\n")
    assert "\r\nAuthorization: Basic bWU6c0BjcmV0\r\n" in head + "\r\n"  # me:s@cret
    dead = f"http://me:s%40cret@127.0.0.1:{closed_port}/simple/"
    with pytest.raises(IndexFailure) as caught:
        HttpClient().get(dead)
    assert str(caught.value) == f"http://me:****@127.0.0.1:{closed_port}/simple/: connection refused"


def test_a_json_page_with_files_not_a_list_or_a_file_without_url_is_an_index_failure() -> None:
    from pm.index._pages import parse_json

    with pytest.raises(IndexFailure) as caught:
        parse_json(b'{"meta": {"api-version": "1.0"}, "name": "a", "files": {"x": 1}}', "http://i/simple/a/", "i")
    assert str(caught.value) == "http://i/simple/a/: invalid PEP 691 JSON page ('files' is a dict, not a list)"
    page = b'{"meta": {"api-version": "1.0"}, "name": "a", "files": [{"filename": "a-1.0-py3-none-any.whl"}]}'
    with pytest.raises(IndexFailure) as caught:
        parse_json(page, "http://i/simple/a/", "i")
    assert str(caught.value) == ("http://i/simple/a/: invalid PEP 691 JSON page: file "
                                 "'a-1.0-py3-none-any.whl' has no url")


@pytest.mark.parametrize(("file", "detail"), [
    ('{"filename": "a-2.0-py3-none-any.whl", "url": ""}', "file 'a-2.0-py3-none-any.whl' has no url"),
    ('{"filename": "a-2.0-py3-none-any.whl", "url": " \\t\\n"}', "file 'a-2.0-py3-none-any.whl' has no url"),
    ('{"filename": "a-2.0-py3-none-any.whl", "url": 7}', "file 'a-2.0-py3-none-any.whl' has no url"),
    ('{"filename": "../a-2.0-py3-none-any.whl", "url": "x"}', "file name '../a-2.0-py3-none-any.whl' is a path"),
])
def test_a_page_digest_checks_every_file_even_one_that_misses_the_target(file: str, detail: str) -> None:
    """The digest checks files as it reaches them: a bad one after good ones, on a wheel of
    another platform, still fails the page."""
    from pm.index._pages import JSON_TYPES, page_digest

    good = '{"filename": "a-1.0-py3-none-any.whl", "url": "a-1.0-py3-none-any.whl"}'
    page = f'{{"meta": {{"api-version": "1.0"}}, "name": "a", "files": [{good}, {file}]}}'.encode()
    with pytest.raises(IndexFailure) as caught:
        page_digest(page, JSON_TYPES[0], "http://i/simple/a/", frozenset({"cp311-cp311-win32"}))
    assert str(caught.value) == f"http://i/simple/a/: invalid PEP 691 JSON page: {detail}"


def test_an_unparsable_requires_python_on_the_index_page_is_dropped() -> None:
    from pm.index._pages import parse_json

    page = (b'{"meta": {"api-version": "1.0"}, "name": "a", "files": [{"filename": "a-1.0-py3-none-any.whl", '
            b'"url": "a-1.0-py3-none-any.whl", "hashes": {}, "requires-python": ">=>3"}]}')
    (link,) = parse_json(page, "http://i/simple/a/", "i")
    assert link.requires_python is None
