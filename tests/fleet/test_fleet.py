"""Many homes, one index: pm behind the servers teams really run (opt-in: ``scripts/test -m fleet``).

A real devpi-server on 127.0.0.1 mirrors a real local index (PyPI's headers); 16 homes, each with
its own pm and uv caches as on 16 machines, sync through it at once, then one home syncs 20
times in a row; the mirror is restarted under a running sync. A real pypiserver serves the same
wheels as a private index behind basic auth. The servers are installed from PyPI into a venv of
their own the first time (see pm.testing.servers), never into the test environment.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from uv import find_uv_bin

from pm.testing import NO_TOOL_FILES, LocalIndex, add_plugin, build_packages, make_home
from pm.testing.index import PRESETS
from pm.testing.servers import Devpi, PypiServer, server_venv

pytestmark = pytest.mark.fleet

SPEC = {
    "alpha": {"1.0": ["beta>=1"], "2.0": ["beta>=2", "gamma"]},
    "beta": {"1.0": [], "2.0": [], "2.1": []},
    "gamma": {"0.9": [], "1.0": ["delta"]},
    "delta": {"1.0": []},
    "epsilon": {"3.0": ["delta>=1"]},
}
HOMES = 16
#: A project page's path, on the upstream index (/simple/x/) and on devpi (/root/mirror/+simple/x/).
PAGE = re.compile(r"simple/([^/]+)/?$")


@pytest.fixture(scope="module")
def venv() -> Path:
    folder = Path(os.environ.get("HERMES_PM_FLEET_DIR") or Path(tempfile.gettempdir()) / "hermes-pm-fleet")
    folder.mkdir(parents=True, exist_ok=True)
    return server_venv(folder, str(find_uv_bin()), sys.executable)


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("wheels")
    build_packages(folder, SPEC)
    return folder


@pytest.fixture
def upstream(wheels: Path) -> Iterator[LocalIndex]:
    with LocalIndex([wheels], **PRESETS["pypi"]) as index:
        yield index


def make_fleet_home(folder: Path, n: int) -> Path:
    """A home like every other of the fleet: two plugins (one memory provider, one tool)."""
    home = make_home(folder / f"home-{n:02d}", config={"plugins": {"enabled": ["notes", "tools"]}})
    add_plugin(home / "plugins", "notes", style="pyproject", dependencies=["alpha>=2"])
    add_plugin(home / "plugins", "tools", style="manifest", dependencies=["epsilon", "beta<2.1"])
    return home


def pm_env(folder: Path, n: int) -> dict[str, str]:
    """The environment of home ``n``'s machine: its own pm and uv caches."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "UV_", "PIP_"))}
    return env | NO_TOOL_FILES | {"HERMES_PM_CACHE_DIR": str(folder / f"cache-{n:02d}"),
                  "HERMES_BUNDLED_PLUGINS": str(folder / "no-bundled"), "NO_COLOR": "1"}


def sync(home: Path, index_url: str, env: dict[str, str]) -> subprocess.Popen[str]:
    core = home.parent / "core.toml"
    if not core.exists():
        core.write_text("[project]\nname = 'host'\ndependencies = ['delta']\n")
        (home.parent / "lock.txt").write_text("")
    argv = [sys.executable, "-m", "pm", "sync", "--home", str(home), "--index-url", index_url, "--core", str(core),
            "--core-lock", str(home.parent / "lock.txt")]
    return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finished(process: subprocess.Popen[str], home: Path) -> tuple[int, dict[str, Any]]:
    _, err = process.communicate(timeout=300)
    receipt = json.loads((home / "pm" / "receipts" / "latest.json").read_text())
    assert "Traceback" not in err, err
    return process.returncode, receipt


def pins(receipt: dict[str, Any]) -> dict[str, str]:
    return {p["name"]: p["version"] for p in receipt["resolution"]["packages"]}


def pages(paths: list[str]) -> Counter[str]:
    """Requests for project pages, by project."""
    return Counter(m.group(1) for p in paths if (m := PAGE.search(p)))


def test_sixteen_homes_through_one_devpi_mirror(tmp_path: Path, venv: Path, upstream: LocalIndex) -> None:
    """All at once against a cold mirror. devpi-server (6.20) answers the concurrent first requests
    for a project with an empty page while it is still fetching that project upstream: the homes
    that got one stop with an index failure naming the project with nothing offered (exit 1, never
    a conflict: missing-project when a plugin asked for it, not-offered when core did, which
    blames the sources), and their next run, against the now warm mirror, resolves like the rest."""
    with Devpi(venv, tmp_path / "devpi", upstream.url) as mirror:
        homes = [make_fleet_home(tmp_path, n) for n in range(HOMES)]
        started = time.monotonic()
        runs = [sync(home, mirror.index_url, pm_env(tmp_path, n)) for n, home in enumerate(homes)]
        results = [finished(run, home) for run, home in zip(runs, homes, strict=True)]
        took = time.monotonic() - started
        cold = [n for n, (code, _) in enumerate(results) if code != 0]
        for n in cold:
            code, receipt = results[n]
            failure = receipt["failure"]
            assert code == 1 and failure["kind"] in ("missing-project", "not-offered") and receipt["conflict"] is None
            assert failure["projects"] and all(not p.get("offered") for p in failure["projects"]), failure
        results = [finished(sync(homes[n], mirror.index_url, pm_env(tmp_path, n)), homes[n]) if n in cold
                   else results[n] for n in range(HOMES)]

        assert [code for code, _ in results] == [0] * HOMES, [r.get("failure") for _, r in results]
        answers = {json.dumps(pins(receipt), sort_keys=True) for _, receipt in results}
        assert len(answers) == 1, answers
        assert pins(results[0][1]) == {"alpha": "2.0", "beta": "2.0", "gamma": "1.0", "delta": "1.0",
                                       "epsilon": "3.0"}
        at_mirror, at_upstream = pages(mirror.requests()), pages([p for _, p in upstream.requests])
        # every home asked the mirror for the pages it needed; the mirror asked upstream far less
        assert all(count >= HOMES for name, count in at_mirror.items() if name in SPEC), at_mirror
        assert sum(at_upstream.values()) < sum(at_mirror[name] for name in SPEC) / 4, (at_upstream, at_mirror)
        print(f"\n{HOMES} homes, cold, at once through devpi: {took:.1f} s, {len(cold)} met an empty page and "
              f"resolved on their next run; page requests: mirror {sum(at_mirror[n] for n in SPEC)}, "
              f"upstream {sum(at_upstream.values())}")


