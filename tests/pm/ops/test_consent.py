"""Issue 36, finding 4: a change's cargo (new projects with versions and sizes, moved pins) is shown
and consented to before ``plugins enable`` / ``update`` change anything: on a terminal it asks
(y/N); without one it needs ``--yes`` or ``pm.assume_yes``, else it is refused (exit 3, config.yaml
byte-identical); admission dry runs never ask; the receipt records the consent."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent.cli import main
from pm.env import generations
from pm.ops.consent import Brought, Cargo, size
from pm.testing.receipts import assert_valid_receipt

from .conftest import plugin

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def home(env: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A synced home with plugin ``a`` (sharedlib 1.x: 1.5.0) enabled; ``b`` (sharedlib<1.5, extra-lib) and ``c`` (nothing) not."""
    monkeypatch.delenv("HERMES_PM_ASSUME_YES", raising=False)  # the suite assumes it (tests/conftest.py)
    home = env / "home"
    plugin(home / "plugins", "a", ["sharedlib==1.*"])
    plugin(home / "plugins", "b", ["sharedlib<1.5", "extra-lib"])
    plugin(home / "plugins", "c", [])
    (home / "config.yaml").write_text("# mine\nplugins:\n  enabled:\n    - a\n")
    assert main(["pm", "sync", "--home", str(home)]) == 0
    return home


def latest(home: Path) -> dict:
    receipt = json.loads((home / "pm/receipts/latest.json").read_text())
    assert_valid_receipt(receipt)
    return receipt


