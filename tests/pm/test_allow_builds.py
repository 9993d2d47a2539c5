"""Opt-in sdist builds end to end: refused with the way to allow it, then resolved and installed."""

from __future__ import annotations

import json

import pytest

from pm.cli import main
from pm.env import generations
from pm.testing import LocalIndex, build_packages
from pm.testing.receipts import assert_valid_receipt
from pm.testing.sdists import backend_sdist


@pytest.fixture
def setup(tmp_path, monkeypatch):
    dists = tmp_path / "dists"
    build_packages(dists, {"helper": {"1.0": []}})
    backend_sdist(dists, "onlysrc", "1.0", requires=("helper>=1",))
    home = tmp_path / "home"
    (home / "plugins/p").mkdir(parents=True)
    (home / "plugins/p/plugin.yaml").write_text("pip_dependencies: [onlysrc]\n")
    (home / "config.yaml").write_text("plugins: {enabled: [p]}\n")
    (tmp_path / "core.toml").write_text("[project]\nname='h'\ndependencies=[]\n")
    (tmp_path / "lock.txt").write_text("")
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "none"))
    with LocalIndex([dists]) as index:
        yield home, ["--home", str(home), "--index-url", index.url, "--core", str(tmp_path / "core.toml"),
                     "--core-lock", str(tmp_path / "lock.txt")]


def test_sdist_only_is_refused_with_the_way_to_allow_it(setup, capsys):
    home, argv = setup
    assert main(["resolve", "--json", *argv]) == 3
    receipt = json.loads(capsys.readouterr().out)
    assert_valid_receipt(receipt)
    (finding,) = receipt["conflict"]["findings"]
    assert (finding["kind"], finding["package"]) == ("sdist-only", "onlysrc")
    assert f"hermes pm resolve --allow-build onlysrc --home {home}" in [s["command"] for s in receipt["next_steps"]]


def test_allowed_build_resolves_its_dependencies_and_installs_the_built_wheel(setup, capsys):
    home, argv = setup
    assert main(["sync", "--json", *argv, "--allow-build", "onlysrc"]) == 0
    receipt = json.loads(capsys.readouterr().out)
    assert_valid_receipt(receipt)
    files = {p["name"]: p["file"]["filename"] for p in receipt["resolution"]["packages"]}
    assert files == {"helper": "helper-1.0-py3-none-any.whl", "onlysrc": "onlysrc-1.0.tar.gz"}
    installed = generations.installed_versions(generations.selected(home).site_packages)
    assert {str(n): str(v) for n, v in installed.items()} == {"helper": "1.0", "onlysrc": "1.0"}
    assert main(["check", *argv, "--allow-build", "onlysrc"]) == 0  # same settings, same fingerprint


@pytest.fixture
def policy_home(tmp_path, monkeypatch, request):
    """'p' needs 'onlysrc' (a source distribution only, its PKG-INFO static or not), which needs
    helper>=2; core locks helper 1.0: a hard conflict behind the policy."""
    from pm.testing.wheels import build_sdist

    def make(static: bool, needs: str = "helper>=2"):
        dists = tmp_path / f"dists-{static}-{needs}"
        build_packages(dists, {"helper": {"1.0": [], "2.0": []}})
        build_sdist(dists, "onlysrc", "1.0", requires_dist=[needs], metadata_version="2.2" if static else "2.1")
        home = tmp_path / f"home-{static}-{needs}"
        (home / "plugins/p").mkdir(parents=True)
        (home / "plugins/p/plugin.yaml").write_text("pip_dependencies: [onlysrc]\n")
        (home / "config.yaml").write_text("plugins: {enabled: [p]}\n")
        (tmp_path / "core.toml").write_text("[project]\nname='h'\ndependencies=['helper']\n")
        (tmp_path / "lock.txt").write_text("helper==1.0\n")
        index = LocalIndex([dists]).start()
        request.addfinalizer(index.stop)
        return home, ["--home", str(home), "--index-url", index.url, "--core", str(tmp_path / "core.toml"),
                             "--core-lock", str(tmp_path / "lock.txt")]

    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "none"))
    return make


def _resolved(argv, capsys):
    code = main(["resolve", "--json", *argv])
    receipt = json.loads(capsys.readouterr().out)
    assert_valid_receipt(receipt)
    return code, receipt


def test_a_hard_conflict_behind_a_source_only_package_is_told_first_and_no_build_is_suggested(policy_home, capsys):
    home, argv = policy_home(static=True)
    code, receipt = _resolved(argv, capsys)
    assert code == 3
    assert [f["kind"] for f in receipt["conflict"]["findings"]] == ["conflict"]
    assert "onlysrc 1.0 requires helper>=2" in receipt["conflict"]["message"]
    assert "core locks helper==1.0" in receipt["conflict"]["message"]
    assert not [s for s in receipt["next_steps"] if "--allow-build" in s["command"]]
    assert receipt["warnings"][0].startswith("building from source would not help (checked on the static metadata)")


def test_a_build_that_would_resolve_is_a_checked_step(policy_home, capsys):
    home, argv = policy_home(static=True, needs="helper>=1")
    code, receipt = _resolved(argv, capsys)
    assert code == 3 and receipt["conflict"]["findings"][0]["kind"] == "sdist-only"
    (step,) = [s for s in receipt["next_steps"] if "--allow-build" in s["command"]]
    assert step["checked"] is True and step["why"].startswith("checked: the set resolves with onlysrc built")


def test_a_dynamic_sdist_makes_the_build_step_not_checked(policy_home, capsys):
    home, argv = policy_home(static=False)
    code, receipt = _resolved(argv, capsys)
    assert code == 3 and receipt["conflict"]["findings"][0]["kind"] == "sdist-only"
    (step,) = [s for s in receipt["next_steps"] if "--allow-build" in s["command"]]
    assert step["checked"] is False and step["why"].startswith("not checked: onlysrc's source distribution does "
                                                               "not state its requirements statically")