def test_a_fleet_behind_a_warm_mirror_agrees_at_once(tmp_path: Path, venv: Path, upstream: LocalIndex) -> None:
    """The usual rollout: one machine first (it warms the mirror), then the rest at once."""
    with Devpi(venv, tmp_path / "devpi", upstream.url) as mirror:
        homes = [make_fleet_home(tmp_path, n) for n in range(HOMES)]
        first = finished(sync(homes[0], mirror.index_url, pm_env(tmp_path, 0)), homes[0])
        upstream_after_first = len(upstream.requests)
        runs = [sync(home, mirror.index_url, pm_env(tmp_path, n)) for n, home in enumerate(homes) if n]
        results = [first] + [finished(run, home) for run, home in zip(runs, homes[1:], strict=True)]
        assert [code for code, _ in results] == [0] * HOMES, [r.get("failure") for _, r in results]
        assert len({json.dumps(pins(r), sort_keys=True) for _, r in results}) == 1
        assert pages([p for _, p in upstream.requests[upstream_after_first:]]) == Counter()  # within expiry


def test_one_home_twenty_times_makes_no_request_once_in_sync(tmp_path: Path, venv: Path,
                                                             upstream: LocalIndex) -> None:
    with Devpi(venv, tmp_path / "devpi", upstream.url) as mirror:
        home = make_fleet_home(tmp_path, 0)
        env = pm_env(tmp_path, 0)
        assert finished(sync(home, mirror.index_url, env), home)[0] == 0
        before = len(mirror.requests())
        for _ in range(20):
            code, receipt = finished(sync(home, mirror.index_url, env), home)
            assert code == 0 and receipt["message"] == "already in sync"
        assert mirror.requests()[before:] == []  # a home in sync asks nothing of the index


def test_a_mirror_restarted_under_a_sync_is_an_index_failure_and_the_next_run_recovers(
        tmp_path: Path, venv: Path, upstream: LocalIndex) -> None:
    upstream.delay = 0.4  # upstream is slow: the sync is still reading pages when the mirror goes
    with Devpi(venv, tmp_path / "devpi", upstream.url) as mirror:
        home = make_fleet_home(tmp_path, 0)
        env = pm_env(tmp_path, 0)
        running = sync(home, mirror.index_url, env)
        deadline = time.monotonic() + 60
        while not any("/+simple/" in p for p in mirror.requests()) and time.monotonic() < deadline:
            time.sleep(0.05)
        mirror.stop()
        code, receipt = finished(running, home)
        assert code == 1 and receipt["outcome"] == "failed" and receipt["failure"]["kind"] == "index", receipt
        assert receipt["conflict"] is None
        assert mirror.index_url.split("/root/")[0] in receipt["failure"]["message"]

        upstream.delay = 0.0
        mirror.start()
        code, receipt = finished(sync(home, mirror.index_url, env), home)
        assert code == 0 and receipt["generation"]["selected"] is True


def test_sixteen_homes_through_pypiserver_with_basic_auth(tmp_path: Path, venv: Path, wheels: Path) -> None:
    with PypiServer(venv, tmp_path / "pypiserver", wheels) as index:
        homes = [make_fleet_home(tmp_path, n) for n in range(HOMES)]
        runs = [sync(home, index.index_url, pm_env(tmp_path, n)) for n, home in enumerate(homes)]
        results = [finished(run, home) for run, home in zip(runs, homes, strict=True)]
        assert [code for code, _ in results] == [0] * HOMES, [r.get("failure") for _, r in results]
        assert len({json.dumps(pins(r), sort_keys=True) for _, r in results}) == 1
        for home in homes:  # the password reaches uv, never a receipt or a generation's record
            for path in [*(home / "pm").rglob("*.json"), *(home / "pm").rglob("requirements.txt")]:
                assert index.password not in path.read_text(errors="replace"), path

        wrong = index.index_url.replace(index.password, "wrong")
        fresh = make_fleet_home(tmp_path / "wrong", 0)
        code, receipt = finished(sync(fresh, wrong, pm_env(tmp_path / "wrong", 0)), fresh)
        assert code == 1 and receipt["failure"]["kind"] == "index" and receipt["conflict"] is None
        assert "HTTP 403" in receipt["failure"]["message"]  # pypiserver's answer to a wrong password
        assert "wrong" not in receipt["failure"]["message"]
