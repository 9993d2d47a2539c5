"""The one redaction (pm.base.urls): every credential form, wherever a URL is shown."""

from __future__ import annotations

import pytest

from pm.base.urls import redact_url
from pm.index.base import IndexFailure
from pm.index.http import HttpClient


@pytest.mark.parametrize(("url", "shown"), [
    ("https://user:secret@host/simple/", "https://user:****@host/simple/"),
    ("https://TOKEN@host/simple/", "https://****@host/simple/"),
    ("https://user:@host/simple/", "https://user:****@host/simple/"),
    ("git+https://me:ghp_x@github.example/r.git@" + "a" * 40, "git+https://me:****@github.example/r.git@" + "a" * 40),
    ("https://host/simple/", "https://host/simple/"),
    ("http://[::1/", "<an unparsable URL>"),
])
def test_every_credential_form_is_hidden(url: str, shown: str) -> None:
    assert redact_url(url) == shown


@pytest.mark.parametrize(("url", "written"), [
    ("https://user:secret@host/simple/", "https://user@host/simple/"),
    ("https://TOKEN@host/simple/", "https://host/simple/"),
    ("https://host/simple/", "https://host/simple/"),
    ("file:///srv/wheels", "file:///srv/wheels"),
])
def test_for_a_file_tools_read_the_password_is_dropped_not_masked(url: str, written: str) -> None:
    """A masked password in a requirements file would be sent as the password: pip and uv take
    the real one from netrc or a keyring only when the URL has none."""
    assert redact_url(url, for_tools=True) == written


def test_an_index_failure_never_shows_a_token_alone_in_the_user_part() -> None:
    """The index client's errors went through its own redactor, which left ``TOKEN@host`` whole."""
    client = HttpClient(timeout=2)
    with pytest.raises(IndexFailure) as failure:
        client.get("http://TOKEN@127.0.0.1:9/simple/alpha/")
    assert "TOKEN" not in str(failure.value) and "****@127.0.0.1:9" in str(failure.value)


def test_a_login_alone_in_an_ssh_url_is_no_secret() -> None:
    assert redact_url("git+ssh://git@host/x/y.git") == "git+ssh://git@host/x/y.git"
    assert redact_url("ssh://me:pw@host/x") == "ssh://me:****@host/x"
