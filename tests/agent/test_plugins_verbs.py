"""``hermes plugins info|search|validate|doctor`` on real parts: a catalog in the directory form
whose entry is a real git repository, a real local index of real wheels, a home synced for real
(uv), and plugin folders whose code would leave a mark if anything imported it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.cli import main as hermes
from agent.plugins_validate import validate
from pm.env import generations
from pm.env.doctor import diagnose
from pm.testing import LocalIndex, add_plugin, index_from_spec, make_home
from pm.testing.catalogs import plugin_repo

SPEC = {"tinyhttp": {"1.0": [], "2.0": []}, "sharedlib": {"1.0": []}}
MARKING = "open({path!r}, 'w').write('imported')\n"


@pytest.fixture
def index(tmp_path: Path) -> Iterator[LocalIndex]:
    with index_from_spec(tmp_path / "dists", SPEC) as served:
        yield served


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, index: LocalIndex) -> Path:
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "none"))
    monkeypatch.delenv("HERMES_PM_INDEX_URL", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    repo, commit = plugin_repo(tmp_path, "web", ["tinyhttp>=1.0,<2"])
    catalog = tmp_path / "catalog.d"
    catalog.mkdir()
    (catalog / "web.yaml").write_text(json.dumps({"name": "web", "repo": repo.as_uri(), "sha": commit, "tier": "community",
                                                  "description": "A tiny HTTP tool"}))
    (catalog / "mail.yaml").write_text(json.dumps({"name": "mail", "repo": repo.as_uri(), "sha": commit,
                                                   "tier": "official", "description": "Reads your inbox"}))
    (tmp_path / "core.toml").write_text("[project]\nname = 'host'\ndependencies = ['sharedlib']\n")
    home = make_home(tmp_path / "home", config={"plugins": {"enabled": ["web"]}, "pm": {
        "catalog": "../catalog.d", "core": "../core.toml", "index_url": index.url}})
    assert hermes(["plugins", "install", "web", "--home", str(home)]) == 0
    assert hermes(["pm", "sync", "--home", str(home)]) == 0
    return home


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = hermes(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_info_names_the_declaration_manifest_catalog_entry_installed_packages_and_readiness(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "plugins", "info", "web", "--home", str(home), "--json")
    assert code == 0
    data: dict[str, Any] = json.loads(out)
    manifest = home / "plugins" / "web" / "plugin.yaml"
    assert data["requirements"] == [{"requirement": "tinyhttp<2,>=1.0", "file": str(manifest)}]
    assert data["installed"] == [{"name": "tinyhttp", "version": "1.0"}]
    assert data["manifest"]["name"] == "web" and data["manifest"]["file"] == str(manifest)
    assert (data["catalog"]["tier"], data["catalog"]["description"]) == ("community", "A tiny HTTP tool")
    assert data["catalog"]["pin"].startswith("commit ")
    assert (data["ready"], data["readiness"]) == (True, "ready")
    code, out, _ = run(capsys, "plugins", "info", "web", "--home", str(home))
    assert code == 0
    assert "  tinyhttp==1.0" in out and "tier community" in out and "readiness: ready" in out
    code, _, err = run(capsys, "plugins", "info", "nothing", "--home", str(home))
    assert code == 1 and "no plugin 'nothing'" in err


def test_search_matches_names_and_descriptions_with_tier_and_installed(home: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "plugins", "search", "INBOX", "--home", str(home), "--json")
    assert code == 0
    assert [(p["name"], p["tier"], p["installed"]) for p in json.loads(out)["plugins"]] == [("mail", "official", False)]
    code, out, err = run(capsys, "plugins", "search", "web", "--home", str(home))
    assert code == 0
    assert out.splitlines()[1].split()[:3] == ["web", "community", "yes"]
    assert "1 of 2 catalog plugins match 'web'" in err


def test_doctor_rehashes_every_file_and_checks_every_pin(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "plugins", "doctor", "--home", str(home))
    assert (code, out) == (0, ""), err
    assert "healthy" in err
    generation = generations.selected(home)
    assert generation is not None
    module = next(generation.site_packages.glob("tinyhttp/__init__.py"))
    module.write_text(module.read_text() + "# changed\n")
    shared = next(generation.site_packages.glob("sharedlib/__init__.py"))
    shared.unlink()
    code, out, _ = run(capsys, "plugins", "doctor", "--home", str(home), "--json")
    assert code == 4
    problems = {(p["kind"], p["path"]) for p in json.loads(out)["problems"]}
    assert problems == {("modified", "tinyhttp/__init__.py"), ("missing", "sharedlib/__init__.py")}
    info = next(generation.site_packages.glob("tinyhttp-*.dist-info"))
    metadata = info / "METADATA"
    metadata.write_text(metadata.read_text().replace("Version: 1.0", "Version: 1.5"))
    kinds = {(d.kind, d.distribution) for d in diagnose(generation).damage}
    assert ("drift", "tinyhttp") in kinds


def test_doctor_without_a_generation_is_not_healthy(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "none"))
    bare = make_home(tmp_path / "bare")
    code, _, err = run(capsys, "plugins", "doctor", "--home", str(bare))
    assert code == 4 and "no generation is selected" in err


def test_validate_a_good_plugin_without_importing_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mark = tmp_path / "imported"
    root = add_plugin(tmp_path / "src", "notes", style="pyproject", dependencies=["tinyhttp>=1"],
                      init_code=MARKING.format(path=str(mark)))
    (root / "config_schema.py").write_text(MARKING.format(path=str(mark)) +
                                           "CONFIG_SCHEMA = [{'key': 'api_key', 'secret': True}]\n")
    code, out, _ = run(capsys, "plugins", "validate", str(root))
    assert code == 0, out
    assert out.strip().endswith("valid (member, 1 requirements, config schema: api_key)")
    assert not mark.exists()


def test_validate_names_every_problem_with_file_and_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "broken"
    root.mkdir()
    (root / "plugin.yaml").write_text("name: broken\npip_dependencies: ['not a requirement!!']\n")
    (root / "config_schema.py").write_text("CONFIG_SCHEMA = [{'secret': True}]\n")
    code, out, _ = run(capsys, "plugins", "validate", str(root), "--json")
    assert code == 1
    found = {(Path(p["file"].split(":")[0]).name, p["key"]) for p in json.loads(out)["problems"]}
    assert any(name == "plugin.yaml" and key.startswith("pip_dependencies") for name, key in found), found
    assert ("config_schema.py", "[0].key") in found
    (root / "plugin.yaml").write_text("name: broken\npython_runtime: sometimes\n")
    code, out, _ = run(capsys, "plugins", "validate", str(root))
    assert code == 1
    assert f"{root / 'plugin.yaml'}:2: python_runtime: must be one of" in out


def test_validate_tells_sidecar_only_external_and_not_a_plugin(tmp_path: Path) -> None:
    sidecar = add_plugin(tmp_path / "src", "side", style="sidecar")
    assert (validate(sidecar).role, validate(sidecar).valid) == ("sidecar-only", True)
    external = add_plugin(tmp_path / "src", "ext", style="manifest", dependencies=["x"],
                          manifest={"python_runtime": "external"})
    assert validate(external).role == "external"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert (validate(empty).role, validate(empty).valid) == (None, False)
    hidden = add_plugin(tmp_path / "src", "_hidden", style="manifest", dependencies=["x"])
    assert not validate(hidden).valid


def test_update_name_moves_that_catalog_plugin_alone_with_the_repin_consent(
        tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pm.env.plugin_install import installed_records
    from pm.testing.catalogs import recommit

    repo = tmp_path / "web.git"
    mail = plugin_repo(tmp_path / "other", "mail", [])[0]
    catalog = tmp_path / "catalog.d"
    first = json.loads((catalog / "mail.yaml").read_text())
    (catalog / "mail.yaml").write_text(json.dumps(first | {"repo": mail.as_uri(), "sha": plugin_commit(mail)}))
    assert hermes(["plugins", "install", "mail", "--home", str(home)]) == 0
    newer = recommit(repo, "web", ["tinyhttp>=1.0,<2", "sharedlib"])  # widens: a new requirement
    web = json.loads((catalog / "web.yaml").read_text())
    (catalog / "web.yaml").write_text(json.dumps(web | {"sha": newer}))
    mail_newer = recommit(mail, "mail", ["sharedlib"])
    (catalog / "mail.yaml").write_text(json.dumps(first | {"repo": mail.as_uri(), "sha": mail_newer}))
    code, _, err = run(capsys, "plugins", "update", "web", "--home", str(home))
    assert code == 0, err
    assert installed_records(home)["web"]["commit"] != newer  # no consent: the old pin stays
    assert "--accept-repin" in err
    code, _, err = run(capsys, "plugins", "update", "web", "--accept-repin", "--home", str(home))
    assert code == 0, err
    records = installed_records(home)
    assert records["web"]["commit"] == newer
    assert records["mail"]["commit"] != mail_newer  # only the plugin named moved
    code, _, err = run(capsys, "plugins", "update", "nothing", "--home", str(home))
    assert code != 0 and "not installed by pm" in err


def plugin_commit(repo: Path) -> str:
    import subprocess

    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True,
                          text=True).stdout.strip()
