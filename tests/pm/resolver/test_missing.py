"""A requirement on a project that no source has: a failure about a declaration (exit 1, outcome
``failed``, ``failure.kind = "missing-project"``), every missing name at once, each with its
origins, where pm searched, and a near-match — never a conflict, never core's fault."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pm.cli import main
from pm.testing import add_plugin, build_packages, index_from_spec, make_home
from pm.testing.receipts import assert_valid_receipt

SPEC = {
    "sharedlib": {"1.0": [], "2.0": []},
    "tinyhttp": {"1.0": ["sharedlib>=1"]},
    "ghost-user": {"1.0": ["ghostlib>=1"], "2.0": ["ghostlib>=2"]},
    "wrapper": {"1.0": ["ghost-user"]},
}


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    with index_from_spec(tmp_path_factory.mktemp("dists"), SPEC) as served:
        yield served


@pytest.fixture
def home(tmp_path: Path, monkeypatch) -> Path:
    for variable in ("HERMES_PM_INDEX_URL", "HERMES_PM_FIND_LINKS", "HERMES_HOME", "NO_COLOR"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "no-bundled"))
    (tmp_path / "core.toml").write_text("[project]\nname = 'host'\ndependencies = ['tinyhttp']\n")
    (tmp_path / "lock.txt").write_text("tinyhttp==1.0\nsharedlib==2.0\n")
    return make_home(tmp_path / "home", config={"plugins": {"enabled": ["x", "y", "z"]}})


def plugin(home: Path, name: str, *requirements: str) -> Path:
    add_plugin(home / "plugins", name, style="manifest", dependencies=list(requirements))
    return home / "plugins" / name / "plugin.yaml"


def resolve(capsys, home: Path, *extra: str) -> tuple[int, dict]:
    core = ["--core", str(home.parent / "core.toml"), "--core-lock", str(home.parent / "lock.txt")]
    code = main(["resolve", "--json", "--home", str(home), *core, *extra])
    receipt = json.loads(capsys.readouterr().out)
    assert_valid_receipt(receipt)
    assert json.loads((home / "pm/receipts/latest.json").read_text()) | {"receipt_path": None} == \
        receipt | {"receipt_path": None}
    return code, receipt


def failure_of(code: int, receipt: dict) -> dict:
    assert code == 1, receipt["conflict"] or receipt["resolution"]
    assert (receipt["outcome"], receipt["exit_code"], receipt["conflict"]) == ("failed", 1, None)
    assert receipt["failure"]["kind"] == "missing-project"
    return receipt["failure"]


def test_a_misspelt_root_requirement_is_named_with_a_near_match_and_nobody_else_is_blamed(index, home, capsys):
    x = plugin(home, "x", "sharedlibb>=1")
    plugin(home, "y", "tinyhttp")
    plugin(home, "z")
    failure = failure_of(*resolve(capsys, home, "--index-url", index.url))
    assert failure["message"] == (
        f"plugin 'x' ({x}) requires 'sharedlibb>=1', which the index does not have (searched {index.url}); "
        "did you mean 'sharedlib'?")
    assert failure["plugins"] == ["x"]
    assert failure["searched"] == [index.url]
    (project,) = failure["projects"]
    assert (project["name"], project["suggestion"]) == ("sharedlibb", "sharedlib")
    assert [(c["requirement"], c["origin"]) for c in project["required_by"]] == [
        ("sharedlibb>=1", {"kind": "plugin", "plugin": "x", "file": str(x)})]


def test_every_missing_project_is_told_at_once_with_all_its_origins(index, home, capsys):
    x = plugin(home, "x", "sharedlibb", "ghostlib>=1")
    y = plugin(home, "y", "tinyhttp", "ghostlib")
    plugin(home, "z", "phantom-kit")
    z = home / "plugins/z/plugin.yaml"
    code, receipt = resolve(capsys, home, "--index-url", index.url)
    failure = failure_of(code, receipt)
    where = f"which the index does not have (searched {index.url})"
    assert failure["message"] == (
        f"plugin 'x' ({x}) requires 'sharedlibb', {where}; did you mean 'sharedlib'? "
        f"plugin 'x' ({x}) requires 'ghostlib>=1' and plugin 'y' ({y}) requires 'ghostlib', {where}. "
        f"plugin 'z' ({z}) requires 'phantom-kit', {where}.")
    assert [p["name"] for p in failure["projects"]] == ["sharedlibb", "ghostlib", "phantom-kit"]
    assert failure["plugins"] == ["x", "y", "z"]
    assert "core" not in failure["message"]
    commands = [s["command"] for s in receipt["next_steps"]]
    assert commands[:2] == [f"hermes pm scan --home {home}", f"hermes pm resolve --home {home}"]
    assert f"check the spelling of 'sharedlibb' (did you mean 'sharedlib'?), 'ghostlib', 'phantom-kit' in {x}, {y}, {z}" \
        in receipt["next_steps"][0]["why"]
    assert commands[2:] == [f"hermes plugins disable {n} --home {home}" for n in ("x", "y", "z")]
    assert all("pm never does this for you" in s["why"] for s in receipt["next_steps"][2:])


def test_a_candidate_with_a_missing_project_never_blames_core(index, home, capsys):
    plugin(home, "y", "tinyhttp")
    plugin(home, "z")
    x = plugin(home, "x", "sharedlibb")
    (home / "config.yaml").write_text(json.dumps({"plugins": {"enabled": ["y", "z"]}}))
    code, receipt = resolve(capsys, home, "--index-url", index.url, "--with", "x")
    failure = failure_of(code, receipt)
    assert failure["message"] == (f"plugin 'x' ({x}) requires 'sharedlibb', which the index does not have "
                                  f"(searched {index.url}); did you mean 'sharedlib'?")
    assert failure["plugins"] == ["x"] and receipt["candidate"] == "x"
    assert [s["command"] for s in receipt["next_steps"]] == [
        f"hermes pm scan --home {home}", f"hermes pm resolve --with x --home {home}"]


def test_a_transitive_missing_project_is_told_down_the_chain_from_the_plugin(index, home, capsys):
    plugin(home, "x")
    plugin(home, "y", "wrapper")
    y = home / "plugins/y/plugin.yaml"
    plugin(home, "z")
    code, receipt = resolve(capsys, home, "--index-url", index.url)
    failure = failure_of(code, receipt)
    assert receipt["next_steps"][0]["why"] == (
        "'ghostlib' is named by published packages the plugins pull in (the chain above), not by a declaration: "
        "require versions of those packages that do not need it, or ask their maintainers; if a project lives on "
        "another index, set it with --index-url or pm.index_url in config.yaml")
    where = f"which the index does not have (searched {index.url})"
    assert failure["message"] == (
        f"plugin 'y' ({y}) requires wrapper; wrapper 1.0 requires ghost-user; ghost-user 2.0 requires "
        f"ghostlib>=2, {where}; ghost-user 1.0 requires ghostlib>=1, which is not there either.")
    assert failure["plugins"] == ["y"]
    (project,) = failure["projects"]
    assert (project["name"], project["suggestion"]) == ("ghostlib", None)
    assert [c["requirement"] for c in project["required_by"]] == ["wrapper"]
    assert project["stated_by"] == [
        {"package": "ghost-user", "versions": ["2.0"], "requirement": "ghostlib>=2"},
        {"package": "ghost-user", "versions": ["1.0"], "requirement": "ghostlib>=1"}]


def test_the_near_match_can_come_from_a_small_index_list(index, home, capsys):
    x = plugin(home, "x", "tinyhttpp")  # nobody else requires tinyhttp: the index's /simple/ list names it
    plugin(home, "y")
    plugin(home, "z")
    (home.parent / "lock.txt").write_text("")
    (home.parent / "core.toml").write_text("[project]\nname = 'host'\ndependencies = []\n")
    failure = failure_of(*resolve(capsys, home, "--index-url", index.url))
    assert failure["message"] == (f"plugin 'x' ({x}) requires 'tinyhttpp', which the index does not have "
                                  f"(searched {index.url}); did you mean 'tinyhttp'?")


def test_find_links_only_names_the_folder_and_suggests_from_its_files(home, tmp_path, capsys):
    folder = tmp_path / "wheels"
    folder.mkdir()
    build_packages(folder, {"sharedlib": {"1.0": []}, "tinyhttp": {"1.0": ["sharedlib"]}})
    (home.parent / "lock.txt").write_text("")
    (home.parent / "core.toml").write_text("[project]\nname = 'host'\ndependencies = []\n")
    x = plugin(home, "x", "sharedlibb")
    plugin(home, "y")
    plugin(home, "z")
    failure = failure_of(*resolve(capsys, home, "--no-index", "--find-links", str(folder)))
    assert failure["message"] == (f"plugin 'x' ({x}) requires 'sharedlibb', which the find-links folder does not "
                                  f"have (searched {folder}); did you mean 'sharedlib'?")


def test_the_person_reads_the_failure_and_what_to_do_on_stderr(index, home, capsys, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    x = plugin(home, "x", "sharedlibb")
    plugin(home, "y")
    plugin(home, "z")
    core = ["--core", str(home.parent / "core.toml"), "--core-lock", str(home.parent / "lock.txt")]
    assert main(["resolve", "--home", str(home), "--index-url", index.url, *core]) == 1
    err = capsys.readouterr().err
    assert err.startswith(
        f"error: plugin 'x' ({x}) requires 'sharedlibb', which the index does not have (searched {index.url}); "
        "did you mean 'sharedlib'?\n"
        "this is not a conflict between plugins: a required project does not exist where pm looked; "
        f"nothing was changed\nnext steps:\n  hermes pm scan --home {home}\n")
