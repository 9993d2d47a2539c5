"""Issue 25: ``memory.provider: builtin`` names the host's own provider, which is always there: no
notice, no ``hermes update`` step, nothing for ``hermes update`` to install."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pm.ops.update import missing_providers
from pm.testing.cli import latest, pm


def test_the_builtin_provider_makes_no_receipt_ask_for_hermes_update(capsys: Any, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "plugins").mkdir(parents=True)
    (home / "config.yaml").write_text("memory:\n  provider: builtin\n")
    result = pm(capsys, home, "scan", "--json")
    assert result.code == 0
    receipt = latest(home)
    assert receipt["next_steps"] == []
    assert "hermes update" not in json.dumps(receipt)
    assert "hermes update" not in result.err
    assert missing_providers(home) == []


def test_a_provider_that_is_not_installed_still_asks_for_hermes_update(capsys: Any, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "plugins").mkdir(parents=True)
    (home / "config.yaml").write_text("memory:\n  provider: builtins\n")
    assert pm(capsys, home, "scan", "--json").code == 0
    assert [s["command"].split(" --home")[0] for s in latest(home)["next_steps"]] == ["hermes update"]
