"""`hermes pm check`: per-plugin readiness from installed metadata; tampering; changed inputs; --with."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pm.env import generations
from pm.env.readiness import startup_check
from pm.testing import add_plugin

from .helpers import dist_info, edit, latest, pm, remove_dist, run_python


@pytest.fixture
def synced(home: Path, capsys) -> generations.Generation:
    assert pm(capsys, home, "sync").code == 0
    current = generations.selected(home)
    assert current is not None
    return current


def verdicts(data: dict) -> dict[str, list[str]]:
    """plugin name -> unmet requirements, from a check receipt."""
    return {v["name"]: v["unmet"] for v in data["readiness"]["plugins"]}


def test_ready_generation_exits_0_with_a_verdict_per_origin(home: Path, synced, capsys) -> None:
    result = pm(capsys, home, "check")
    assert result.code == 0
    assert result.out == (f"ready: generation {synced.id}\n"
                          "ORIGIN  VERDICT  REASON\n"
                          "core    ready    1 requirement satisfied\n"
                          "notes   ready    1 requirement satisfied\n"
                          "search  ready    1 requirement satisfied\n")
    receipt = latest(home)
    assert receipt["kind"] == "check" and receipt["outcome"] == "ok" and receipt["exit_code"] == 0
    assert verdicts(receipt) == {"core": [], "notes": [], "search": []}
    assert startup_check(home).ready


def test_no_generation_is_not_ready(home: Path, capsys) -> None:
    result = pm(capsys, home, "check")
    assert (result.code, result.out) == (4, "not ready: no generation is selected; run `hermes pm sync`\n")
    assert latest(home)["next_steps"] == [{"command": f"hermes pm sync --home {home}",
                                          "why": "build a generation that satisfies every declared requirement"}]


def test_a_removed_package_names_the_plugin_and_requirement_and_sync_rebuilds(home: Path, synced, capsys) -> None:
    remove_dist(synced, "delta")
    result = pm(capsys, home, "check", "--json")
    assert result.code == 4 and result.data["outcome"] == "not-ready"
    assert verdicts(result.data) == {"core": [], "notes": [], "search": [
        "requires gamma[fast]==1.0: extra 'fast' requires delta>=1; installed: not installed"]}
    assert result.data["readiness"]["inputs_changed"] is False
    assert not startup_check(home).ready

    rebuilt = pm(capsys, home, "sync", "--json").data
    assert rebuilt["warnings"] == [f"generation {synced.id} is damaged (delta==1.0 is missing); building a new one"]
    assert rebuilt["generation"]["id"] != synced.id
    assert pm(capsys, home, "check").code == 0


def test_another_version_installed_with_uv_is_named(home: Path, synced, capsys, index, uv_bin, uv_env) -> None:
    subprocess.run([uv_bin, "pip", "install", "--python", str(synced.python), "--index-url", index.url,
                    "--no-deps", "alpha==2.0"], env=uv_env, check=True, capture_output=True)
    result = pm(capsys, home, "check")
    assert result.code == 4
    assert result.out == (f"not ready: generation {synced.id}\n"
                          "ORIGIN  VERDICT    REASON\n"
                          "core    NOT READY  requires alpha<2; installed: alpha 2.0\n"
                          "notes   ready      1 requirement satisfied\n"
                          "search  ready      1 requirement satisfied\n")
    assert pm(capsys, home, "sync").code == 0
    assert generations.selected(home).id != synced.id and pm(capsys, home, "check").code == 0


def test_a_missing_dependency_of_a_dependency_is_charged_to_the_plugin_that_pulls_it(home: Path, synced, capsys) -> None:
    remove_dist(synced, "alpha")
    result = pm(capsys, home, "check", "--json")
    assert result.code == 4
    assert verdicts(result.data) == {"core": ["requires alpha<2; installed: not installed"],
                                     "notes": ["beta 1.0 requires alpha>=1; installed: not installed"],
                                     "search": []}


def test_an_importable_module_at_a_version_outside_the_range_is_not_ready(home: Path, synced, capsys) -> None:
    old = dist_info(synced, "beta")
    planted = old.with_name("beta-0.5.dist-info")
    old.rename(planted)
    metadata = planted / "METADATA"
    text = metadata.read_text().replace("Version: 1.0", "Version: 0.5")
    metadata.unlink()  # the installed file is a hard link into uv's cache: never write through it
    metadata.write_text(text)
    assert run_python(synced, "import beta; print(beta.__version__)") == "1.0"
    result = pm(capsys, home, "check", "--json")
    assert result.code == 4
    assert verdicts(result.data) == {"core": [], "notes": ["requires beta>=1; installed: beta 0.5"], "search": []}


def test_changed_declarations_are_not_ready_until_sync(home: Path, synced, capsys) -> None:
    edit(home / "plugins" / "notes" / "pyproject.toml", '"beta>=1"', '"beta>=1", "epsilon"')
    result = pm(capsys, home, "check", "--json")
    assert result.code == 4
    readiness = result.data["readiness"]
    assert readiness["inputs_changed"] is True
    assert readiness["problems"] == ["inputs changed; run `hermes pm sync`"]
    notes = next(v for v in readiness["plugins"] if v["name"] == "notes")
    assert notes["changed"] == (f"declaration {home / 'plugins' / 'notes' / 'pyproject.toml'} changed since "
                                f"generation {synced.id} was built")
    assert notes["unmet"] == ["requires epsilon; installed: not installed"]
    assert [v["ready"] for v in readiness["plugins"]] == [True, False, True]
    assert pm(capsys, home, "sync").code == 0
    assert pm(capsys, home, "check").code == 0


def test_check_with_a_candidate(home: Path, synced, capsys) -> None:
    plugins = home / "plugins"
    add_plugin(plugins, "fits", style="manifest", dependencies=["alpha>=1"])
    add_plugin(plugins, "fresh", style="manifest", dependencies=["epsilon"])
    add_plugin(plugins, "clash", style="manifest", dependencies=["alpha>=2"])

    fits = pm(capsys, home, "check", "--with", "fits")
    assert fits.code == 0
    assert fits.out.endswith("plugin 'fits' (not enabled yet): every requirement is installed in the "
                             "selected generation\n")

    fresh = pm(capsys, home, "check", "--with", "fresh", "--json")
    assert fresh.code == 4 and fresh.data["candidate"] == "fresh"
    candidate = fresh.data["readiness"]["candidate"]
    assert candidate | {"resolve_receipt": None} == {
        "name": "fresh", "enabled": False, "ready": False, "unmet": ["requires epsilon; installed: not installed"],
        "would_resolve": True, "resolve_receipt": None}
    assert fresh.data["readiness"]["ready"] is True  # the selection itself is still ready

    clash = pm(capsys, home, "check", "--with", "clash")
    assert clash.code == 4
    assert clash.out.endswith("plugin 'clash': not ready: requires alpha>=2; installed: alpha 1.0\n"
                              "preparing 'clash' would NOT resolve (see the conflict above)\n")
    assert generations.read_state(home)["selected"] == synced.id
    assert generations.all_ids(home) == [synced.id]


def test_check_with_an_unknown_plugin_fails_clearly(home: Path, synced, capsys) -> None:
    result = pm(capsys, home, "check", "--with", "nope")
    assert result.code == 1
    assert result.err.splitlines()[0] == f"error: no plugin named 'nope' in {home} or its profiles; did you mean 'notes'?"


def test_an_enabled_plugin_with_a_broken_declaration_is_not_ready_and_never_silent(tmp_path, capsys):
    """A typo in an enabled plugin's declaration must not make it vanish while check says ready."""
    from pm.cli import main as pm_main

    home = tmp_path / "home"
    (home / "plugins/weather").mkdir(parents=True)
    (home / "plugins/weather/plugin.yaml").write_text("pip_dependencies: ['sunrise-calc=>0.3']\n")
    (home / "config.yaml").write_text("plugins: {enabled: [weather]}\n")
    (tmp_path / "core.toml").write_text("[project]\nname='h'\ndependencies=[]\n")
    (tmp_path / "lock.txt").write_text("")
    argv = ["--home", str(home), "--no-index", "--core", str(tmp_path / "core.toml"),
            "--core-lock", str(tmp_path / "lock.txt")]
    assert pm_main(["sync", *argv]) == 1  # issue 32: a typo fails the sync (pm.ops.invalid)
    assert "plugin 'weather': " in capsys.readouterr().err
    assert pm_main(["sync", "--skip-invalid", *argv]) == 0
    err = capsys.readouterr().err
    assert "plugin 'weather' is enabled but its declaration cannot be read; left out of the environment as " \
           "--skip-invalid asks: " in err
    assert pm_main(["check", *argv]) == 4
    out = capsys.readouterr().out
    assert "weather" in out and "enabled but invalid, so not installed:" in out


