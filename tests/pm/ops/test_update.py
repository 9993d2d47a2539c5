"""Catalog installs, `hermes update`, and the start-up lazy install (issue 8)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from agent.cli import main
from pm.env import generations
from pm.ops import Notices
from pm.ops.providers import provider_remedy
from pm.ops.update import lazy_install
from pm.testing.receipts import assert_valid_receipt

from .conftest import plugin


def catalog(env: Path, repo: Path, commit: str, removed: tuple[str, ...] = ()) -> Path:
    path = env / "catalog.json"
    path.write_text(json.dumps({"entries": [{"name": "honcho", "kind": "memory", "subdir": "providers/honcho",
                                             "source": {"git": str(repo), "commit": commit}}],
                                "removed": list(removed)}))
    return path


def home_with_provider(env: Path, catalog_file: Path, extra: str = "") -> Path:
    home = env / "home"
    (home / "plugins").mkdir(parents=True)
    (home / "config.yaml").write_text(f"memory:\n  provider: honcho\npm:\n  catalog: {catalog_file}\n{extra}")
    return home


def test_install_from_local_git_at_pinned_commit_records_provenance(env, provider_repo):
    repo, commit = provider_repo
    home = home_with_provider(env, catalog(env, repo, commit))
    assert main(["plugins", "install", "honcho", "--home", str(home)]) == 0
    assert (home / "plugins/honcho/plugin.yaml").is_file()
    assert not (home / "plugins/honcho/.git").exists()
    provenance = json.loads((home / "plugins/.install-metadata.json").read_text())["honcho"]
    assert (provenance["source"], provenance["git"], provenance["commit"]) == ("catalog", str(repo), commit)
    assert [p.name for p in (home / "plugins").iterdir() if p.name.startswith(".staging")] == []


def test_wrong_commit_is_refused_and_nothing_lands(env, provider_repo, capsys):
    repo, _ = provider_repo
    home = home_with_provider(env, catalog(env, repo, "0" * 40))
    assert main(["plugins", "install", "honcho", "--home", str(home)]) == 1
    assert f"{repo}: commit {'0' * 40} is not in the repository; refused" in capsys.readouterr().err
    assert sorted(p.name for p in (home / "plugins").iterdir()) == []


def test_removed_entry_is_refused(env, provider_repo, capsys):
    repo, commit = provider_repo
    cat = catalog(env, repo, commit, removed=("honcho",))
    home = home_with_provider(env, cat)
    assert main(["plugins", "install", "honcho", "--home", str(home)]) == 1
    assert f"{cat}: plugin 'honcho' was removed from the catalog and cannot be installed" in capsys.readouterr().err


def test_existing_different_plugin_needs_force(env, provider_repo, tmp_path):
    repo, commit = provider_repo
    home = home_with_provider(env, catalog(env, repo, commit))
    plugin(home / "plugins", "honcho", ["sharedlib"], kind="memory")
    assert main(["plugins", "install", "honcho", "--home", str(home)]) == 1
    assert "sharedlib" in (home / "plugins/honcho/plugin.yaml").read_text()
    assert main(["plugins", "install", "honcho", "--force", "--home", str(home)]) == 0
    assert "extra-lib" in (home / "plugins/honcho/plugin.yaml").read_text()
    assert [p.name for p in (home / "plugins").iterdir() if p.name.startswith(".")] == [".install-metadata.json"]


def test_update_installs_the_missing_provider_and_syncs(env, provider_repo, capsys):
    repo, commit = provider_repo
    home = home_with_provider(env, catalog(env, repo, commit))
    assert main(["pm", "sync", "--home", str(home)]) == 0
    (step,) = json.loads((home / "pm/receipts/latest.json").read_text())["next_steps"]
    assert step["command"] == shlex.join(["hermes", "update", "--home", str(home)])  # the one to run, in the receipt
    assert main(shlex.split(step["command"])[1:]) == 0
    assert f"installed memory provider 'honcho' ({commit})" in capsys.readouterr().err
    receipt = json.loads((home / "pm/receipts/latest.json").read_text())
    assert_valid_receipt(receipt)
    assert (receipt["kind"], receipt["outcome"], receipt["installed"]) == ("update", "ok", ["honcho"])
    pins = {p["name"] for p in generations.selected(home).record["resolution"]["packages"]}
    assert pins == {"extra-lib"}


def test_lazy_install_off_warns_and_installs_nothing_while_update_installs(env, provider_repo):
    repo, commit = provider_repo
    home = home_with_provider(env, catalog(env, repo, commit))
    told: list[str] = []
    assert lazy_install(home, Notices(told.append)) == []
    assert told == [f"WARNING: memory provider 'honcho' (configured in {home / 'config.yaml'}) is not installed; "
                    "the agent will run WITHOUT its memory. Run: hermes update"]
    assert not (home / "plugins/honcho").exists()
    assert main(["update", "--home", str(home)]) == 0
    assert (home / "plugins/honcho/plugin.yaml").is_file()


def test_lazy_install_on_installs_once_per_process(env, provider_repo, monkeypatch):
    repo, commit = provider_repo
    home = home_with_provider(env, catalog(env, repo, commit), "security:\n  allow_lazy_installs: true\n")
    told: list[str] = []
    assert lazy_install(home, Notices(told.append)) == ["honcho"]
    assert lazy_install(home, Notices(told.append)) == []
    assert told[0] == f"{home}: installed memory provider 'honcho' ({commit})"
    assert generations.selected(home) is not None  # installed and admitted: a generation holds extra-lib
    assert main(["pm", "check", "--home", str(home)]) == 0


def test_disable_lazy_installs_variable_wins(env, provider_repo, monkeypatch):
    repo, commit = provider_repo
    home = home_with_provider(env, catalog(env, repo, commit), "security:\n  allow_lazy_installs: true\n")
    monkeypatch.setenv("HERMES_DISABLE_LAZY_INSTALLS", "1")
    told: list[str] = []
    assert lazy_install(home, Notices(told.append)) == []
    assert not (home / "plugins/honcho").exists()
    assert told[0].startswith("WARNING: memory provider 'honcho'")


def test_update_whose_union_no_longer_resolves_changes_nothing_and_names_plugins(env, capsys):
    home = env / "home"
    plugin(home / "plugins", "a", ["sharedlib==1.*"])
    plugin(home / "plugins", "mem", ["sharedlib>=1"], kind="memory")
    (home / "config.yaml").write_text("memory: {provider: mem}\nplugins: {enabled: [a]}\n")
    assert main(["pm", "sync", "--home", str(home)]) == 0
    config, state = (home / "config.yaml").read_bytes(), generations.read_state(home)
    (home / "plugins/mem/plugin.yaml").write_text(json.dumps({"name": "mem", "kind": "memory",
                                                              "pip_dependencies": ["sharedlib>=2"]}))
    assert main(["update", "--home", str(home)]) == 3
    assert (home / "config.yaml").read_bytes() == config
    assert generations.read_state(home) == state
    receipt = json.loads((home / "pm/receipts/latest.json").read_text())
    assert_valid_receipt(receipt)
    assert (receipt["kind"], receipt["outcome"]) == ("update", "conflict")
    assert sorted(receipt["conflict"]["plugins"]) == ["a", "mem"]
    assert {s["command"] for s in receipt["next_steps"]} >= {f"hermes plugins disable a --home {home}",
                                                              f"hermes plugins disable mem --home {home}"}
    err = capsys.readouterr().err
    assert "!!! memory provider 'mem' collides" in err
    assert main(["pm", "check", "--home", str(home)]) == 4


def test_same_plugin_enabled_in_two_profiles_is_one_member(env):
    home = env / "home"
    plugin(home / "plugins", "a", ["sharedlib==1.*"])
    (home / "config.yaml").write_text("plugins: {enabled: [a]}\n")
    work = home / "profiles" / "work"
    plugin(work / "plugins", "a", ["sharedlib==1.*"])
    (work / "config.yaml").write_text("plugins: {enabled: [a]}\n")
    assert main(["update", "--home", str(home)]) == 0
    members = [p["name"] for p in json.loads((home / "pm/receipts/latest.json").read_text())["inputs"]["plugins"]
               if p["status"] == "member"]
    assert members == ["a", "a"]  # two roots (one per profile), one requirement set, no clash


def test_remove_refuses_an_enabled_plugin_and_only_unlinks_a_symlinked_one(env, tmp_path):
    home = env / "home"
    plugin(home / "plugins", "a", ["sharedlib==1.*"])
    outside = plugin(tmp_path / "elsewhere", "linked", ["sharedlib"])
    (home / "plugins" / "linked").symlink_to(outside)
    (home / "config.yaml").write_text("plugins: {enabled: [a]}\n")
    assert main(["plugins", "remove", "a", "--home", str(home)]) == 1
    assert (home / "plugins/a/plugin.yaml").is_file()
    assert main(["plugins", "remove", "linked", "--home", str(home)]) == 0
    assert not (home / "plugins/linked").exists() and (outside / "plugin.yaml").is_file()
    receipt = json.loads((home / "pm/receipts/latest.json").read_text())
    assert_valid_receipt(receipt)
    assert (receipt["kind"], receipt["outcome"], receipt["candidate"]) == ("remove", "ok", "linked")
    assert sorted(p.name for p in (home / "plugins").iterdir() if not p.name.startswith(".")) == ["a"]


def test_a_catalog_subdir_that_does_not_exist_fails_the_update(env, provider_repo, capsys):
    repo, commit = provider_repo
    cat = env / "catalog.json"
    cat.write_text(json.dumps({"entries": [{"name": "honcho", "kind": "memory", "subdir": "providers/nope",
                                            "source": {"git": str(repo), "commit": commit}}]}))
    home = home_with_provider(env, cat)
    assert main(["update", "--home", str(home)]) == 1
    receipt = json.loads((home / "pm/receipts/latest.json").read_text())
    assert_valid_receipt(receipt)
    # an install the catalog refuses reads the same from update as from plugins install (pm.ops.failures)
    assert (receipt["kind"], receipt["outcome"], receipt["failure"]["kind"]) == ("update", "refused", "install")
    assert receipt["failure"]["message"] == (
        f"memory provider 'honcho' for {home}: {cat}: entry 'honcho': subdir 'providers/nope' does not exist in "
        f"{repo} at commit {commit}; refused")


def test_installing_a_folder_that_holds_the_plugins_folder_is_refused(env, capsys):
    home = env / "home"
    plugin(home / "plugins", "a", ["sharedlib"])
    (home / "config.yaml").write_text("{}\n")
    assert main(["plugins", "install", str(home), "--home", str(home)]) == 1
    assert (f"{home}: holds {home / 'plugins'} itself; refusing to install a folder that contains the plugins "
            "folder") in capsys.readouterr().err
    assert sorted(p.name for p in (home / "plugins").iterdir()) == ["a"]


def test_disabling_the_memory_provider_warns_loudly(env, capsys):
    home = env / "home"
    plugin(home / "plugins", "mem", ["sharedlib>=1"], kind="memory")
    (home / "config.yaml").write_text("memory: {provider: mem}\n")
    assert main(["plugins", "disable", "mem", "--home", str(home)]) == 0
    assert "!!! MEMORY PROVIDER 'mem' is memory.provider in" in capsys.readouterr().err
    receipt = json.loads((home / "pm/receipts/latest.json").read_text())
    assert any("runs WITHOUT its memory" in w for w in receipt["warnings"])


def test_a_provider_installed_as_an_entry_point_is_not_missing(env, tmp_path, monkeypatch):
    """Entry-point providers are installed packages: update must not go to the catalog for them."""
    from agent.testing import install_dist
    from pm.ops.update import missing_providers

    site = tmp_path / "site"
    install_dist(site, "acme-memory", "1.0", {"acme_memory/__init__.py": ""},
                 entry_points={"acme": "acme_memory:register"})
    monkeypatch.syspath_prepend(str(site))
    home = env / "home"
    (home / "plugins").mkdir(parents=True)
    (home / "config.yaml").write_text("memory: {provider: acme}\n")
    assert missing_providers(home) == []


def test_the_update_hint_is_given_only_for_a_provider_the_catalog_has(env, provider_repo, capsys):
    """Issue 32, finding 6: "run `hermes update`" was printed for a provider the catalog does not
    have, and `hermes update` then exited 0 with memory still missing."""
    repo, commit = provider_repo
    home = home_with_provider(env, catalog(env, repo, commit))
    (home / "config.yaml").write_text((home / "config.yaml").read_text().replace("provider: honcho", "provider: mem0"))
    assert main(["pm", "sync", "--home", str(home)]) == 0
    receipt = json.loads((home / "pm/receipts/latest.json").read_text())
    assert [s["command"] for s in receipt["next_steps"]] == []
    assert receipt["warnings"] == [
        f"{home / 'config.yaml'}: memory.provider names 'mem0', but no memory provider of that name is installed; "
        f"the catalog ({env / 'catalog.json'}) has no entry 'mem0', so `hermes update` cannot install it: install it "
        f"from its source (`hermes plugins install SOURCE --home {home}`) or choose an installed provider "
        f"(`hermes memory setup NAME --home {home}`)"]
    assert "`hermes update` cannot install it" in capsys.readouterr().err
    state = generations.read_state(home)

    assert main(["update", "--home", str(home)]) == 1  # memory.provider still names nothing: not ok
    receipt = json.loads((home / "pm/receipts/latest.json").read_text())
    assert_valid_receipt(receipt)
    assert (receipt["kind"], receipt["outcome"], receipt["failure"]["kind"]) == ("update", "failed", "missing-provider")
    assert receipt["failure"]["message"] == (
        f"memory provider 'mem0' (memory.provider in {home / 'config.yaml'}) is still not installed: the catalog "
        f"({env / 'catalog.json'}) has no entry 'mem0', so `hermes update` cannot install it: install it from its "
        f"source (`hermes plugins install SOURCE --home {home}`) or choose an installed provider (`hermes memory "
        f"setup NAME --home {home}`); nothing was rebuilt (the agent runs without its memory until then)")
    assert [s["command"] for s in receipt["next_steps"]] == [f"hermes plugins install SOURCE --home {home}",
                                                             f"hermes memory setup NAME --home {home}"]
    assert generations.read_state(home) == state
    err = capsys.readouterr().err
    assert "error: memory provider 'mem0'" in err and "hermes memory setup NAME" in err

    (home / "config.yaml").write_text((home / "config.yaml").read_text().replace("provider: mem0", "provider: honcho"))
    assert main(["pm", "sync", "--home", str(home)]) == 0  # the catalog has this one: the hint is update
    receipt = json.loads((home / "pm/receipts/latest.json").read_text())
    assert [s["command"] for s in receipt["next_steps"]] == [f"hermes update --home {home}"]
    assert provider_remedy(home, "honcho", configured=False).command == "hermes plugins install honcho"  # asked by name
    assert receipt["warnings"][0].endswith(f"is installed; run `hermes update --home {home}` to install it from the catalog")
