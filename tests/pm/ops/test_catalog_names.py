"""Issue 34, finding 5: a catalog is refused, never crashed on. Two entries of one catalog whose
names compare equal (the same name, or one that differs only in case or in ``-``, ``_``, ``.``)
are named, with a receipt, by ``catalog check`` and ``plugins install`` (which used to crash with
``FileExistsError`` and to take the first silently); the kill list matches names the same way
(``removed: [Good]`` blocks ``good``), and two kill-list names that compare equal are named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.cli import main as hermes
from pm.cli import main as pm
from pm.inputs.catalog import catalog_name, load_catalog
from pm.testing.catalogs import plugin_repo
from pm.testing.receipts import assert_valid_receipt


@pytest.fixture
def repo(env: Path) -> tuple[str, str]:
    path, commit = plugin_repo(env / "repos", "good", [])
    return str(path), commit


def _home(env: Path, names: list[str], removed: list[str], repo: tuple[str, str]) -> Path:
    entries = [{"name": n, "kind": "plugin", "source": {"git": repo[0], "commit": repo[1]}} for n in names]
    (env / "catalog.json").write_text(json.dumps({"entries": entries, "removed": removed}))
    home = env / "home"
    (home / "plugins").mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(f"pm:\n  catalog: {env / 'catalog.json'}\n")
    return home


def _receipt(home: Path) -> dict[str, object]:
    receipt = json.loads((home / "pm/receipts/latest.json").read_text())
    assert_valid_receipt(receipt)
    return receipt


def test_catalog_names_compare_ignoring_case_and_separators() -> None:
    assert {catalog_name(n) for n in ("Good_Plugin", "good-plugin", "GOOD..plugin", "good.-_plugin")} == {"good-plugin"}
    assert catalog_name("good-plugin") != catalog_name("goodplugin")


@pytest.mark.parametrize("names", [["good", "good"], ["Good_Plugin", "good-plugin"]])
def test_catalog_check_names_both_entries_with_a_receipt(env: Path, repo: tuple[str, str], names: list[str],
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    home = _home(env, [*names, "other"], [], repo)
    key = catalog_name(names[0])
    said = (f"{env / 'catalog.json'}: entries[0]: entries entries[0] {names[0]!r} and entries[1] {names[1]!r} "
            f"name the same plugin {key!r} (names are compared ignoring case and '-', '_', '.'); keep one")
    assert pm(["catalog", "check", "--home", str(home)]) == 1
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err
    receipt = _receipt(home)
    assert receipt["exit_code"] == 1 and said in receipt["failure"]["problems"]  # type: ignore[index]
    assert hermes(["plugins", "install", names[1], "--home", str(home)]) == 1
    assert said in capsys.readouterr().err
    receipt = _receipt(home)
    assert (receipt["kind"], receipt["exit_code"]) == ("install", 1)
    assert sorted(p.name for p in (home / "plugins").iterdir() if not p.name.startswith(".")) == []


def test_a_kill_list_name_blocks_the_entry_it_compares_equal_to(env: Path, repo: tuple[str, str],
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    home = _home(env, ["good", "other"], ["Good"], repo)
    assert load_catalog(env / "catalog.json").is_removed("good")
    assert hermes(["plugins", "install", "good", "--home", str(home)]) == 1
    assert (f"{env / 'catalog.json'}: plugin 'good' was removed from the catalog and cannot be installed"
            in capsys.readouterr().err)
    assert not (home / "plugins" / "good").exists() and _receipt(home)["outcome"] == "refused"


def test_two_kill_list_names_that_compare_equal_are_named(env: Path, repo: tuple[str, str],
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    home = _home(env, ["other"], ["gone", "GONE", "Gone_"], repo)
    assert pm(["catalog", "check", "--home", str(home)]) == 1
    assert (f"{env / 'catalog.json'}: removed[0]: kill-list names removed[0] 'gone' and removed[1] 'GONE' name the "
            "same plugin 'gone'") in capsys.readouterr().err


def test_the_directory_form_names_entry_files_and_kill_list_names(tmp_path: Path) -> None:
    from pm.base.errors import InputError

    folder = tmp_path / "catalog.d"
    folder.mkdir()
    for file, name in (("a.yaml", "Notes"), ("b.yaml", "notes"), ("c.yaml", "other")):
        (folder / file).write_text(json.dumps({"name": name, "repo": "https://example.invalid/x.git",
                                               "sha": "0" * 40}))
    (folder / "removed.yaml").write_text(json.dumps(["old_one", "old-one"]))
    with pytest.raises(InputError) as err:
        load_catalog(folder)
    assert [str(p) for p in err.value.problems] == [
        f"{folder}: a.yaml: entry files a.yaml 'Notes' and b.yaml 'notes' name the same plugin 'notes' (names are "
        "compared ignoring case and '-', '_', '.'); keep one",
        f"{folder / 'removed.yaml'}: [0]: kill-list names [0] 'old_one' and [1] 'old-one' name the same plugin "
        "'old-one' (names are compared ignoring case and '-', '_', '.'); keep one"]


def test_an_install_by_another_spelling_installs_the_entry_under_its_name(env: Path, repo: tuple[str, str]) -> None:
    home = _home(env, ["good-notes"], [], repo)
    assert hermes(["plugins", "install", "Good_Notes", "--home", str(home)]) == 0
    assert sorted(p.name for p in (home / "plugins").iterdir() if not p.name.startswith(".")) == ["good-notes"]
    receipt = _receipt(home)
    assert (receipt["outcome"], receipt["installed"]) == ("ok", "good-notes")
