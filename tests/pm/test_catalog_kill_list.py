"""The catalog's kill list (``removed.yaml``) in the real shape and the short ones, matching by name
or by repository URL."""

from __future__ import annotations

from pathlib import Path

import pytest

from pm.base.errors import InputError
from pm.inputs.catalog import CatalogRefusal, load_catalog, repo_key

SHA = "0123456789abcdef0123456789abcdef01234567"


def _catalog(tmp_path: Path, removed: str, entries: dict[str, str] | None = None) -> Path:
    folder = tmp_path / "catalog.d"
    folder.mkdir()
    for name, repo in (entries or {"keeper": "https://github.com/acme/keeper"}).items():
        (folder / f"{name}.yaml").write_text(f"name: {name}\nrepo: {repo}\nsha: {SHA}\n")
    (folder / "removed.yaml").write_text(removed)
    return folder


REAL = """\
# the real catalog's kill list
removed:
  - name: fading
    repo: https://github.com/acme/fading
    reason: unmaintained since 2024
    date: 2025-03-01
  - repo: git@github.com:acme/Moved-Away.git
    reason: the repository was taken over
    date: "2025-04-02"
"""


def test_the_real_shape_blocks_by_name_and_by_repository(tmp_path: Path) -> None:
    folder = _catalog(tmp_path, REAL, {"fading": "https://github.com/acme/fading",
                                       # another name, the same repository written another way
                                       "renamed": "https://GitHub.com/acme/Moved-Away.git/",
                                       "keeper": "https://github.com/acme/keeper"})
    catalog = load_catalog(folder)
    assert sorted(catalog.removed) == ["fading", "renamed"]
    with pytest.raises(CatalogRefusal) as refused:
        catalog.find("renamed")
    assert str(refused.value) == (f"{folder}: plugin 'renamed' was removed from the catalog (reason: the repository "
                                  "was taken over) and cannot be installed")
    with pytest.raises(CatalogRefusal, match=r"'fading' was removed from the catalog \(reason: unmaintained"):
        catalog.find("fading")
    keeper = catalog.find("keeper")
    assert keeper is not None and keeper.name == "keeper"


@pytest.mark.parametrize("removed", ["- fading\n", "- name: fading\n  reason: unmaintained since 2024\n",
                                     "removed: [fading]\n", "removed: []\n", "[]\n", ""])
def test_the_short_forms_are_read_as_before(tmp_path: Path, removed: str) -> None:
    catalog = load_catalog(_catalog(tmp_path, removed, {"fading": "https://github.com/acme/fading"}))
    assert catalog.removed == (("fading",) if "fading" in removed else ())


def test_a_bad_kill_list_entry_names_the_file_and_the_key(tmp_path: Path) -> None:
    folder = _catalog(tmp_path, "removed:\n  - name: fading\n    owner: someone\n  - reason: no name, no repo\n"
                                "  - 7\n")
    with pytest.raises(InputError) as bad:
        load_catalog(folder)
    path = folder / "removed.yaml"
    assert [str(p) for p in bad.value.problems] == [
        f"{path}: removed[0].owner: unknown key (known: name, repo, reason, date)",
        f"{path}: removed[1]: must be a name or {{name, repo, reason, date}}, got {{'reason': 'no name, no repo'}} "
        "(it needs a name or a repo)",
        f"{path}: removed[2]: must be a name or {{name, repo, reason, date}}, got 7",
    ]


@pytest.mark.parametrize("url", ["https://github.com/acme/fading", "https://GitHub.COM/acme/fading.git",
                                 "https://github.com/acme/fading/", "HTTPS://github.com/acme/fading.git/",
                                 "git@github.com:acme/fading.git", "ssh://git@github.com/acme/fading",
                                 "http://user@github.com/acme/fading"])
def test_repository_urls_compare_as_one_repository(url: str) -> None:
    assert repo_key(url) == "github.com/acme/fading"
    assert repo_key(url.replace("acme/fading", "Acme/Fading")) == "github.com/acme/fading"


def test_different_repositories_stay_different() -> None:
    assert repo_key("https://github.com/acme/fading") != repo_key("https://github.com/acme/fading-two")
    assert repo_key("https://github.com/acme/fading") != repo_key("https://gitlab.com/acme/fading")
    assert repo_key("file:///srv/mirror/fading.git") == repo_key("file:///srv/mirror/fading/")


def test_a_git_install_of_a_killed_repository_is_refused_before_anything_is_fetched(tmp_path: Path) -> None:
    from pm.env.plugin_install import install
    from pm.testing import make_home

    catalog = load_catalog(_catalog(tmp_path, REAL))
    home = make_home(tmp_path / "home")
    with pytest.raises(CatalogRefusal) as refused:
        install(home, f"git+ssh://git@github.com/acme/moved-away.git@{SHA}", catalog)
    assert str(refused.value) == (
        f"{catalog.file}: the repository of git+ssh://git@github.com/acme/moved-away.git@{SHA} "
        "(github.com/acme/moved-away) was removed from the catalog (reason: the repository was taken over) and "
        "cannot be installed")
    assert sorted(p.name for p in (home / "plugins").iterdir()) == []


def test_a_live_catalogs_entry_of_a_killed_repository_is_removed_too(tmp_path: Path) -> None:
    from pm.inputs.catalog import catalog_from_text
    from pm.inputs.catalog_live import combined

    base = load_catalog(_catalog(tmp_path, REAL))
    live = catalog_from_text(tmp_path / "live.yaml", f"entries:\n  - name: reborn\n    source:\n      git: "
                                                      f"https://github.com/acme/moved-away\n      commit: {SHA}\n")
    both = combined(base, live, [])
    with pytest.raises(CatalogRefusal, match="'reborn' was removed from the catalog"):
        both.find("reborn")
