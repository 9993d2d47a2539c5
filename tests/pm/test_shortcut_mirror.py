"""The shortcut over a bare mirror (pm.cli.shortcut, pm.cli._refetch): pages with no max-age are
asked for again by every identical resolve, as the full command asks; when each comes back with
the bytes the answer was read from, the answer is given from memory, and anything else is a miss.

Real processes against a real local index with a bare mirror's headers (no Cache-Control, no
validators, no metadata files)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from pm.cli import _refetch
from pm.index import concurrency
from pm.testing import LocalIndex, build_packages
from pm.testing.index import PRESETS

from .test_shortcut import SPEC, VOLATILE, Setup, _answered_once, pins, without
from .test_shortcut_sync import LEAN, _loaded_after


@pytest.fixture
def mirror(tmp_path: Path, make_index: Callable[..., LocalIndex]) -> Setup:
    return _answered_once(tmp_path, make_index(SPEC, **PRESETS["mirror"]))


def test_an_identical_resolve_asks_each_page_once_and_answers_from_memory(mirror: Setup) -> None:
    first = mirror.latest()
    mirror.index.reset_log()

    assert mirror.shortcut_taken()

    assert sorted(mirror.index.requests) == [("GET", "/simple/alpha/"), ("GET", "/simple/beta/")]
    assert without(mirror.latest(), *VOLATILE) == without(first, *VOLATILE)


def test_a_hit_over_a_mirror_loads_nothing_of_pm_but_the_shortcut_and_its_asker(mirror: Setup) -> None:
    done = subprocess.run([mirror.argv[0], "-X", "importtime", *mirror.argv[1:]], env=mirror.env, cwd=mirror.cwd,
                          capture_output=True, text=True, timeout=120, check=True)
    assert mirror.latest()["shortcut"] is True
    loaded = _loaded_after(done.stderr, "runpy")
    assert {name for name in loaded if name.split(".")[0] == "pm"} <= LEAN | {"pm.cli._refetch"}, done.stderr
    assert not loaded & {"pathlib", "json", "typing", "dataclasses"}, done.stderr


def test_pages_with_validators_are_asked_conditionally_as_the_full_command_asks(
        tmp_path: Path, make_index: Callable[..., LocalIndex]) -> None:
    """LocalIndex's stock headers (``max-age=0, must-revalidate`` and an ETag): a 304 is the same page."""
    setup = _answered_once(tmp_path, make_index(SPEC))
    setup.index.reset_log()

    assert setup.shortcut_taken()

    assert sorted((t.path, t.status) for t in setup.index.transfers) == [("/simple/alpha/", 304), ("/simple/beta/", 304)]
    setup.index.add_files(build_packages(tmp_path / "newer", {"beta": {"3.0": []}}))
    assert not setup.shortcut_taken()
    assert pins(setup.latest()) == {"alpha": "2.0", "beta": "3.0"}


def test_a_page_with_other_bytes_is_a_miss_and_the_full_command_decides(mirror: Setup, tmp_path: Path) -> None:
    assert mirror.shortcut_taken()
    mirror.index.add_files(build_packages(tmp_path / "newer", {"beta": {"3.0": []}}))

    assert not mirror.shortcut_taken()
    assert pins(mirror.latest()) == {"alpha": "2.0", "beta": "3.0"}
    assert mirror.shortcut_taken(), "the new answer is remembered in turn"


def test_an_index_that_went_away_is_never_answered_from_memory(mirror: Setup) -> None:
    assert mirror.shortcut_taken()
    argv = mirror.argv
    mirror.index.stop()

    done = subprocess.run(argv, env=mirror.env, cwd=mirror.cwd, capture_output=True, text=True, timeout=120,
                          check=False)

    assert done.returncode != 0 and "this is a failure to fetch" in done.stderr, done.stderr
    assert not mirror.latest().get("shortcut") and mirror.latest()["failure"]["kind"] == "index"


def test_pages_asked_with_credentials_are_not_asked_again_by_the_shortcut(mirror: Setup, tmp_path: Path) -> None:
    """Credentials (netrc, or in the index URL) are the full client's business: those answers are
    not remembered, so every such command runs in full."""
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login someone password secret\n")
    netrc.chmod(0o600)
    mirror.env["NETRC"] = str(netrc)
    assert not mirror.shortcut_taken() and not mirror.shortcut_taken()
    del mirror.env["NETRC"]
    url = mirror.index.url.replace("http://", "http://someone:secret@")
    assert not mirror.shortcut_taken("--index-url", url) and not mirror.shortcut_taken("--index-url", url)


@pytest.mark.parametrize("latency", [0.0, 0.001, 0.012, 0.05, 0.2, 5.0])
def test_the_shortcut_fetches_on_as_many_threads_as_pm_s_pool(latency: float, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _refetch.workers(latency) == concurrency.fetch_workers(concurrency.cpu_count(), latency)
    monkeypatch.setenv("HERMES_PM_FETCH_WORKERS", "3")
    assert _refetch.workers(latency) == concurrency.workers_setting() == 3
    assert (_refetch.CPU_PER_ANSWER, _refetch.MAX_WORKERS) == (concurrency.CPU_PER_ANSWER, concurrency.MAX_WORKERS)


@pytest.mark.parametrize("setting", [None, "1000", "1e3", "2.5", "0", "-4", "inf", "nan", "lots"])
def test_the_shortcut_bounds_a_page_as_pm_s_client_does(setting: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    from pm.index import bounds

    if setting is not None:
        monkeypatch.setenv("HERMES_PM_MAX_RESPONSE_BYTES", setting)
    assert _refetch.limit() == bounds.body_bounds()[0] and bounds.MAX_RESPONSE_BYTES == _refetch.MAX_RESPONSE_BYTES
