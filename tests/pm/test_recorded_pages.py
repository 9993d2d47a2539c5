"""pm.cli._recorded_pages: what a shortcut record keeps of the pages a resolve read — real page
headers in a real cache folder, as the index source stores them."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import pytest

from pm.cli._recorded_pages import Recorded, recorded
from pm.index.cache import Cache, CachedPage

FRESH = "http://127.0.0.1:9/simple/alpha/"
BARE = "http://127.0.0.1:9/simple/beta/"


def _store(cache: Cache, url: str, body: bytes, *, max_age: int = 0, final_url: str | None = None,
           etag: str | None = None) -> tuple[str, int, str]:
    cache.put_page(CachedPage(url, final_url or url, 200, "text/html", body, etag=etag, max_age=max_age,
                              fetched_at=1000.0))
    return url, 200, hashlib.sha256(body).hexdigest()


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Cache:
    for variable in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("NETRC", str(tmp_path / "no-netrc"))
    return Cache(tmp_path / "cache")


def test_pages_kept_by_max_age_are_compared_with_the_clock_and_the_others_asked_again(cache: Cache) -> None:
    pages = [_store(cache, FRESH, b"a", max_age=600), _store(cache, BARE, b"b", etag='"e1"')]
    found = recorded(pages, cache.root, offline=False)
    assert found is not None
    headers = sorted((cache.root / "pages-v2").glob("*/*"))
    assert found.watched == {f"f:{p}": hashlib.sha256(p.read_bytes()).hexdigest() for p in headers}
    assert found.fresh == [[1000.0, 600]]
    assert found.asked == [[BARE, hashlib.sha256(b"b").hexdigest(), '"e1"', ""]]
    offline = recorded(pages, cache.root, offline=True)  # offline, every page is what the cache holds
    assert offline is not None and offline.fresh == [[1000.0, 600], [1000.0, 0]] and offline.asked == []
    assert recorded([], cache.root, offline=False) == Recorded({}, [], [])


def test_nothing_is_remembered_over_a_page_not_stored_as_it_was_read(cache: Cache) -> None:
    url, status, _ = _store(cache, FRESH, b"a", max_age=600)
    assert recorded([(url, status, hashlib.sha256(b"other").hexdigest())], cache.root, offline=False) is None
    assert recorded([(BARE, 200, hashlib.sha256(b"b").hexdigest())], cache.root, offline=False) is None


def test_nothing_is_remembered_over_a_page_the_shortcut_could_not_ask_plainly(
        cache: Cache, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    redirected = _store(cache, BARE, b"b", final_url="http://127.0.0.1:9/elsewhere/beta/")
    assert recorded([redirected], cache.root, offline=False) is None
    assert recorded([redirected], cache.root, offline=True) is not None  # offline, nothing is asked
    plain = _store(cache, "http://127.0.0.1:9/simple/gamma/", b"c")
    assert recorded([plain], cache.root, offline=False) is not None
    assert recorded([plain], cache.root, offline=False, ask_again=False) is None
    credentials = _store(cache, "http://someone:secret@127.0.0.1:9/simple/gamma/", b"c")
    assert recorded([credentials], cache.root, offline=False) is None
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:8")
    assert recorded([plain], cache.root, offline=False) is None
    monkeypatch.delenv("HTTP_PROXY")
    (tmp_path / "netrc").write_text("machine 127.0.0.1 login someone password secret\n")
    monkeypatch.setenv("NETRC", str(tmp_path / "netrc"))
    assert recorded([plain], cache.root, offline=False) is None


def test_a_page_fresh_now_is_fresh_by_the_record_and_not_after(cache: Cache) -> None:
    from pm.cli.shortcut import _fresh

    now = time.time()
    cache.put_page(CachedPage(FRESH, FRESH, 200, "text/html", b"a", max_age=60, fetched_at=now - 30))
    found = recorded([(FRESH, 200, hashlib.sha256(b"a").hexdigest())], cache.root, offline=False)
    assert found is not None and cache.get_header(FRESH) is not None
    assert _fresh(found.fresh, offline=False) is cache.get_header(FRESH).is_fresh() is True  # type: ignore[union-attr]
    late = [[fetched - 31, age] for fetched, age in found.fresh]
    assert _fresh(late, offline=False) is False and _fresh(late, offline=True) is True
