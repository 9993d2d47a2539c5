"""The uv/pip environment users already have (issue 24, item 8): every variable and file gives its
setting by one precedence rule (flag > HERMES_PM_* > config.yaml pm.* > UV_* > PIP_* > uv.toml >
pip.conf > default), the receipt names where each setting came from, and what pm cannot honour is
said naming the variable or key. Each place is tried against a real local index on 127.0.0.1."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from pm.cli import main
from pm.inputs.config import read_config
from pm.inputs.settings import DEFAULT_INDEX_URL, Flags, resolve_settings
from pm.testing import add_plugin, build_packages, index_from_spec, make_home


@pytest.fixture
def home(tmp_path: Path, monkeypatch) -> Path:
    """A home whose one plugin needs alpha; HOME and the XDG folders are the test's own, with no
    uv.toml and no pip.conf until a test writes one (``/etc/pip.conf`` is the machine's)."""
    for variable in ("HERMES_PM_INDEX_URL", "HERMES_PM_EXTRA_INDEX_URL", "HERMES_PM_FIND_LINKS", "HERMES_HOME",
                     "UV_NO_CONFIG", "PIP_CONFIG_FILE", "PIP_INDEX_URL"):
        monkeypatch.delenv(variable, raising=False)
    for variable, folder in (("HOME", "user"), ("XDG_CONFIG_HOME", "xdg"), ("XDG_CONFIG_DIRS", "etc-xdg")):
        (tmp_path / folder).mkdir()
        monkeypatch.setenv(variable, str(tmp_path / folder))
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "no-bundled"))
    monkeypatch.chdir(tmp_path)
    home = make_home(tmp_path / "home", config={"plugins": {"enabled": ["work"]}})
    add_plugin(home / "plugins", "work", style="pyproject", dependencies=["alpha"])
    (tmp_path / "core.toml").write_text("[project]\nname = 'host'\ndependencies = []\n")
    (tmp_path / "lock.txt").write_text("")
    return home


@pytest.fixture
def index(tmp_path):
    with index_from_spec(tmp_path / "indexed", {"alpha": {"1.0": []}}) as started:
        yield started


@pytest.fixture
def public(tmp_path):
    with index_from_spec(tmp_path / "public", {"alpha": {"9.0": []}}) as started:
        yield started


def _wheels(folder: Path, version: str) -> Path:
    build_packages(folder, {"alpha": {version: []}})
    return folder


def _resolve(capsys, home: Path, *extra: str) -> tuple[int, dict, str]:
    core = ["--core", str(home.parent / "core.toml"), "--core-lock", str(home.parent / "lock.txt")]
    code = main(["resolve", "--json", "--home", str(home), *core, *extra])
    captured = capsys.readouterr()
    receipt = json.loads((home / "pm" / "receipts" / "latest.json").read_text())
    return code, receipt, captured.out + captured.err


def _alpha(receipt: dict) -> tuple[str, str]:
    [pin] = [p for p in receipt["resolution"]["packages"] if p["name"] == "alpha"]
    return pin["version"], pin["file"]["url"]


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# Each way of giving the index URL: (monkeypatch, tmp_path, url) -> the source the receipt names.
Giver = Callable[[pytest.MonkeyPatch, Path, str], str]


def _variable(name: str) -> Giver:
    def give(monkeypatch, tmp_path, url):
        monkeypatch.setenv(name, url)
        return name
    return give


def _pip_conf_xdg(monkeypatch, tmp_path, url):
    path = _write(tmp_path / "xdg" / "pip" / "pip.conf", f"[global]\nindex-url = {url}\n")
    return f"{path} [global] index-url"


def _pip_conf_file(monkeypatch, tmp_path, url):
    path = _write(tmp_path / "mine.conf", f"[global]\nindex-url = http://127.0.0.1:9/simple/\n[install]\nindex_url = {url}\n")
    monkeypatch.setenv("PIP_CONFIG_FILE", str(path))
    return f"{path} [install] index_url"


def _uv_toml_xdg(monkeypatch, tmp_path, url):
    path = _write(tmp_path / "xdg" / "uv" / "uv.toml", f'index-url = "{url}"\n')
    return f"{path} index-url"