def test_another_index_url_does_not_make_installed_requirements_unready(home, capsys):
    """Readiness judges declarations against what is installed; resolution settings are not
    declarations (sync still re-resolves for them)."""
    from pm.cli import main as pm_main

    assert pm_main(["sync", "--home", str(home)]) == 0
    capsys.readouterr()
    assert pm_main(["check", "--home", str(home), "--index-url", "http://127.0.0.1:9/simple/"]) == 0


def test_a_core_package_moved_off_its_lock_is_named_against_the_lock(home: Path, capsys, index, uv_bin,
                                                                     uv_env, tmp_path: Path) -> None:
    """Core's lock binds (invariant 7): an installed core package at another version than the lock
    says is not ready, and the reason names the lock, not only core's range."""
    lock = tmp_path / "core-lock.txt"
    lock.write_text("alpha==1.0\n")
    assert pm(capsys, home, "sync", "--core-lock", str(lock)).code == 0
    synced = generations.selected(home)
    assert synced is not None
    subprocess.run([uv_bin, "pip", "install", "--python", str(synced.python), "--index-url", index.url,
                    "--no-deps", "alpha==2.0"], env=uv_env, check=True, capture_output=True)
    result = pm(capsys, home, "check", "--core-lock", str(lock), "--json")
    assert result.code == 4
    assert verdicts(result.data)["core"] == ["requires alpha<2; installed: alpha 2.0",
                                             "core locks alpha==1.0; installed: alpha 2.0"]
