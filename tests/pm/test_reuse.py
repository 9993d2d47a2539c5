"""Reusing a resolution (pm.records.reuse): the same inputs over unchanged pages skip the resolver; any
change of an input, a page or a find-links folder resolves again."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pm.cli import main
from pm.index.cache import Cache
from pm.testing import LocalIndex, add_plugin, build_packages, build_wheel, make_home
from pm.testing.receipts import assert_valid_receipt

SPEC = {"alpha": {"1.0": ["beta>=1"], "2.0": ["beta>=2"]}, "beta": {"1.0": [], "2.0": []}}


@pytest.fixture
def index(make_index: Callable[..., LocalIndex]) -> LocalIndex:
    return make_index(SPEC)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for variable in ("HERMES_PM_INDEX_URL", "UV_INDEX_URL", "PIP_INDEX_URL", "HERMES_HOME", "HERMES_PM_FIND_LINKS"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "no-bundled"))
    home = make_home(tmp_path / "home", config={"plugins": {"enabled": ["maps"]}})
    add_plugin(home / "plugins", "maps", style="manifest", dependencies=["alpha"])
    (tmp_path / "core.toml").write_text("[project]\nname = 'host'\ndependencies = []\n")
    (tmp_path / "lock.txt").write_text("")
    return home


def resolve(capsys: pytest.CaptureFixture[str], home: Path, index: LocalIndex, *extra: str) -> dict[str, Any]:
    capsys.readouterr()
    code = main(["resolve", "--json", "--home", str(home), "--index-url", index.url,
                 "--core", str(home.parent / "core.toml"), "--core-lock", str(home.parent / "lock.txt"), *extra])
    receipt: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert code == 0, receipt
    assert_valid_receipt(receipt)
    return receipt


def make_fresh(cache: Cache, index: LocalIndex, *names: str) -> None:
    """Mark these cached pages fresh for ten minutes, as if the index had sent max-age=600."""
    for name in names:
        header = cache.get_header(index.project_url(name))
        assert header is not None
        cache.put_header(dataclasses.replace(header, max_age=600))


def pins(receipt: dict[str, Any]) -> dict[str, str]:
    return {p["name"]: p["version"] for p in receipt["resolution"]["packages"]}


def test_the_same_inputs_over_unchanged_pages_reuse_the_resolution(capsys, home, index) -> None:
    first = resolve(capsys, home, index)
    assert first["reused_resolution"] is False and pins(first) == {"alpha": "2.0", "beta": "2.0"}
    index.reset_log()
    again = resolve(capsys, home, index)
    assert again["reused_resolution"] is True
    assert again["resolution"] == first["resolution"]
    # max-age=0 pages are revalidated (304), nothing else is asked: no metadata, no resolver.
    assert sorted(index.requests) == [("GET", "/simple/alpha/"), ("GET", "/simple/beta/")]


def test_fresh_pages_make_reuse_free_of_requests(capsys, home, index, tmp_path) -> None:
    resolve(capsys, home, index)
    make_fresh(Cache(tmp_path / "cache"), index, "alpha", "beta")
    index.reset_log()
    assert resolve(capsys, home, index)["reused_resolution"] is True
    assert index.requests == []


def test_a_changed_page_resolves_again(capsys, home, index, tmp_path) -> None:
    resolve(capsys, home, index)
    index.add_files(build_packages(tmp_path / "more", {"beta": {"3.0": []}}))
    after = resolve(capsys, home, index)
    assert after["reused_resolution"] is False and pins(after)["beta"] == "3.0"


def test_a_changed_declaration_resolves_again(capsys, home, index) -> None:
    resolve(capsys, home, index)
    add_plugin(home / "plugins", "maps", style="manifest", dependencies=["alpha<2"])
    after = resolve(capsys, home, index)
    assert after["reused_resolution"] is False and pins(after) == {"alpha": "1.0", "beta": "2.0"}


def test_a_candidate_or_another_policy_is_another_resolution(capsys, home, index) -> None:
    add_plugin(home / "plugins", "old-beta", style="manifest", dependencies=["beta<2"])
    resolve(capsys, home, index)
    with_candidate = resolve(capsys, home, index, "--with", "old-beta")
    assert with_candidate["reused_resolution"] is False and pins(with_candidate)["beta"] == "1.0"
    assert resolve(capsys, home, index, "--prereleases", "allow")["reused_resolution"] is False


def test_a_changed_find_links_folder_resolves_again(capsys, home, index, tmp_path) -> None:
    folder = tmp_path / "wheels"
    folder.mkdir()
    assert resolve(capsys, home, index, "--find-links", str(folder))["reused_resolution"] is False
    assert resolve(capsys, home, index, "--find-links", str(folder))["reused_resolution"] is True
    build_wheel(folder, "beta", "5.0")
    after = resolve(capsys, home, index, "--find-links", str(folder))
    assert after["reused_resolution"] is False and pins(after)["beta"] == "5.0"


def test_a_damaged_entry_is_a_miss(capsys, home, index, tmp_path) -> None:
    first = resolve(capsys, home, index)
    (entry,) = [p for p in (tmp_path / "cache" / "results-v1").rglob("*") if p.is_file()]
    for damage in (b"", b"{", b'{"pages": [], "resolution": {"pins": [{"name": 1}]}}', b"[]"):
        entry.write_bytes(damage)
        again = resolve(capsys, home, index)
        assert again["reused_resolution"] is False and again["resolution"] == first["resolution"]


def test_a_reused_resolution_keeps_every_detail(capsys, home, index) -> None:
    from packaging.utils import canonicalize_name
    from packaging.version import Version

    from pm.inputs.union import Origin
    from pm.records.reuse import resolution_from_json, resolution_to_json
    from pm.resolver.model import Move, Parent, Pin, Resolution

    first = resolve(capsys, home, index)
    again = resolve(capsys, home, index)
    assert again["resolution"] == first["resolution"] and again["warnings"] == first["warnings"]
    from pm.index.base import FileLink
    link = FileLink("a-1.0-py3-none-any.whl", "https://i/a-1.0-py3-none-any.whl", "ab" * 32, 12, ">=3.8", "bad",
                    None, "", "https://i/simple/")
    resolution = Resolution((Pin(link.name, link.version, link, frozenset({"x"}), (Origin("p", "/f"), Origin.core()),
                                 (Parent("a>=1", Origin("p", "/f")), Parent("a==1.0", package="b 2", locked=True)),
                                 ("c",)),), ("a warning",), moves=
                            (Move(link.name, Version("0.9"), link.version, "required", Parent("a>=1", Origin("p", "/f"))),
                             Move(canonicalize_name("gone"), Version("2"), None, "unused"),
                             Move(link.name, Version("0.8"), link.version, "not-offered", detail="no longer listed")))
    assert resolution_from_json(json.loads(json.dumps(resolution_to_json(resolution)))) == resolution


def test_a_fresh_reuse_loads_neither_the_resolver_nor_the_index_client(capsys, home, index, tmp_path) -> None:
    import os
    import subprocess
    import sys

    resolve(capsys, home, index)
    make_fresh(Cache(tmp_path / "cache"), index, "alpha", "beta")
    script = ("import sys, json\nfrom pm.cli import main\ncode = main(sys.argv[1:])\n"
              "heavy = ('pm.resolver.', 'pm.index.simple', 'pm.index.http', 'resolvelib')\n"
              "print(json.dumps(sorted(m for m in sys.modules if m.startswith(heavy))), file=sys.stderr)\n"
              "sys.exit(code)")
    argv = [sys.executable, "-c", script, "resolve", "--home", str(home), "--index-url", index.url,
            "--core", str(home.parent / "core.toml"), "--core-lock", str(home.parent / "lock.txt")]
    done = subprocess.run(argv, capture_output=True, text=True, check=False,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert done.returncode == 0, done.stderr
    # the values a stored resolution is read into (preferences: what every operation's options carry)
    assert json.loads(done.stderr.strip().splitlines()[-1]) == ["pm.resolver.model", "pm.resolver.preferences"]


class _Revalidated:
    """A source whose every page needs a request; counts requests running at once."""

    def __init__(self, workers: int, changed: str | None = None) -> None:
        import threading

        self._workers, self.changed = workers, changed
        self._lock = threading.Lock()
        self.asked: list[str] = []
        self.running = self.peak = 0

    def workers(self) -> int:
        return self._workers

    def page_current(self, url: str, status: int, sha: str) -> bool | None:
        return None

    def unchanged(self, url: str, status: int, sha: str) -> bool:
        import time

        with self._lock:
            self.asked.append(url)
            self.running += 1
            self.peak = max(self.peak, self.running)
        time.sleep(0.02)
        with self._lock:
            self.running -= 1
        return url != self.changed


@pytest.mark.parametrize("workers", [1, 3])
def test_pages_are_revalidated_on_the_threads_the_source_allows(workers: int) -> None:
    from pm.records.reuse import _pages_unchanged

    pages = [(f"https://index.example/simple/p{i}/", 200, "sha") for i in range(12)]
    source = _Revalidated(workers)
    assert _pages_unchanged(source, pages)  # type: ignore[arg-type]
    assert sorted(source.asked) == sorted(url for url, _, _ in pages)
    assert source.asked[0] == pages[0][0] and source.peak == workers  # the first alone: it measures latency


def test_a_changed_first_page_stops_the_revalidation() -> None:
    from pm.records.reuse import _pages_unchanged

    pages = [(f"https://index.example/simple/p{i}/", 200, "sha") for i in range(5)]
    source = _Revalidated(4, changed=pages[0][0])
    assert not _pages_unchanged(source, pages)  # type: ignore[arg-type]
    assert source.asked == [pages[0][0]]


def test_a_wheel_replaced_by_one_of_the_same_size_and_time_resolves_again(capsys, home, index, tmp_path) -> None:
    """``cp -p`` of a rebuilt wheel keeps the size and the modification time: the stored
    resolution (with the old file's sha256) must not be reused over the new bytes."""
    folder = tmp_path / "wheels"
    folder.mkdir()
    wheel = build_wheel(folder, "beta", "5.0")
    first = resolve(capsys, home, index, "--find-links", str(folder))
    old = next(p["file"]["sha256"] for p in first["resolution"]["packages"] if p["name"] == "beta")
    st = wheel.stat()
    data = bytearray(wheel.read_bytes())
    data[-30] ^= 0xFF  # other bytes (in the zip's trailing comment area), same size
    replacement = folder / "incoming.tmp"
    replacement.write_bytes(bytes(data))
    os.utime(replacement, ns=(st.st_atime_ns, st.st_mtime_ns))
    replacement.replace(wheel)
    assert wheel.stat().st_size == st.st_size and wheel.stat().st_mtime_ns == st.st_mtime_ns

    after = resolve(capsys, home, index, "--find-links", str(folder))

    assert after["reused_resolution"] is False
    assert next(p["file"]["sha256"] for p in after["resolution"]["packages"] if p["name"] == "beta") != old
