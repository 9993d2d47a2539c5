"""pm.inputs.index_settings: one precedence rule over the flag, pm's variables, config.yaml, uv's and pip's
variables and files; each chosen setting keeps its source."""

from __future__ import annotations

from pathlib import Path

import pytest

from pm.base.errors import UsageError
from pm.inputs.index_settings import KEYS, choose, pip_layer, uv_layer
from pm.inputs.settings import Flags
from pm.inputs.tool_files import Given


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """No uv.toml or pip.conf unless a test writes one."""
    return {"HOME": str(tmp_path / "user"), "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
            "XDG_CONFIG_DIRS": str(tmp_path / "etc"), "PIP_CONFIG_FILE": "/dev/null"}


def test_uv_variables_split_as_uv_does():
    warnings: list[str] = []
    layer = uv_layer({"UV_INDEX_URL": " http://old.example/ ", "UV_INDEX": "corp=http://corp.example/ http://x.example/?a=b",
                      "UV_EXTRA_INDEX_URL": "http://extra.example/", "UV_FIND_LINKS": "/a, /b,,",
                      "UV_NO_INDEX": "false", "UV_OFFLINE": "yes"}, warnings)
    assert layer == {
        "index_url": Given("http://old.example/", "UV_INDEX_URL"),
        "extra_index_urls": Given(("http://corp.example/", "http://x.example/?a=b", "http://extra.example/"),
                                  "UV_INDEX and UV_EXTRA_INDEX_URL"),
        "find_links": Given(("/a", "/b"), "UV_FIND_LINKS"),
        "no_index": Given(False, "UV_NO_INDEX"),
        "offline": Given(True, "UV_OFFLINE"),
    }
    assert warnings == []
    assert uv_layer({"UV_DEFAULT_INDEX": "http://d/", "UV_INDEX_URL": "http://old/"}, [])["index_url"].source == \
        "UV_DEFAULT_INDEX"


def test_pip_variables_split_on_whitespace():
    layer = pip_layer({"PIP_FIND_LINKS": "/a\n /b", "PIP_EXTRA_INDEX_URL": "http://e/", "PIP_NO_INDEX": "1",
                       "PIP_INDEX_URL": ""}, [])
    assert layer == {"find_links": Given(("/a", "/b"), "PIP_FIND_LINKS"),
                     "extra_index_urls": Given(("http://e/",), "PIP_EXTRA_INDEX_URL"),
                     "no_index": Given(True, "PIP_NO_INDEX")}


def test_each_setting_is_taken_whole_from_the_first_place(env, tmp_path):
    env |= {"UV_FIND_LINKS": "/uv", "PIP_FIND_LINKS": "/pip", "PIP_EXTRA_INDEX_URL": "http://pip-extra/",
            "HERMES_PM_OFFLINE": "0", "UV_OFFLINE": "1"}
    pm = {"find_links": ["here"], "no_index": False}
    chosen = choose(Flags(index_url="http://flag/"), pm, tmp_path / "home" / "config.yaml", env)
    assert chosen.sources() == {"index_url": "--index-url", "extra_index_urls": "PIP_EXTRA_INDEX_URL",
                                "find_links": f"{tmp_path / 'home' / 'config.yaml'} pm.find_links",
                                "no_index": f"{tmp_path / 'home' / 'config.yaml'} pm.no_index",
                                "offline": "HERMES_PM_OFFLINE"}
    assert chosen.value("find_links") == ("here",) and chosen.given["find_links"].base == tmp_path / "home"
    assert chosen.value("offline") is False and list(chosen.sources()) == list(KEYS)


def test_a_bad_boolean_in_pms_own_variable_is_a_usage_error(env, tmp_path):
    with pytest.raises(UsageError) as failed:
        choose(Flags(), {}, tmp_path / "config.yaml", env | {"HERMES_PM_NO_INDEX": "sometimes"})
    assert str(failed.value) == "HERMES_PM_NO_INDEX: 'sometimes' is not a boolean (use 1/0, true/false, yes/no or on/off)"
