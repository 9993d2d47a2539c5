"""-q, -v and -vv (issue 24, item 2): -q leaves errors and data only; -v tells the steps with
their timings and how index pages were had; -vv every HTTP request with its status and every
rejected candidate, with the reason."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pm.cli import main
from pm.testing import add_plugin, index_from_spec, isolated_home

SPEC = {
    "sharedlib": {"1.0": [], "2.0": {"requires_python": ">=3.99"}},
    "tinyhttp": {"1.0": ["sharedlib>=1"]},
}
_STAMP = re.compile(r"^\[ *\d+\.\d{3}s\] pm\.[a-z]+: ")


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    with index_from_spec(tmp_path_factory.mktemp("dists"), SPEC) as served:
        yield served


@pytest.fixture
def home(tmp_path: Path, monkeypatch, index) -> Path:
    home = isolated_home(tmp_path, monkeypatch, core=["tinyhttp"], index_url=index.url,
                         config={"plugins": {"enabled": ["x"]}})
    add_plugin(home / "plugins", "x", style="manifest", dependencies=["sharedlib"])
    return home


def _logged(err: str) -> list[str]:
    return [_STAMP.sub("", line) for line in err.splitlines() if _STAMP.match(line)]


def test_v_tells_the_steps_with_timings_and_how_pages_were_had(home, index, capsys):
    assert main(["resolve", "--home", str(home), "-v"]) == 0
    logged = _logged(capsys.readouterr().err)
    assert "index pages: 2 downloaded" in logged
    assert any(re.fullmatch(r"resolve: 2 packages in \d+\.\d{3}s \(resolved now\)", line) for line in logged)
    assert not [line for line in logged if line.startswith("GET ")]  # requests are -vv
    assert main(["resolve", "--home", str(home), "-v", "--refresh"]) == 0
    assert "index pages: 2 revalidated" in _logged(capsys.readouterr().err)


def test_vv_tells_every_request_and_every_rejected_candidate(home, index, capsys):
    assert main(["resolve", "--home", str(home), "-vv"]) == 0
    logged = _logged(capsys.readouterr().err)
    assert f"page {index.url}sharedlib/: downloaded (HTTP 200, " in "\n".join(logged)
    assert any(re.fullmatch(rf"GET {re.escape(index.url)}tinyhttp/ -> 200 \(\d+ bytes, \d+ ms\)", line)
               for line in logged)
    assert "sharedlib 2.0 rejected: requires-python" in logged


def test_without_v_nothing_is_logged_even_after_a_v_run_in_the_same_process(home, capsys):
    assert main(["resolve", "--home", str(home), "-vv"]) == 0
    capsys.readouterr()
    assert main(["resolve", "--home", str(home)]) == 0
    assert _logged(capsys.readouterr().err) == []


def test_q_leaves_data_and_errors_only(home, capsys):
    assert main(["resolve", "--home", str(home), "-q"]) == 0
    out = capsys.readouterr()
    assert out.err == "" and out.out.startswith("resolved 2 packages")  # the table is data
    assert main(["resolve", "--home", str(home), "-q", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["outcome"] == "ok"
    add_plugin(home / "plugins", "x", style="manifest", dependencies=["sharedlib>=2"])
    assert main(["resolve", "--home", str(home), "-q"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("conflict: the selected plugins cannot live together in one environment\n")
    assert "next steps:\n" in err and "receipt:" not in err
