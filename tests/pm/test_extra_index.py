"""Several indexes like uv (issue 14, finding 2): ``--extra-index-url`` and its environment
variables, searched before the index URL, with uv's first-index rule — a project is taken from
the first index that has it and never from a later one, so a public index cannot shadow a
private project's name (dependency confusion)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pm.cli import main
from pm.inputs.config import read_config
from pm.inputs.settings import Flags, resolve_settings
from pm.testing import add_plugin, index_from_spec, make_home

PRIVATE = {"corp-lib": {"1.0": []}, "alpha": {"1.0": []}}
PUBLIC = {"corp-lib": {"9.0": []}, "alpha": {"2.0": []}, "beta": {"1.0": []}}


@pytest.fixture
def home(tmp_path: Path, monkeypatch) -> Path:
    for variable in ("HERMES_PM_INDEX_URL", "UV_INDEX_URL", "PIP_INDEX_URL", "UV_DEFAULT_INDEX", "HERMES_HOME",
                     "HERMES_PM_EXTRA_INDEX_URL", "UV_EXTRA_INDEX_URL", "PIP_EXTRA_INDEX_URL"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "no-bundled"))
    home = make_home(tmp_path / "home", config={"plugins": {"enabled": ["work"]}})
    add_plugin(home / "plugins", "work", style="pyproject", dependencies=["corp-lib", "alpha", "beta"])
    (tmp_path / "core.toml").write_text("[project]\nname = 'host'\ndependencies = []\n")
    (tmp_path / "lock.txt").write_text("")
    return home


@pytest.fixture
def indexes(tmp_path):
    with index_from_spec(tmp_path / "private", PRIVATE) as private, \
            index_from_spec(tmp_path / "public", PUBLIC) as public:
        yield private, public


def _pins(capsys, home: Path, *extra: str) -> dict[str, tuple[str, str]]:
    core = ["--core", str(home.parent / "core.toml"), "--core-lock", str(home.parent / "lock.txt")]
    assert main(["resolve", "--json", "--home", str(home), *core, *extra]) == 0
    receipt = json.loads(capsys.readouterr().out)
    return {p["name"]: (p["version"], p["file"]["url"]) for p in receipt["resolution"]["packages"]}


def test_a_project_comes_from_the_first_index_that_has_it(home, indexes, capsys):
    private, public = indexes
    pins = _pins(capsys, home, "--index-url", public.url, "--extra-index-url", private.url)
    assert {name: version for name, (version, _) in pins.items()} == {
        "corp-lib": "1.0", "alpha": "1.0", "beta": "1.0"}  # never corp-lib 9.0, nor the newer alpha
    assert pins["corp-lib"][1].startswith(private.root) and pins["beta"][1].startswith(public.root)


@pytest.mark.parametrize("variable", ["UV_EXTRA_INDEX_URL", "PIP_EXTRA_INDEX_URL", "HERMES_PM_EXTRA_INDEX_URL"])
def test_extra_indexes_from_the_environment(variable, home, indexes, capsys, monkeypatch):
    private, public = indexes
    monkeypatch.setenv(variable, private.url)
    monkeypatch.setenv("UV_DEFAULT_INDEX", public.url)
    pins = _pins(capsys, home)
    assert pins["corp-lib"][0] == "1.0" and pins["beta"][0] == "1.0"


def test_settings_order_and_precedence(home, monkeypatch):
    config = read_config(home)
    monkeypatch.setenv("UV_DEFAULT_INDEX", "https://default.example/simple/")
    monkeypatch.setenv("UV_INDEX_URL", "https://older.example/simple/")
    monkeypatch.setenv("UV_EXTRA_INDEX_URL", "https://a.example/simple/ https://b.example/simple/")
    assert resolve_settings(Flags(), config).index_urls == (
        "https://a.example/simple/", "https://b.example/simple/", "https://default.example/simple/")
    flags = Flags(index_url="https://flag.example/simple/", extra_index_urls=("https://x.example/simple/",))
    assert resolve_settings(flags, config).index_urls == ("https://x.example/simple/", "https://flag.example/simple/")
    assert resolve_settings(Flags(no_index=True), config).index_urls == ()


def _static_index(folder: Path) -> str:
    """A PEP 503 index as plain files (what `pip download` + a dumb web root look like)."""
    import hashlib

    from pm.testing import build_packages

    files = build_packages(folder / "files", {"alpha": {"1.0": [], "2.0": []}, "corp-lib": {"1.0": []},
                                              "beta": {"1.0": []}})
    for name in ("alpha", "corp-lib", "beta"):
        page = folder / "simple" / name / "index.html"
        page.parent.mkdir(parents=True)
        links = [f'<a href="../../files/{f.filename}#sha256={hashlib.sha256(f.path.read_bytes()).hexdigest()}">'
                 f"{f.filename}</a>" for f in files if f.filename.startswith(name.replace("-", "_") + "-")]
        page.write_text("<!DOCTYPE html><html><body>\n" + "\n".join(links) + "\n</body></html>\n")
    return (folder / "simple").as_uri() + "/"


def test_a_file_url_index_resolves_and_builds(home, capsys, tmp_path):
    url = _static_index(tmp_path / "static")
    pins = _pins(capsys, home, "--index-url", url)
    assert {name: version for name, (version, _) in pins.items()} == {"corp-lib": "1.0", "alpha": "2.0", "beta": "1.0"}
    assert pins["alpha"][1] == (tmp_path / "static" / "files" / "alpha-2.0-py3-none-any.whl").as_uri()
    core = ["--core", str(home.parent / "core.toml"), "--core-lock", str(home.parent / "lock.txt")]
    assert main(["sync", "--home", str(home), *core, "--index-url", url]) == 0
    assert main(["why", "alpha", "--home", str(home)]) == 0
    assert capsys.readouterr().out.startswith("alpha 2.0\n")


def test_find_links_take_folders_file_urls_and_pages_and_refuse_other_schemes_by_name(home, tmp_path, capsys):
    from pm.base.errors import UsageError
    from pm.inputs.settings import find_link

    assert find_link((tmp_path / "w").as_uri(), Path("/elsewhere"), "--find-links") == tmp_path / "w"
    assert find_link("w", tmp_path, "--find-links") == tmp_path / "w"
    assert find_link("https://u:pw@example.org/wheels/", tmp_path, "--find-links") == "https://u:pw@example.org/wheels/"
    with pytest.raises(UsageError) as refused:
        find_link("ftp://u:pw@example.org/wheels/", tmp_path, "--find-links")
    assert str(refused.value) == ("--find-links ftp://u:****@example.org/wheels/: a find-links entry is a folder, "
                                  "a file:// URL or an http(s):// URL of a page of links")
    assert main(["resolve", "--home", str(home), "--find-links", "ftp://example.org/wheels/"]) == 2
    assert "a find-links entry is a folder" in capsys.readouterr().err
