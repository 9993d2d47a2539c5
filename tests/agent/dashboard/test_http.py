"""The dashboard's guards over HTTP, without a browser: the token, the Host, 404s, read-only mode,
and never a traceback in a page."""

from __future__ import annotations

import urllib.error
import urllib.request
from html import unescape
from pathlib import Path

import pytest

from agent.dashboard.server import App
from pm.ops.status import status

from .conftest import Served, serve


def fetch(url: str, data: bytes | None = None, headers: dict[str, str] | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:  # noqa: S310 (127.0.0.1)
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_every_request_needs_the_token(served: Served) -> None:
    for path in ("/", "/plugins", "/readiness", "/providers/vault", "/plugins/calendar"):
        code, body = fetch(served.base + path)
        assert (code, "needs the token" in body) == (403, True), path
        code, _ = fetch(served.base + path + "?token=" + "x" * len(served.token))
        assert code == 403
    code, body = fetch(served.base + "/actions/rollback", data=b"name=x")
    assert code == 403 and "calendar" not in body
    assert fetch(served.url)[0] == 200


def test_another_host_name_is_refused(served: Served) -> None:
    """A page of another site that rebinds its name to 127.0.0.1 sends its own Host: refused."""
    code, body = fetch(served.url, headers={"Host": "attacker.example:80"})
    assert (code, "unexpected Host" in body) == (403, True)


def test_unknown_pages_are_404_without_a_traceback(served: Served) -> None:
    for path, said in (("/plugins/no-such-plugin", "no plugin 'no-such-plugin' in this home"),
                       ("/providers/honcho", "no memory provider 'honcho' in this home"),
                       ("/nowhere", "no page '/nowhere'")):
        code, body = fetch(served.at(path))
        assert code == 404 and said in unescape(body) and "Traceback" not in body, path


def test_the_url_is_on_127_0_0_1_and_an_ephemeral_port(served: Served) -> None:
    assert served.base.startswith("http://127.0.0.1:") and not served.base.endswith(":0")
    assert len(served.token) >= 32


def test_read_only_by_default(served: Served) -> None:
    """Without --allow-actions the buttons are disabled and a POST is refused, changing nothing."""
    app = App(served.home)
    before = status(served.home)
    code, page = app.handle("POST", "/actions/rollback", {"token": app.token})
    assert code == 403 and "start it with `hermes dashboard --allow-actions`" in unescape(page)
    assert status(served.home)["selected"] == before["selected"]
    code, page = app.handle("GET", "/generations", {})
    assert code == 200 and "disabled" in page and "Read-only" in page


def test_a_broken_config_is_a_message_not_a_traceback(served: Served, tmp_path: Path) -> None:
    home = tmp_path / "broken"
    home.mkdir()
    (home / "config.yaml").write_text("plugins: [unclosed\n")
    code, page = App(home).handle("GET", "/plugins", {})
    assert code == 500 and f"{home / 'config.yaml'}" in unescape(page) and "Traceback" not in page


def test_a_missing_home_is_a_usage_error(served: Served, tmp_path: Path) -> None:
    process = serve(tmp_path / "nowhere", served.env)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 2 and f"--home {tmp_path / 'nowhere'}: no such folder" in err


@pytest.mark.parametrize("path", ["/plugins/%3Cscript%3E", "/plugins/..%2F..%2Fetc"])
def test_hostile_names_are_text(served: Served, path: str) -> None:
    code, body = fetch(served.at(path))
    assert code == 404 and "<script>" not in body


def test_which_next_steps_become_buttons(tmp_path: Path) -> None:
    """Enable, disable, sync and rollback of this home run from a page; any other step, or one for
    another home, is shown to run in a terminal."""
    from agent.dashboard.actions import runnable

    home = tmp_path / "home"
    for command in (f"hermes plugins disable a --home {home}", "hermes plugins enable b", "hermes pm sync",
                    f"hermes pm rollback --home {home}"):
        assert runnable(command, home) is not None, command
    for command in (f"hermes plugins disable a --home {tmp_path / 'other'}", "hermes pm why sharedlib",
                    "hermes update", "hermes plugins disable", "hermes plugins enable 'unclosed", "rm -rf /"):
        assert runnable(command, home) is None, command


def test_a_step_that_is_not_a_checked_one_of_the_latest_refusal_is_refused(served: Served) -> None:
    app = App(served.home, allow_actions=True)
    before = status(served.home)
    code, page = app.handle("POST", "/actions/step", {"token": app.token, "command": "hermes pm rollback"})
    assert code == 400 and "is not a checked next step of the latest refusal" in unescape(page)
    assert status(served.home)["selected"] == before["selected"]
