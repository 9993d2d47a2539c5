"""Helpers of the declarative-build tests: run pm in-process, read receipts, edit files."""

from __future__ import annotations

from pathlib import Path

from pm.env import generations
from pm.testing.cli import Result, latest, pm  # noqa: F401 - shared by these tests


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
