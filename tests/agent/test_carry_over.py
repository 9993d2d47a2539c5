"""Plugins of the real ecosystem carry over (issue 36): a ``kind: exclusive`` provider is a memory
provider."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from agent.discovery import find_memory_provider
from agent.memory_cli import main as memory_main
from agent.testing import provider_init
from pm.cli import main as pm_main

#: A manifest as a real catalog plugin writes it for a provider chosen by memory.provider.
EXCLUSIVE_MANIFEST = "name: soullink\nversion: 0.3.0\nkind: exclusive\ndescription: a memory backend\n"


def _root(home: Path, name: str, manifest: str, init: str) -> Path:
    root = home / "plugins" / name
    root.mkdir(parents=True)
    (root / "plugin.yaml").write_text(manifest)
    (root / "__init__.py").write_text(init)
    return root


def test_a_kind_exclusive_plugin_is_the_memory_provider_its_config_names(
    new_home: Callable[..., Path], capsys: pytest.CaptureFixture[str],
) -> None:
    home = new_home({"memory": {"provider": "soullink"}})
    # its code names nothing the text scan knows: the manifest's kind alone says what it is
    _root(home, "soullink", EXCLUSIVE_MANIFEST, "def register(ctx):\n    pass\n")
    info = find_memory_provider(home, "soullink")
    assert info is not None and (info.source, info.key) == ("user", "soullink")
    assert pm_main(["scan", "--home", str(home), "--json"]) == 0
    scanned = json.loads(capsys.readouterr().out)
    plugin = next(p for p in scanned["plugins"] if p["name"] == "soullink")
    assert (plugin["memory_provider"], plugin["status"]) == (True, "sidecar-only")  # by memory.provider
    assert not [n for n in scanned["notices"] if "is installed" in n], scanned["notices"]


def test_hermes_memory_status_loads_a_kind_exclusive_provider(
    new_home: Callable[..., Path], capsys: pytest.CaptureFixture[str],
) -> None:
    home = new_home({"memory": {"provider": "soullink"}})
    _root(home, "soullink", EXCLUSIVE_MANIFEST, provider_init("soullink"))
    assert memory_main(["status", "--home", str(home)]) == 0, capsys.readouterr().err
    assert "memory provider: soullink (user," in capsys.readouterr().out
