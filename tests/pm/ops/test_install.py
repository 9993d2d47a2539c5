"""pm.ops.install: install and remove are operations — every one writes a receipt, refusals too."""

from __future__ import annotations

import json
from pathlib import Path

from agent.cli import main
from pm.testing.receipts import assert_valid_receipt

from .conftest import plugin


def latest(home: Path) -> dict:
    receipt = json.loads((home / "pm/receipts/latest.json").read_text())
    assert_valid_receipt(receipt)
    return receipt


def test_a_refused_install_writes_a_receipt(env, capsys):
    home = env / "home"
    (home / "plugins").mkdir(parents=True)
    (home / "config.yaml").write_text("{}\n")
    assert main(["plugins", "install", "no-such-entry", "--home", str(home)]) == 1
    receipt = latest(home)
    assert (receipt["kind"], receipt["outcome"], receipt["exit_code"], receipt["candidate"]) == (
        "install", "refused", 1, "no-such-entry")
    assert receipt["failure"]["kind"] == "install"
    assert receipt["failure"]["message"].startswith("'no-such-entry' is not in the catalog (")
    err = capsys.readouterr().err
    assert err.startswith("refused: 'no-such-entry' is not in the catalog (")
    assert f"\nreceipt: {home / 'pm/receipts'}/" in err
    assert sorted(p.name for p in (home / "plugins").iterdir()) == []


def test_an_install_and_a_refused_remove_write_receipts(env, capsys):
    home = env / "home"
    home.mkdir()
    (home / "config.yaml").write_text("plugins:\n  enabled: [fresh]\n")
    source = plugin(env / "elsewhere", "fresh", [])
    assert main(["plugins", "install", str(source), "--home", str(home)]) == 0
    assert (latest(home)["kind"], latest(home)["outcome"], latest(home)["installed"]) == ("install", "ok", "fresh")
    assert main(["plugins", "remove", "fresh", "--home", str(home)]) == 1  # still enabled
    receipt = latest(home)
    assert (receipt["kind"], receipt["outcome"], receipt["failure"]["kind"]) == ("remove", "refused", "still-enabled")
    assert (home / "plugins/fresh").is_dir()
    assert "refused: plugin 'fresh' is enabled; run `hermes plugins disable fresh` first" in capsys.readouterr().err