def _uv_toml_default_index(monkeypatch, tmp_path, url):
    path = _write(tmp_path / "uv-config.toml",
                  f'[[index]]\nname = "corp"\nurl = "{url}"\ndefault = true\n')
    monkeypatch.setenv("UV_CONFIG_FILE", str(path))
    return f"{path} [[index]] corp (default = true)"


def _uv_toml_system(monkeypatch, tmp_path, url):
    path = _write(tmp_path / "etc-xdg" / "uv" / "uv.toml", f'index-url = "{url}"\n')
    return f"{path} index-url"


INDEX_GIVERS = {
    "UV_DEFAULT_INDEX": _variable("UV_DEFAULT_INDEX"), "UV_INDEX_URL": _variable("UV_INDEX_URL"),
    "PIP_INDEX_URL": _variable("PIP_INDEX_URL"), "pip.conf in XDG_CONFIG_HOME": _pip_conf_xdg,
    "PIP_CONFIG_FILE [install]": _pip_conf_file, "uv.toml in XDG_CONFIG_HOME": _uv_toml_xdg,
    "UV_CONFIG_FILE [[index]] default": _uv_toml_default_index, "uv.toml in XDG_CONFIG_DIRS": _uv_toml_system,
}


@pytest.mark.parametrize("place", INDEX_GIVERS)
def test_the_index_url_from_each_place(place, home, index, tmp_path, monkeypatch, capsys):
    source = INDEX_GIVERS[place](monkeypatch, tmp_path, index.url)
    code, receipt, err = _resolve(capsys, home)
    assert code == 0, err
    assert _alpha(receipt) == ("1.0", f"{index.root}/files/alpha-1.0-py3-none-any.whl")
    assert receipt["inputs"]["index"]["sources"] == {"index_url": source}
    assert receipt["inputs"]["index"]["urls"] == [index.url]


def _uv_index_named(monkeypatch, tmp_path, url):
    monkeypatch.setenv("UV_INDEX", f"corp={url}")
    return "UV_INDEX"


def _pip_extra(monkeypatch, tmp_path, url):
    path = _write(tmp_path / "xdg" / "pip" / "pip.conf", f"[global]\nextra-index-url =\n    {url}\n")
    return f"{path} [global] extra-index-url"


def _uv_extra(monkeypatch, tmp_path, url):
    path = _write(tmp_path / "xdg" / "uv" / "uv.toml", f'extra-index-url = ["{url}"]\n')
    return f"{path} extra-index-url"


def _uv_index_table(monkeypatch, tmp_path, url):
    path = _write(tmp_path / "xdg" / "uv" / "uv.toml", f'[[index]]\nurl = "{url}"\n')
    return f"{path} [[index]]"


EXTRA_GIVERS = {"UV_INDEX name=url": _uv_index_named, "UV_EXTRA_INDEX_URL": _variable("UV_EXTRA_INDEX_URL"),
                "PIP_EXTRA_INDEX_URL": _variable("PIP_EXTRA_INDEX_URL"), "pip.conf extra-index-url": _pip_extra,
                "uv.toml extra-index-url": _uv_extra, "uv.toml [[index]]": _uv_index_table}


