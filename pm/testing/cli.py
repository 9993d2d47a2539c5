"""Run pm's CLI in the test process and read what it left: the exit code, both streams, the
parsed ``--json`` output, and the latest receipt."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pm.cli import main


@dataclass
class Result:
    code: int
    out: str
    err: str
    data: dict[str, Any] = field(default_factory=dict)


def pm(capsys: Any, home: Path, *args: str) -> Result:
    """Run ``hermes pm <args> --home <home>`` in this process (``capsys`` is pytest's fixture);
    ``--json`` output is parsed into ``data``."""
    capsys.readouterr()
    code = main([*args, "--home", str(home)])
    captured = capsys.readouterr()
    data = json.loads(captured.out) if "--json" in args and captured.out.strip() else {}
    return Result(code, captured.out, captured.err, data)


def latest(home: Path) -> dict[str, Any]:
    """The receipt of the last pm operation on ``home``."""
    data: dict[str, Any] = json.loads((home / "pm" / "receipts" / "latest.json").read_text())
    return data


#: Variables that would let the caller's environment leak into a test's pm runs.
LEAKY_VARIABLES = ("HERMES_HOME", "HERMES_PM_PAUSE_AT", "HERMES_PM_UV", "HERMES_PM_FIND_LINKS", "HERMES_PM_CORE_LOCK",
                   "HERMES_ENABLE_PROJECT_PLUGINS", "HERMES_PM_MANAGED", "NO_COLOR")


def isolated_env(monkeypatch: Any, *, index_url: str, shared: Path) -> dict[str, str]:
    """Point pm (in this process, via ``monkeypatch``) at ``index_url`` and at ``shared``'s core
    (``core.toml``), empty bundled folder (``bundled/``) and cache; returns the environment for
    subprocesses (with this checkout importable)."""
    import os

    for name in LEAKY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    settings = {"HERMES_BUNDLED_PLUGINS": str(shared / "bundled"), "HERMES_PM_CACHE_DIR": str(shared / "cache"),
                "HERMES_PM_INDEX_URL": index_url, "HERMES_PM_CORE": str(shared / "core.toml")}
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    return {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
