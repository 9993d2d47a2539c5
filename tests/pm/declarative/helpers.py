"""Helpers of the declarative-build tests: run pm in-process, read receipts, edit files."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pm import generations
from pm.cli import main


@dataclass
class Result:
    code: int
    out: str
    err: str
    data: dict[str, Any] = field(default_factory=dict)


def pm(capsys: pytest.CaptureFixture[str], home: Path, *args: str) -> Result:
    """Run ``hermes pm <args> --home <home>`` in this process; ``--json`` output is parsed."""
    capsys.readouterr()
    code = main([*args, "--home", str(home)])
    captured = capsys.readouterr()
    data = json.loads(captured.out) if "--json" in args and captured.out.strip() else {}
    return Result(code, captured.out, captured.err, data)


def latest(home: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((home / "pm" / "receipts" / "latest.json").read_text())
    return data


def pins_of(generation: generations.Generation | None) -> dict[str, str]:
    assert generation is not None, "no generation is selected"
    return generation.pins


def installed(generation: generations.Generation | None) -> dict[str, str]:
    """What the generation's site-packages holds (from ``*.dist-info`` names, as readiness reads it)."""
    assert generation is not None
    return {str(k): str(v) for k, v in generations.installed_versions(generation.site_packages).items()}


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (old, text)
    path.write_text(text.replace(old, new))
