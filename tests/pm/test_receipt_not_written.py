"""A receipt that cannot be written (a full disk) is said, never dropped in silence (issue 21, item
8): the command keeps its own exit code and tells where nothing went. The full disk is real: a
16 KiB tmpfs mounted as the receipts folder (root only; skipped elsewhere, saying why)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pm.testing import NO_TOOL_FILES, make_home


@pytest.fixture
def full_receipts(tmp_path: Path) -> Iterator[Path]:
    home = make_home(tmp_path / "home")
    folder = home / "pm" / "receipts"
    folder.mkdir(parents=True)
    if os.geteuid() != 0:
        pytest.skip("mounting a tiny tmpfs needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(folder)],
                             capture_output=True, text=True, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        (folder / "filler").write_bytes(b"\0" * 16 * 1024)  # now full
    except OSError:
        pass
    try:
        yield home
    finally:
        subprocess.run(["umount", str(folder)], check=False)


def test_a_receipt_on_a_full_disk_is_a_warning_and_the_exit_code_stands(full_receipts: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "UV_", "PIP_"))}
    env |= {**NO_TOOL_FILES, "HERMES_BUNDLED_PLUGINS": str(full_receipts.parent / "none"), "NO_COLOR": "1",
            "HERMES_PM_CACHE_DIR": str(full_receipts.parent / "cache")}
    done = subprocess.run([sys.executable, "-m", "pm", "check", "--home", str(full_receipts)], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 4, done.stderr  # not ready: no generation is selected
    lines = [line for line in done.stderr.splitlines() if "receipt" in line]
    assert len(lines) == 1 and lines[0].startswith("warning: receipt not written: "), done.stderr
    assert "No space left on device" in lines[0]
