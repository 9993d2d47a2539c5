"""pm.inputs.tool_files: where uv and pip keep their config files, and what pm reads from them (real files
in a temporary HOME and XDG folders)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pm.base.errors import InputError, UsageError
from pm.inputs.tool_files import Given, boolish, pip_conf, pip_conf_files, uv_toml, uv_toml_files


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path / "user"), "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
            "XDG_CONFIG_DIRS": f"{tmp_path / 'etc-a'}{os.pathsep}{tmp_path / 'etc-b'}"}


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.mark.parametrize(("text", "value"), [("1", True), ("TRUE", True), (" yes ", True), ("on", True),
                                             ("0", False), ("false", False), ("No", False), ("off", False)])
def test_booleans_as_uv_and_pip_spell_them(text, value):
    assert boolish(text, "UV_OFFLINE") is value


def test_a_word_that_is_no_boolean_names_where_it_was():
    with pytest.raises(UsageError) as failed:
        boolish("maybe", "UV_OFFLINE")
    assert str(failed.value) == "UV_OFFLINE: 'maybe' is not a boolean (use 1/0, true/false, yes/no or on/off)"


def test_pip_conf_files_lowest_priority_first(env, tmp_path):
    xdg_dirs = [tmp_path / "etc-b" / "pip" / "pip.conf", tmp_path / "etc-a" / "pip" / "pip.conf"]
    assert pip_conf_files(env) == [*xdg_dirs, Path("/etc/pip.conf"), tmp_path / "user" / ".pip" / "pip.conf",
                                   tmp_path / "xdg" / "pip" / "pip.conf"]
    env |= {"VIRTUAL_ENV": str(tmp_path / "venv"), "PIP_CONFIG_FILE": str(tmp_path / "mine.conf")}
    assert pip_conf_files(env)[-2:] == [tmp_path / "venv" / "pip.conf", tmp_path / "mine.conf"]
    assert pip_conf_files(env | {"PIP_CONFIG_FILE": os.devnull}) == []


def test_uv_toml_files_user_over_system_or_the_one_named(env, tmp_path):
    assert uv_toml_files(env) == [Path("/etc/uv/uv.toml"), tmp_path / "etc-b" / "uv" / "uv.toml",
                                  tmp_path / "etc-a" / "uv" / "uv.toml", tmp_path / "xdg" / "uv" / "uv.toml"]
    assert uv_toml_files(env | {"UV_CONFIG_FILE": str(tmp_path / "u.toml")}) == [tmp_path / "u.toml"]
    assert uv_toml_files(env | {"UV_NO_CONFIG": "1", "UV_CONFIG_FILE": str(tmp_path / "u.toml")}) == []
    assert len(uv_toml_files(env | {"UV_NO_CONFIG": "0"})) == 4


def test_a_later_pip_conf_and_the_install_section_win(env, tmp_path):
    env["PIP_CONFIG_FILE"] = str(_write(tmp_path / "mine.conf", "[global]\nfind-links = /a /b\n"))
    user = _write(tmp_path / "xdg" / "pip" / "pip.conf",
                  "[global]\nindex-url = http://user.example/simple/\nfind-links = /never\n"
                  "[install]\nno_index = off\nkeyring-provider = subprocess\n")
    layer, warnings = pip_conf(env)
    assert layer == {
        "index_url": Given("http://user.example/simple/", f"{user} [global] index-url"),
        "find_links": Given(("/a", "/b"), f"{env['PIP_CONFIG_FILE']} [global] find-links"),
        "no_index": Given(False, f"{user} [install] no_index"),
    }
    assert warnings == [f"{user} [install] keyring-provider = subprocess: pm does not ask keyring for index "
                        "credentials (nor does the uv it runs for builds); give them in the index URL, ~/.netrc "
                        "or $NETRC"]


def test_a_pip_conf_that_does_not_parse_is_named(env, tmp_path):
    path = _write(tmp_path / "xdg" / "pip" / "pip.conf", "index-url = http://x/\n")
    with pytest.raises(InputError) as failed:
        pip_conf(env)
    assert str(failed.value).startswith(f"{path}: is not a valid pip config file: File contains no section headers.")


def test_pip_config_file_that_is_missing_is_an_error(env, tmp_path):
    env["PIP_CONFIG_FILE"] = str(tmp_path / "missing.conf")
    with pytest.raises(InputError) as failed:
        pip_conf(env)
    assert str(failed.value).startswith(f"{tmp_path / 'missing.conf'}: cannot be read:")


def test_uv_toml_indexes_in_order_and_its_default(env, tmp_path):
    path = _write(tmp_path / "xdg" / "uv" / "uv.toml", """
extra-index-url = ["http://extra.example/simple/"]
find-links = ["wheels", "/abs"]
offline = true
[[index]]
name = "first"
url = "http://first.example/simple/"
[[index]]
url = "http://default.example/simple/"
default = true
[[index]]
url = "http://second.example/simple/"
""")
    system = _write(tmp_path / "etc-a" / "uv" / "uv.toml", 'index-url = "http://system.example/"\nno-index = true\n')
    layer, warnings = uv_toml(env)
    assert layer == {
        "index_url": Given("http://default.example/simple/", f"{path} [[index]] 2 (default = true)"),
        "extra_index_urls": Given(("http://first.example/simple/", "http://second.example/simple/",
                                   "http://extra.example/simple/"), f"{path} [[index]] and extra-index-url"),
        "find_links": Given(("wheels", "/abs"), f"{path} find-links", base=path.parent),
        "offline": Given(True, f"{path} offline"),
        "no_index": Given(True, f"{system} no-index"),
    }
    assert warnings == []


@pytest.mark.parametrize(("text", "message"), [
    ('index-url = 3\n', "index-url: must be a str, got 3"),
    ('extra-index-url = ["a", 2]\n', "extra-index-url[1]: must be a str, got 2"),
    ('no-index = "yes"\n', "no-index: must be a bool, got 'yes'"),
    ('[[index]]\nname = "x"\n', "index[1].url: must be a str, got None"),
    ('index = "x"\n', "index: must be a list, got 'x'"),
])
def test_a_wrong_uv_toml_value_names_the_file_and_key(text, message, env, tmp_path):
    path = _write(tmp_path / "xdg" / "uv" / "uv.toml", text)
    with pytest.raises(InputError) as failed:
        uv_toml(env)
    assert str(failed.value) == f"{path}: {message}"
