"""The on-disk cache: location, round trips, verification, atomicity across processes."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from pm.base.cachedir import default_cache_dir
from pm.index.cache import Cache, CachedPage, max_age


def test_cache_dir_precedence(tmp_path: Path) -> None:
    home = Path.home()
    assert default_cache_dir({}) == home / ".cache" / "hermes-pm"
    assert default_cache_dir({"XDG_CACHE_HOME": "/x"}) == Path("/x/hermes-pm")
    assert default_cache_dir({"XDG_CACHE_HOME": "/x", "HERMES_PM_CACHE_DIR": "/y"}) == Path("/y")


def test_max_age_reads_cache_control() -> None:
    assert max_age("max-age=600, public") == 600
    assert max_age("max-age=0, must-revalidate") == 0
    assert max_age("public, max-age=60, no-cache") == 0
    assert max_age("max-age=soon") == 0
    assert max_age(None) == 0


def test_page_round_trip_and_freshness(tmp_path: Path) -> None:
    cache = Cache(tmp_path)
    page = CachedPage("https://i/simple/a/", "https://i/simple/a/", 200, "text/html",
                      b"<a>x</a>\n\nmore", '"tag"', None, 60, 1000.0)
    cache.put_page(page)
    assert cache.get_page(page.url) == page
    assert cache.get_page("https://i/simple/b/") is None
    assert page.is_fresh(now=1059.0) and not page.is_fresh(now=1061.0)
    again = page.revalidated({"etag": '"new"', "cache-control": "max-age=5"}, now=2000.0)
    assert (again.body, again.etag, again.max_age, again.fetched_at) == (
        page.body, '"new"', 5, 2000.0)


def test_metadata_is_verified_on_read(tmp_path: Path) -> None:
    cache = Cache(tmp_path)
    data = b"Metadata-Version: 2.1\nName: a\nVersion: 1\n"
    sha = cache.put_metadata(data)
    assert sha == hashlib.sha256(data).hexdigest() and cache.get_metadata(sha) == data
    cache.put_file_metadata("f" * 64, data)
    assert cache.get_file_metadata("F" * 64) == data
    (tmp_path / "metadata-v1" / sha[:2] / sha).write_bytes(b"tampered")
    assert cache.get_metadata(sha) is None and cache.get_file_metadata("f" * 64) is None
    assert cache.get_metadata("not-a-hash") is None


def test_a_body_stored_under_the_callers_hash_is_found_and_a_wrong_hash_is_only_a_miss(tmp_path: Path) -> None:
    cache, body = Cache(tmp_path), b'{"files": []}'
    sha = hashlib.sha256(body).hexdigest()
    assert cache.put_body(body, sha) == sha and cache.get_body(sha) == body
    wrong = hashlib.sha256(b"other").hexdigest()
    assert cache.put_body(b"not other", wrong) == wrong
    assert cache.get_body(wrong) is None  # read back, checked, not that body: a miss


def test_an_unwritable_cache_is_only_slower(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    cache = Cache(blocker)
    cache.put_metadata(b"x")  # nothing raised
    assert cache.get_metadata(hashlib.sha256(b"x").hexdigest()) is None


_WRITER = """
import sys
from pm.index.cache import Cache, CachedPage
cache, tag = Cache(sys.argv[1]), sys.argv[2]
for i in range(150):
    body = (tag * (1 + (i * 7919) % 20000)).encode()
    cache.put_page(CachedPage("u", "u", 200, "t", body, tag, None, 0, float(i)))
"""


def test_concurrent_processes_never_see_a_partial_page(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[3])}
    writers = [subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path), tag], env=env)
               for tag in "abc"]
    cache, seen = Cache(tmp_path), 0
    while any(w.poll() is None for w in writers):
        page = cache.get_page("u")
        if page is not None:
            seen += 1
            expected = (1 + (int(page.fetched_at) * 7919) % 20000) * str(page.etag)
            assert page.body == expected.encode()  # whole, and from one writer
    assert [w.wait() for w in writers] == [0, 0, 0]
    assert seen > 0
    assert not [p for p in tmp_path.rglob(".tmp-*")]  # every temporary file was renamed
