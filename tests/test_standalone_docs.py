"""Issue 25: the repository's docs stand alone. What the design and style notes kept outside the
repository said that the code relies on is in docs/design.md and CONTRIBUTING.md; no file points
a reader at a note they cannot open."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUTSIDE = ("DESIGN" + ".md", "STYLE" + ".md")


def test_no_tracked_file_refers_to_notes_outside_the_repository() -> None:
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    found = []
    for name in files.decode().split("\0"):
        path = ROOT / name
        if not name or not path.is_file():
            continue
        text = path.read_bytes().decode("utf-8", "replace")
        found += [f"{name}: {word}" for word in OUTSIDE if word in text]
    assert found == []


def test_the_design_and_the_contributing_guide_are_in_the_repository() -> None:
    assert "## One rule per fact" in (ROOT / "docs" / "design.md").read_text()
    assert "docs/design.md" in (ROOT / "CONTRIBUTING.md").read_text()
