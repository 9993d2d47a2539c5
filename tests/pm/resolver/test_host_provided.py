"""The host is provided, not installed (issue 36, finding 6): a plugin whose package requires the
host (``hermes-agent``, as two real plugins' packages do) gets the running host, never a second
copy from the index; a requirement the running host does not meet is refused with the proof."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pm import __version__
from pm.cli import main
from pm.env import generations
from pm.testing import add_plugin, index_from_spec, isolated_home
from pm.testing.receipts import assert_valid_receipt

#: The index also offers hermes-agent itself (as PyPI does): it must never be taken from there.
SPEC = {
    "hermes-agent": {"0.7.0": [], "0.19.0": [], "0.20.0": []},
    "memo-client": {"1.0": ["hermes-agent>=0.1", "tinylib"]},
    "needs-new-host": {"1.0": ["hermes-agent>=0.19"]},
    "needs-new-host-or-old": {"1.0": ["hermes-agent>=0.19"], "0.9": ["hermes-agent>=0.1"]},
    "tinylib": {"1.0": []},
}


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    with index_from_spec(tmp_path_factory.mktemp("dists"), SPEC) as served:
        yield served


def _home(tmp_path: Path, monkeypatch, index, plugins: dict[str, list[str]]) -> Path:
    home = isolated_home(tmp_path, monkeypatch, core=[], index_url=index.url,
                         config={"plugins": {"enabled": list(plugins)}})
    for name, requirements in plugins.items():
        add_plugin(home / "plugins", name, style="manifest", dependencies=requirements)
    return home


def _run(capsys, *argv: str, code: int) -> dict[str, Any]:
    assert main([*argv, "--json"]) == code, capsys.readouterr().err
    receipt = json.loads(capsys.readouterr().out)
    assert_valid_receipt(receipt)
    return receipt


def test_a_transitive_requirement_on_the_host_is_met_by_the_running_host(tmp_path, monkeypatch, index, capsys):
    home = _home(tmp_path, monkeypatch, index, {"memo": ["memo-client"]})
    receipt = _run(capsys, "sync", "--home", str(home), code=0)
    assert {p["name"]: p["version"] for p in receipt["resolution"]["packages"]} == {"memo-client": "1.0",
                                                                                  "tinylib": "1.0"}
    generation = generations.selected(home)
    assert generation is not None
    site = generation.site_packages
    assert [p.name for p in site.glob("hermes_agent*")] == []  # no second host in the plugin layer
    assert (site / "memo_client-1.0.dist-info").is_dir()
    assert _run(capsys, "check", "--home", str(home), code=0)["outcome"] == "ok"  # ready, with the host outside


def test_a_transitive_requirement_the_running_host_does_not_meet_is_refused_naming_it(
        tmp_path, monkeypatch, index, capsys):
    home = _home(tmp_path, monkeypatch, index, {"fresh": ["needs-new-host"]})
    receipt = _run(capsys, "resolve", "--home", str(home), code=3)
    assert receipt["outcome"] == "conflict" and receipt["conflict"]["plugins"] == ["fresh"]
    declared = home / "plugins" / "fresh" / "plugin.yaml"
    assert receipt["conflict"]["message"] == (
        f"plugin 'fresh' ({declared}) requires needs-new-host; needs-new-host 1.0 requires hermes-agent>=0.19; "
        f"but no version of hermes-agent satisfies it (the running host provides hermes-agent {__version__}; "
        "pm never installs another). Plugins involved: 'fresh'.")


def test_the_resolver_goes_back_to_a_release_the_running_host_meets(tmp_path, monkeypatch, index, capsys):
    home = _home(tmp_path, monkeypatch, index, {"either": ["needs-new-host-or-old"]})
    receipt = _run(capsys, "resolve", "--home", str(home), code=0)
    assert {p["name"]: p["version"] for p in receipt["resolution"]["packages"]} == {"needs-new-host-or-old": "0.9"}


def test_a_declared_requirement_on_the_host_is_still_judged_by_the_selection(tmp_path, monkeypatch, index, capsys):
    home = _home(tmp_path, monkeypatch, index, {"old": ["hermes-agent>=0.1", "tinylib"],
                                                "new": ["hermes-agent>=0.19"]})
    receipt = _run(capsys, "resolve", "--home", str(home), code=0)
    assert {p["name"] for p in receipt["resolution"]["packages"]} == {"tinylib"}
    plugins = {p["name"]: p for p in receipt["inputs"]["plugins"]}
    assert plugins["new"]["status"] == "sits-out"
    assert plugins["new"]["reason"] == f"requires 'hermes-agent>=0.19' but this host is {__version__}"


def test_the_hosts_stand_in_is_one_version_never_fetched() -> None:
    from packaging.utils import canonicalize_name

    from pm.resolver.host import HOST_VERSION, host_link, is_host, is_host_link

    assert is_host("Hermes_Agent") and is_host("hermes-pm") and not is_host("hermes-agent-tools")
    link = host_link(canonicalize_name("hermes-agent"))
    assert (link.name, link.version, link.is_wheel, is_host_link(link)) == ("hermes-agent", HOST_VERSION, True, True)
    assert link.url == f"hermes-host:hermes-agent=={__version__}" and link.sha256 is None
