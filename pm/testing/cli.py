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