@pytest.mark.parametrize("place", EXTRA_GIVERS)
def test_an_extra_index_from_each_place_is_searched_first(place, home, index, public, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HERMES_PM_INDEX_URL", public.url)  # alpha 9.0 there; the extra index's 1.0 wins
    source = EXTRA_GIVERS[place](monkeypatch, tmp_path, index.url)
    code, receipt, err = _resolve(capsys, home)
    assert code == 0, err
    assert _alpha(receipt)[0] == "1.0"
    assert receipt["inputs"]["index"]["urls"] == [index.url, public.url]
    assert receipt["inputs"]["index"]["sources"] == {"index_url": "HERMES_PM_INDEX_URL", "extra_index_urls": source}


def _find_links_givers(tmp_path: Path) -> dict[str, Callable[[pytest.MonkeyPatch, list[Path]], tuple[str, list[str]]]]:
    """Each way of giving find-links: (monkeypatch, folders) -> (the source, the entries as pm takes them)."""
    def uv(monkeypatch, folders):
        monkeypatch.setenv("UV_FIND_LINKS", ",".join(map(str, folders)))
        return "UV_FIND_LINKS", [str(f) for f in folders]

    def pip(monkeypatch, folders):
        monkeypatch.setenv("PIP_FIND_LINKS", " ".join(map(str, folders)))
        return "PIP_FIND_LINKS", [str(f) for f in folders]

    def pip_conf(monkeypatch, folders):
        path = _write(tmp_path / "xdg" / "pip" / "pip.conf", "[global]\nfind-links =\n"
                      + "".join(f"    {f}\n" for f in folders))
        return f"{path} [global] find-links", [str(f) for f in folders]

    def uv_toml(monkeypatch, folders):  # relative to the file's folder, as uv reads it
        relative = [os.path.relpath(f, tmp_path / "xdg" / "uv") for f in folders]
        path = _write(tmp_path / "xdg" / "uv" / "uv.toml", f"find-links = {json.dumps(relative)}\n")
        return f"{path} find-links", [str(path.parent / r) for r in relative]

    return {"UV_FIND_LINKS": uv, "PIP_FIND_LINKS": pip, "pip.conf": pip_conf, "uv.toml": uv_toml}


@pytest.mark.parametrize("place", ["UV_FIND_LINKS", "PIP_FIND_LINKS", "pip.conf", "uv.toml"])
def test_find_links_from_each_place(place, home, index, tmp_path, monkeypatch, capsys):
    folders = [_wheels(tmp_path / "wheels-a", "2.0"), _wheels(tmp_path / "wheels-b", "3.0")]
    source, entries = _find_links_givers(tmp_path)[place](monkeypatch, folders)
    code, receipt, err = _resolve(capsys, home, "--no-index")
    assert code == 0, err
    assert _alpha(receipt)[0] == "3.0"  # the second folder was read too
    assert receipt["inputs"]["index"]["find_links"] == entries
    assert receipt["inputs"]["index"]["sources"] == {"find_links": source, "no_index": "--no-index"}
    assert not index.requests


def _no_index_givers(tmp_path: Path, home: Path) -> dict[str, Callable[[pytest.MonkeyPatch], str]]:
    def variable(name: str, value: str) -> Callable[[pytest.MonkeyPatch], str]:
        def give(monkeypatch):
            monkeypatch.setenv(name, value)
            return name
        return give

    def config(monkeypatch):
        (home / "config.yaml").write_text("plugins:\n  enabled: [work]\npm:\n  no_index: true\n")
        return f"{home / 'config.yaml'} pm.no_index"

    def pip_conf(monkeypatch):
        path = _write(tmp_path / "xdg" / "pip" / "pip.conf", "[global]\nno-index = yes\n")
        return f"{path} [global] no-index"

    def uv_toml(monkeypatch):
        return f"{_write(tmp_path / 'xdg' / 'uv' / 'uv.toml', 'no-index = true')} no-index"

    return {"HERMES_PM_NO_INDEX": variable("HERMES_PM_NO_INDEX", "1"), "pm.no_index": config,
            "UV_NO_INDEX": variable("UV_NO_INDEX", "true"), "PIP_NO_INDEX": variable("PIP_NO_INDEX", "on"),
            "pip.conf": pip_conf, "uv.toml": uv_toml}


@pytest.mark.parametrize("place", ["HERMES_PM_NO_INDEX", "pm.no_index", "UV_NO_INDEX", "PIP_NO_INDEX", "pip.conf",
                                   "uv.toml"])
def test_no_index_from_each_place(place, home, index, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HERMES_PM_INDEX_URL", index.url)
    monkeypatch.setenv("HERMES_PM_FIND_LINKS", str(_wheels(tmp_path / "wheels", "2.0")))
    source = _no_index_givers(tmp_path, home)[place](monkeypatch)
    code, receipt, err = _resolve(capsys, home)
    assert code == 0, err
    assert _alpha(receipt)[0] == "2.0"
    assert receipt["inputs"]["index"]["urls"] == []
    assert receipt["inputs"]["index"]["sources"]["no_index"] == source
    assert not index.requests  # the index was never asked


def test_uv_offline_keeps_pm_off_the_network(home, index, monkeypatch, capsys):
    monkeypatch.setenv("HERMES_PM_INDEX_URL", index.url)
    monkeypatch.setenv("UV_OFFLINE", "1")
    code, receipt, err = _resolve(capsys, home)
    assert code != 0 and "offline" in err
    assert receipt["inputs"]["index"]["offline"] is True
    assert receipt["inputs"]["index"]["sources"]["offline"] == "UV_OFFLINE"
    assert not index.requests
    monkeypatch.setenv("UV_OFFLINE", "0")  # an explicit no: the index is asked
    code, receipt, err = _resolve(capsys, home)
    assert code == 0, err
    assert receipt["inputs"]["index"]["offline"] is False and index.requests


def test_one_precedence_rule_for_every_place(home, tmp_path, monkeypatch):
    """flag > HERMES_PM_* > config.yaml pm.* > UV_* > PIP_* > uv.toml > pip.conf > default: each
    place is taken away in turn and the next one gives the setting."""
    pip_conf = _write(tmp_path / "xdg" / "pip" / "pip.conf", "[global]\nindex-url = http://pip-conf.example/simple/\n")
    uv_toml = _write(tmp_path / "xdg" / "uv" / "uv.toml", 'index-url = "http://uv-toml.example/simple/"\n')
    config_text = "plugins:\n  enabled: [work]\npm:\n  index_url: http://config.example/simple/\n"
    (home / "config.yaml").write_text(config_text)
    env = {"HOME": os.environ["HOME"], "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "XDG_CONFIG_DIRS": str(tmp_path / "none"),
           "HERMES_PM_INDEX_URL": "http://hermes.example/simple/", "UV_DEFAULT_INDEX": "http://uv.example/simple/",
           "PIP_INDEX_URL": "http://pip.example/simple/"}
    flags = Flags(index_url="http://flag.example/simple/")

    def chosen() -> tuple[str, str]:
        settings = resolve_settings(flags, read_config(home), env)
        return settings.index_urls[-1], dict(settings.sources).get("index_url", "default")

    assert chosen() == ("http://flag.example/simple/", "--index-url")
    flags = Flags()
    assert chosen() == ("http://hermes.example/simple/", "HERMES_PM_INDEX_URL")
    del env["HERMES_PM_INDEX_URL"]
    assert chosen() == ("http://config.example/simple/", f"{home / 'config.yaml'} pm.index_url")
    (home / "config.yaml").write_text("plugins:\n  enabled: [work]\n")
    assert chosen() == ("http://uv.example/simple/", "UV_DEFAULT_INDEX")
    del env["UV_DEFAULT_INDEX"]
    assert chosen() == ("http://pip.example/simple/", "PIP_INDEX_URL")
    del env["PIP_INDEX_URL"]
    assert chosen() == ("http://uv-toml.example/simple/", f"{uv_toml} index-url")
    uv_toml.unlink()
    assert chosen() == ("http://pip-conf.example/simple/", f"{pip_conf} [global] index-url")
    env["PIP_CONFIG_FILE"] = os.devnull  # pip's own switch: no pip.conf at all
    assert chosen() == (DEFAULT_INDEX_URL, "default")


def test_a_settings_explicit_no_beats_a_later_yes(home, tmp_path):
    _write(tmp_path / "xdg" / "pip" / "pip.conf", "[global]\nno-index = true\n")
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HERMES_PM_NO_INDEX": "0", "HOME": str(tmp_path / "user")}
    settings = resolve_settings(Flags(), read_config(home), env)
    assert settings.index_urls == (DEFAULT_INDEX_URL,)
    assert dict(settings.sources) == {"no_index": "HERMES_PM_NO_INDEX"}
    env["UV_NO_CONFIG"] = "1"  # uv's switch leaves pip.conf alone
    del env["HERMES_PM_NO_INDEX"]
    assert resolve_settings(Flags(), read_config(home), env).index_urls == ()


def test_a_broken_file_or_value_is_named_with_its_key(home, index, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HERMES_PM_INDEX_URL", index.url)
    uv_toml = _write(tmp_path / "xdg" / "uv" / "uv.toml", 'find-links = "wheels"\n')
    code, _, err = _resolve(capsys, home)
    assert code != 0 and f"{uv_toml}: find-links: must be a list, got 'wheels'" in err
    uv_toml.write_text("no-index = [\n")
    code, _, err = _resolve(capsys, home)
    assert code != 0 and f"{uv_toml}: is not valid TOML" in err
    uv_toml.unlink()
    pip_conf = _write(tmp_path / "xdg" / "pip" / "pip.conf", "[global]\nno-index = maybe\n")
    code, _, err = _resolve(capsys, home)
    assert code != 0 and f"{pip_conf}: [global] no-index: 'maybe' is not a boolean" in err
    pip_conf.write_text("[global]\n" + "# padding\n" * 30000)
    code, _, err = _resolve(capsys, home)
    assert code != 0 and f"{pip_conf}: is {pip_conf.stat().st_size} bytes; the limit is 262144 bytes" in err
    pip_conf.unlink()
    monkeypatch.setenv("UV_NO_INDEX", "maybe")
    code, _, err = _resolve(capsys, home)
    assert code == 2 and "UV_NO_INDEX: 'maybe' is not a boolean" in err
    monkeypatch.delenv("UV_NO_INDEX")
    monkeypatch.setenv("UV_CONFIG_FILE", str(tmp_path / "missing.toml"))
    code, _, err = _resolve(capsys, home)
    assert code != 0 and str(tmp_path / "missing.toml") in err


def test_what_pm_cannot_honour_is_a_warning_naming_its_place(home, index, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HERMES_PM_INDEX_URL", index.url)
    monkeypatch.setenv("UV_KEYRING_PROVIDER", "subprocess")
    monkeypatch.setenv("PIP_KEYRING_PROVIDER", "import")
    uv_toml = _write(tmp_path / "xdg" / "uv" / "uv.toml",
                     '[[index]]\nname = "pinned"\nurl = "http://127.0.0.1:9/simple/"\nexplicit = true\n')
    code, receipt, err = _resolve(capsys, home)
    assert code == 0, err
    assert receipt["warnings"] == [
        "UV_KEYRING_PROVIDER = subprocess: pm does not ask keyring for index credentials (nor does the uv it runs "
        "for builds); give them in the index URL, ~/.netrc or $NETRC",
        "PIP_KEYRING_PROVIDER = import: pm does not ask keyring for index credentials (nor does the uv it runs for "
        "builds); give them in the index URL, ~/.netrc or $NETRC",
        f"{uv_toml} [[index]] pinned: an explicit index serves only packages pinned to it in tool.uv.sources; "
        "pm has no such pins and does not search it",
    ]
    assert "UV_KEYRING_PROVIDER" in err and "explicit index" in err


def test_pips_cert_setting_is_a_warning_unless_pm_trusts_that_bundle_anyway(home, index, tmp_path, monkeypatch,
                                                                           capsys):
    monkeypatch.setenv("HERMES_PM_INDEX_URL", index.url)
    bundle = _write(tmp_path / "corp-ca.pem", "")
    monkeypatch.setenv("PIP_CERT", str(bundle))
    pip_conf = _write(tmp_path / "xdg" / "pip" / "pip.conf", f"[global]\ncert = {bundle}\n")
    code, receipt, err = _resolve(capsys, home)
    assert code == 0, err
    assert receipt["warnings"] == [
        f"PIP_CERT = {bundle}: pm's HTTPS client does not read pip's cert setting; it trusts SSL_CERT_FILE and "
        f"SSL_CERT_DIR, else the system's CAs (SSL_CERT_FILE={bundle} trusts this bundle)",
        f"{pip_conf} [global] cert = {bundle}: pm's HTTPS client does not read pip's cert setting; it trusts "
        f"SSL_CERT_FILE and SSL_CERT_DIR, else the system's CAs (SSL_CERT_FILE={bundle} trusts this bundle)"]
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))  # the same bundle: nothing to say
    assert _resolve(capsys, home)[1]["warnings"] == []


@pytest.mark.parametrize("variable", ["ALL_PROXY", "http_proxy", "HTTP_PROXY"])
def test_a_socks_proxy_is_refused_naming_its_variable(variable, home, index, monkeypatch, capsys):
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy",
                 "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(variable, "socks5h://user:secret@127.0.0.1:1080")
    monkeypatch.setenv("HERMES_PM_INDEX_URL", index.url)
    code, _, err = _resolve(capsys, home)
    assert code != 0
    assert (f"{variable}=socks5h://user:****@127.0.0.1:1080 is a SOCKS proxy, which pm's HTTP client cannot use: "
            "name an HTTP proxy in HTTP_PROXY, or add 127.0.0.1 to NO_PROXY") in err
    assert "secret" not in err and not index.requests
