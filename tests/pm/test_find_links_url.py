"""``--find-links URL`` like pip and uv (issue 14, finding 2): a flat page whose anchors point at
wheels, served on 127.0.0.1, joins the resolution as a find-links folder does, and its files are
installed by real uv. The plugin's own dependency is only on that page; the rest comes from the
index. A page without ``#sha256=`` fragments gets the pinned files hashed by one download each; a
dead page is a failure naming its URL; credentials in the URL never reach a receipt or an export."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest

from pm.cli import main
from pm.env import generations
from pm.testing import add_plugin, build_packages, index_from_spec, make_home

INDEX = {"alpha": {"1.0": [], "2.0": []}}
PAGE = {"pagelib": {"1.0": ["alpha>=1"], "2.0": ["alpha>=2"]}}
SECRET = "S3CRET"


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    with index_from_spec(tmp_path_factory.mktemp("index"), INDEX) as served:
        yield served


@pytest.fixture
def page(tmp_path):
    """Another host whose only use is its find-links page (``/links/``): pagelib lives there alone."""
    with index_from_spec(tmp_path / "page-files", PAGE) as served:
        yield served


@pytest.fixture
def home(tmp_path: Path, index, monkeypatch) -> Path:
    for variable in ("HERMES_PM_FIND_LINKS", "HERMES_HOME", "UV_INDEX_URL", "PIP_INDEX_URL", "UV_DEFAULT_INDEX",
                     "HERMES_PM_EXTRA_INDEX_URL", "UV_EXTRA_INDEX_URL", "PIP_EXTRA_INDEX_URL"):
        monkeypatch.delenv(variable, raising=False)
    (tmp_path / "core.toml").write_text("[project]\nname = 'host'\ndependencies = []\n")
    (tmp_path / "lock.txt").write_text("")
    for variable, value in {"HERMES_PM_INDEX_URL": index.url, "HERMES_PM_CACHE_DIR": str(tmp_path / "cache"),
                            "HERMES_BUNDLED_PLUGINS": str(tmp_path / "no-bundled"),
                            "HERMES_PM_CORE": str(tmp_path / "core.toml"),
                            "HERMES_PM_CORE_LOCK": str(tmp_path / "lock.txt")}.items():
        monkeypatch.setenv(variable, value)
    home = make_home(tmp_path / "home", config={"plugins": {"enabled": ["reader"]}})
    add_plugin(home / "plugins", "reader", style="manifest", dependencies=["pagelib"])
    return home


def _run(capsys, home: Path, *args: str) -> tuple[int, dict, str]:
    code = main([*args, "--json", "--home", str(home)])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if captured.out.strip() else {}, captured.err


def _pins(receipt: dict) -> dict[str, tuple[str, str, str]]:
    return {p["name"]: (p["version"], p["file"]["url"], p["file"]["index"])
            for p in receipt["resolution"]["packages"]}


def test_a_dependency_only_on_a_find_links_page_resolves_and_syncs(home, index, page, capsys):
    code, receipt, err = _run(capsys, home, "sync", "--find-links", page.find_links_url)

    assert code == 0, err
    assert _pins(receipt) == {
        "alpha": ("2.0", f"{index.root}/files/alpha-2.0-py3-none-any.whl", index.url),
        "pagelib": ("2.0", f"{page.root}/files/pagelib-2.0-py3-none-any.whl", page.find_links_url)}
    assert receipt["inputs"]["index"]["find_links"] == [page.find_links_url]
    assert generations.selected(home).pins == {"alpha": "2.0", "pagelib": "2.0"}
    assert ("GET", "/links/") in page.requests


def test_the_page_comes_from_the_environment_and_from_config_too(home, page, capsys, monkeypatch, tmp_path):
    folder = tmp_path / "empty-folder"
    folder.mkdir()
    monkeypatch.setenv("HERMES_PM_FIND_LINKS", os.pathsep.join([str(folder), page.find_links_url]))
    code, receipt, err = _run(capsys, home, "resolve")
    assert code == 0, err
    assert receipt["inputs"]["index"]["find_links"] == [str(folder), page.find_links_url]
    assert _pins(receipt)["pagelib"][0] == "2.0"

    monkeypatch.delenv("HERMES_PM_FIND_LINKS")
    config = home / "config.yaml"
    config.write_text(config.read_text() + f"pm:\n  find_links: {page.find_links_url}\n")
    code, receipt, err = _run(capsys, home, "resolve")
    assert code == 0, err
    assert receipt["inputs"]["index"]["find_links"] == [page.find_links_url]


def test_a_page_without_hashes_gets_only_the_pinned_file_downloaded_and_hashed(home, page, capsys):
    page.find_links_hashes = False
    wheel = next(p for p in page.served_files().values() if p.record.filename == "pagelib-2.0-py3-none-any.whl")

    code, receipt, err = _run(capsys, home, "resolve", "--find-links", page.find_links_url)

    assert code == 0, err
    pinned = next(p for p in receipt["resolution"]["packages"] if p["name"] == "pagelib")
    assert (pinned["file"]["sha256"], pinned["file"]["size"]) == (wheel.sha256, wheel.size)
    whole = [t.path for t in page.transfers if t.kind == "files" and t.range is None]
    assert whole == ["/files/pagelib-2.0-py3-none-any.whl"], "metadata came by ranges; only the pin was hashed"
    code, receipt, err = _run(capsys, home, "sync", "--find-links", page.find_links_url)
    assert code == 0, err
    assert generations.selected(home).pins == {"alpha": "2.0", "pagelib": "2.0"}


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_dead_find_links_url_is_a_failure_naming_it(home, capsys, monkeypatch):
    monkeypatch.setenv("HERMES_PM_HTTP_RETRIES", "0")
    dead = f"http://127.0.0.1:{_closed_port()}/links/"

    code, receipt, err = _run(capsys, home, "sync", "--find-links", dead)

    assert code == 1
    assert receipt["outcome"] == "failed" and receipt["conflict"] is None
    assert receipt["failure"]["kind"] == "index"
    assert receipt["failure"]["message"] == f"{dead}: connection refused"
    assert generations.selected(home) is None


def test_a_missing_find_links_page_is_a_failure_naming_it(home, page, capsys):
    code, receipt, _ = _run(capsys, home, "resolve", "--find-links", f"{page.root}/no-such-page/")
    assert code == 1
    assert receipt["failure"]["message"] == f"{page.root}/no-such-page/: HTTP 404 Not Found: no find-links page at this URL"


def test_credentials_in_the_url_reach_the_page_and_uv_but_no_receipt_or_export(home, page, capsys, tmp_path):
    page.basic_auth = f"alice:{SECRET}"
    url = page.find_links_url.replace("http://", f"http://alice:{SECRET}@")

    code, receipt, err = _run(capsys, home, "sync", "--find-links", url)

    assert code == 0, err
    assert receipt["inputs"]["index"]["find_links"] == [url.replace(SECRET, "****")]
    assert _pins(receipt)["pagelib"][2] == page.find_links_url
    exports = {}
    for form in ("pylock", "requirements", "nix"):
        assert main(["export", "--format", form, "--find-links", url, "--home", str(home)]) == 0
        exports[form] = capsys.readouterr().out
    # the login stays so pip and uv find the password in netrc or a keyring; the password never
    assert f"--find-links {page.find_links_url.replace('http://', 'http://alice@')}\n" in exports["requirements"]
    assert f"{page.root}/files/pagelib-2.0-py3-none-any.whl" in exports["pylock"]
    written = [p for folder in (home / "pm", tmp_path / "cache") for p in folder.rglob("*")
               if p.is_file() and not p.is_symlink() and SECRET.encode() in p.read_bytes()]
    assert written == [] and all(SECRET not in text for text in exports.values())


def test_a_resolution_is_reused_while_the_page_is_unchanged(home, page, capsys, tmp_path):
    args = ("resolve", "--find-links", page.find_links_url)
    assert _run(capsys, home, *args)[1]["reused_resolution"] is False
    assert _run(capsys, home, *args)[1]["reused_resolution"] is True

    page.add_files(build_packages(tmp_path / "newer", {"pagelib": {"3.0": ["alpha>=2"]}}))
    code, receipt, err = _run(capsys, home, *args)
    assert code == 0, err
    assert receipt["reused_resolution"] is False and _pins(receipt)["pagelib"][0] == "3.0"