def test_no_terminal_without_yes_is_refused_and_changes_nothing(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = (home / "config.yaml").read_bytes()
    selected = generations.read_state(home)["selected"]
    assert main(["plugins", "enable", "b", "--home", str(home)]) == 3
    assert (home / "config.yaml").read_bytes() == config
    assert generations.read_state(home)["selected"] == selected
    err = capsys.readouterr().err
    assert "enabling plugin 'b' brings:" in err
    assert "+ extra-lib==1.0" in err and "~ sharedlib 1.5.0 -> 1.4.0" in err
    receipt = latest(home)
    assert (receipt["outcome"], receipt["exit_code"], receipt["failure"]["kind"]) == ("refused", 3, "not-consented")
    assert receipt["consent"]["given"] is None
    assert [b["name"] for b in receipt["consent"]["cargo"]["new"]] == ["extra-lib"]
    assert receipt["consent"]["cargo"]["moved"] == [
        {"name": "sharedlib", "version": "1.4.0", "size": receipt["consent"]["cargo"]["moved"][0]["size"], "was": "1.5.0"}]
    assert receipt["consent"]["cargo"]["download_bytes"] > 0
    assert receipt["next_steps"][0]["command"] == f"hermes plugins enable b --yes --home {home}"


def test_yes_consents_and_the_receipt_says_how(home: Path) -> None:
    assert main(["plugins", "enable", "b", "--home", str(home), "--yes"]) == 0
    receipt = latest(home)
    assert receipt["outcome"] == "ok"
    assert receipt["consent"]["given"] == "--yes"
    assert generations.selected(home).pins["extra-lib"] == "1.0"  # type: ignore[union-attr]


@pytest.mark.parametrize("how", ["config", "environment"])
def test_the_setting_consents(home: Path, how: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if how == "config":
        (home / "config.yaml").write_text("pm:\n  assume_yes: true\nplugins:\n  enabled:\n    - a\n")
    else:
        monkeypatch.setenv("HERMES_PM_ASSUME_YES", "1")
    assert main(["plugins", "enable", "b", "--home", str(home)]) == 0
    assert latest(home)["consent"]["given"] == "setting"


def test_the_environment_beats_the_config(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (home / "config.yaml").write_text("pm:\n  assume_yes: true\nplugins:\n  enabled:\n    - a\n")
    monkeypatch.setenv("HERMES_PM_ASSUME_YES", "0")
    assert main(["plugins", "enable", "b", "--home", str(home)]) == 3


def test_a_change_that_brings_nothing_needs_no_consent(home: Path) -> None:
    assert main(["plugins", "enable", "c", "--home", str(home)]) == 0
    assert "consent" not in latest(home)


def test_a_dry_run_never_asks(home: Path) -> None:
    assert main(["pm", "resolve", "--with", "b", "--home", str(home)]) == 0
    assert "consent" not in latest(home)


def test_update_asks_for_what_its_sync_brings(home: Path) -> None:
    """An update whose rebuild brings a new project (b enabled by hand in config.yaml) needs consent."""
    config = "plugins:\n  enabled:\n    - a\n    - b\n"
    (home / "config.yaml").write_text(config)
    selected = generations.read_state(home)["selected"]
    assert main(["update", "--home", str(home)]) == 3
    assert generations.read_state(home)["selected"] == selected
    assert latest(home)["next_steps"][0]["command"] == f"hermes update --yes --home {home}"
    assert main(["update", "--home", str(home), "--yes"]) == 0
    assert latest(home)["consent"]["given"] == "--yes"


def _expect(fd: int, text: str, seen: bytearray) -> None:
    deadline = time.monotonic() + 60
    while text.encode() not in seen:
        assert time.monotonic() < deadline, f"waited for {text!r}; got {bytes(seen)!r}"
        if select.select([fd], [], [], 0.5)[0]:
            try:
                seen += os.read(fd, 4096)
            except OSError:
                break


def _on_a_terminal(home: Path, answer: str) -> tuple[int, str]:
    """``hermes plugins enable b`` on a real pseudo-terminal, answering the question with ``answer``."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "agent.cli", "plugins", "enable", "b", "--home", str(home)],
                            stdin=slave, stdout=slave, stderr=slave, close_fds=True, start_new_session=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    os.close(slave)
    seen = bytearray()
    try:
        _expect(master, "go ahead? [y/N] ", seen)
        os.write(master, answer.encode() + b"\n")
        _expect(master, "receipt:", seen)
        code = proc.wait(timeout=60)
    finally:
        proc.kill()
        os.close(master)
    return code, seen.decode(errors="replace")


def test_a_terminal_asks_and_yes_goes_ahead(home: Path) -> None:
    code, said = _on_a_terminal(home, "y")
    assert code == 0, said
    assert "+ extra-lib==1.0" in said
    assert latest(home)["consent"]["given"] == "terminal"
    assert "b" in (home / "config.yaml").read_text()


def test_a_terminal_asks_and_no_changes_nothing(home: Path) -> None:
    config = (home / "config.yaml").read_bytes()
    code, said = _on_a_terminal(home, "n")
    assert code == 3, said
    assert (home / "config.yaml").read_bytes() == config
    receipt = latest(home)
    assert receipt["failure"]["kind"] == "not-consented"
    assert "declined at the terminal" in receipt["failure"]["message"]


def test_the_cargo_in_words() -> None:
    cargo = Cargo((Brought("extra-lib", "1.0", 912),), (Brought("sharedlib", "1.4.0", 2_500_000, "1.5.0"),))
    assert cargo.lines("enabling plugin 'b'") == [
        "enabling plugin 'b' brings:", "  + extra-lib==1.0 (912 B)", "  ~ sharedlib 1.5.0 -> 1.4.0 (2.5 MB)",
        "  1 new, 1 moved, 2.5 MB to download"]
    assert (size(None), size(1_500), bool(Cargo())) == ("size unknown", "1.5 kB", False)


def test_a_generation_built_before_is_not_selected_again_without_consent(home: Path) -> None:
    """The reuse branch: ``update`` would select the generation an earlier consented enable built;
    what it brings over the selected one is asked for again."""
    assert main(["plugins", "enable", "b", "--home", str(home), "--yes"]) == 0
    built = generations.read_state(home)["selected"]
    assert main(["plugins", "disable", "b", "--home", str(home)]) == 0
    selected = generations.read_state(home)["selected"]
    (home / "config.yaml").write_text("plugins:\n  enabled:\n    - a\n    - b\n")
    assert main(["update", "--home", str(home)]) == 3
    assert generations.read_state(home)["selected"] == selected
    assert main(["update", "--home", str(home), "--yes"]) == 0
    receipt = latest(home)
    assert receipt["consent"]["given"] == "--yes"
    assert [b["name"] for b in receipt["consent"]["cargo"]["new"]] == ["extra-lib"]
    assert generations.read_state(home)["selected"] == built  # reused, not built again
