"""Issue 15 findings 15 and 16: an index whose URL carries user:password works end to end for
sync (uv gets the credentials through a private netrc, never its command line), and no receipt,
generation record or message holds the password; receipts are 0600."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from agent.cli import main
from pm.base.errors import PmError
from pm.env import generations
from pm.env.build import uv_credentials
from pm.testing import index_from_spec

from .conftest import plugin

SECRET = "S3CRET"


@pytest.fixture(scope="module")
def private_index(tmp_path_factory):
    with index_from_spec(tmp_path_factory.mktemp("private"), {"sharedlib": {"1.4.0": []}}) as served:
        served.basic_auth = f"alice:{SECRET}"
        yield served


def test_sync_from_an_index_with_credentials_installs_and_leaks_nothing(env: Path, private_index, monkeypatch,
                                                                       capsys) -> None:
    url = private_index.url.replace("http://", f"http://alice:{SECRET}@")
    monkeypatch.setenv("HERMES_PM_INDEX_URL", url)
    home = env / "home"
    plugin(home / "plugins", "notes", ["sharedlib==1.4.0"])
    (home / "config.yaml").write_text("plugins:\n  enabled: [notes]\n")
    code = main(["pm", "sync", "--home", str(home)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    receipt_file = home / "pm/receipts/latest.json"
    receipt = json.loads(receipt_file.read_text())
    assert receipt["inputs"]["index"]["urls"] == [url.replace(SECRET, "****")]
    assert stat.S_IMODE(receipt_file.stat().st_mode) == 0o600
    selected = generations.selected(home)
    assert selected is not None
    leaked = [p for folder in (home / "pm", env / "cache") for p in folder.rglob("*")
              if p.is_file() and not p.is_symlink() and SECRET.encode() in p.read_bytes()]
    assert (env / "cache").is_dir() and leaked == []
    assert SECRET not in captured.out + captured.err


def test_uv_credentials_is_a_private_netrc_removed_afterwards() -> None:
    with uv_credentials(["https://alice:p%40ss@index.example/simple/", "https://open.example/simple/"]) as env:
        netrc = Path(env["NETRC"])
        assert netrc.read_text() == "machine index.example login alice password p@ss\n"
        assert stat.S_IMODE(netrc.stat().st_mode) == 0o600
        assert stat.S_IMODE(netrc.parent.stat().st_mode) == 0o700
    assert not netrc.parent.exists()
    with uv_credentials(["https://open.example/simple/"]) as env:
        assert env == {}


def test_a_password_netrc_cannot_carry_is_refused_without_showing_it() -> None:
    with pytest.raises(PmError) as caught, uv_credentials(["https://alice:a%20b@index.example/simple/"]):
        pass
    assert "a b" not in str(caught.value) and "alice:****@index.example" in str(caught.value)


def test_the_users_own_netrc_stays_visible_to_uv(tmp_path: Path, monkeypatch) -> None:
    own = tmp_path / "netrc"
    own.write_text("machine other.example login bob password hunter2\n")
    monkeypatch.setenv("NETRC", str(own))
    with uv_credentials(["https://alice:pw@index.example/simple/"]) as env:
        assert Path(env["NETRC"]).read_text() == ("machine index.example login alice password pw\n\n"
                                                  "machine other.example login bob password hunter2\n")
