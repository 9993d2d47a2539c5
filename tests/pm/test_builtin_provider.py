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
    """A near miss of ``builtin`` is a provider like any other: missing, and ``hermes update`` is
    the step when the catalog has it (issue 32: only then)."""
    home = tmp_path / "home"
    (home / "plugins").mkdir(parents=True)
    (home / "config.yaml").write_text("memory:\n  provider: builtins\n")
    assert pm(capsys, home, "scan", "--json").code == 0
    assert latest(home)["next_steps"] == []  # the shipped catalog has no such entry
    assert [(m.home, m.provider) for m in missing_providers(home)] == [(home, "builtins")]
    entry = {"name": "builtins", "kind": "memory", "source": {"git": "https://example.org/builtins.git",
                                                              "commit": "0" * 40}}
    (home / "catalog.json").write_text(json.dumps({"entries": [entry], "removed": []}))
    (home / "config.yaml").write_text("memory:\n  provider: builtins\npm:\n  catalog: catalog.json\n")
    assert pm(capsys, home, "scan", "--json").code == 0
    assert [s["command"].split(" --home")[0] for s in latest(home)["next_steps"]] == ["hermes update"]
