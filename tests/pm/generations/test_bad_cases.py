"""Bad cases: uv missing or failing, a file whose sha256 does not match, an unwritable home.

Each leaves the selection unchanged, says what went wrong, and (where the home is writable)
writes a `failed` or `refused` receipt."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from pm.env import generations
from pm.testing import LocalIndex, build_packages
from pm.testing.index import PRESETS

from .conftest import SPEC
from .helpers import edit, latest, pm, state_bytes


@pytest.fixture
def changed(home: Path, capsys) -> generations.Generation:
    assert pm(capsys, home, "sync").code == 0
    edit(home / "plugins" / "notes" / "pyproject.toml", '"beta>=1"', '"beta>=1", "epsilon"')
    return generations.selected(home)


@pytest.mark.parametrize(("uv", "detail"), [
    ("/nonexistent", "uv failed: cannot run '/nonexistent': not found (pm runs the uv of the 'uv' package, "
                     "or $HERMES_PM_UV)"),
    ("/bin/false", "uv failed: `/bin/false pip install` exited with 1 (no output)"),
])
def test_uv_missing_or_failing(home: Path, changed, capsys, monkeypatch, uv: str, detail: str) -> None:
    before = state_bytes(home)
    monkeypatch.setenv("HERMES_PM_UV", uv)
    result = pm(capsys, home, "sync")
    assert result.code == 1
    assert result.err.splitlines()[:2] == [f"error: {detail}",
                                           f"nothing was selected; generation {changed.id} stays selected"]
    assert state_bytes(home) == before and generations.all_ids(home) == [changed.id]
    receipt = latest(home)
    assert receipt["outcome"] == "failed" and receipt["exit_code"] == 1
    assert receipt["failure"] == {"kind": "uv", "message": detail, "url": None}
    assert receipt["generation"] is None


@pytest.fixture
def corrupt_index(tmp_path: Path) -> Iterator[LocalIndex]:
    """The same packages, but the index advertises a wrong sha256 for beta's wheel."""
    files = build_packages(tmp_path / "corrupt-dists", SPEC)
    with LocalIndex(files, corrupt_hashes={"beta-1.0-py3-none-any.whl"}) as index:
        yield index


def test_a_file_whose_sha256_does_not_match_is_refused_by_uv(home: Path, capsys, monkeypatch,
                                                              corrupt_index: LocalIndex) -> None:
    monkeypatch.setenv("HERMES_PM_INDEX_URL", corrupt_index.url)
    result = pm(capsys, home, "sync", "--json")
    assert result.code == 1
    receipt = result.data
    assert receipt["outcome"] == "refused" and receipt["failure"]["kind"] == "hash-mismatch"
    message = receipt["failure"]["message"]
    assert message.startswith("refused: a downloaded file does not match the sha256 recorded in the resolution "
                              "(the index served other bytes than it advertised); nothing was selected\n")
    url = f"{corrupt_index.root}/files/beta-1.0-py3-none-any.whl"
    assert message.splitlines()[1:3] == [f"error: Failed to download `beta @ {url}`",
                                         f"cause: Hash mismatch for `beta @ {url}`"]
    assert not (home / "pm" / "state.json").exists() and generations.all_ids(home) == []


def test_a_file_whose_sha256_does_not_match_is_refused_by_the_resolver(home: Path, capsys, monkeypatch,
                                                                       tmp_path: Path) -> None:
    """Without PEP 658 metadata files and byte ranges the resolver downloads the wheel itself, and
    checks it (read by ranges, the same lie is uv's to refuse at install: the test above)."""
    files = build_packages(tmp_path / "corrupt-dists", SPEC)
    real = hashlib.sha256((tmp_path / "corrupt-dists" / "beta-1.0-py3-none-any.whl").read_bytes()).hexdigest()
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cold-cache"))
    with LocalIndex(files, corrupt_hashes={"beta-1.0-py3-none-any.whl"}, metadata_files=False,
                    ranges=False) as index:
        monkeypatch.setenv("HERMES_PM_INDEX_URL", index.url)
        result = pm(capsys, home, "sync", "--json")
        url = f"{index.root}/files/beta-1.0-py3-none-any.whl"
    assert result.code == 1
    failure = result.data["failure"]
    assert result.data["outcome"] == "failed" and failure["kind"] == "index"
    assert failure["message"].startswith(f"{url}: hash mismatch: expected sha256 ")
    assert failure["message"].endswith(f", got {real}")
    assert not (home / "pm" / "state.json").exists() and generations.all_ids(home) == []


def _make_unwritable(path: Path) -> list[str]:
    """Make the folder ``path`` and every entry directly in it unwritable for this process by a
    real mechanism; returns the command that undoes it.

    As a normal user, ``chmod`` does it. As root, permission bits are ignored, so the entries are
    made immutable (``chattr +i``) instead; skipped where the file system does not support it.
    """
    targets = [str(path), *(str(p) for p in sorted(path.iterdir()) if not p.is_symlink())]
    if os.geteuid() != 0:
        subprocess.run(["chmod", "a-w", *targets], check=True)
        return ["chmod", "u+w", *targets]
    chattr = shutil.which("chattr")
    if chattr is None:
        pytest.skip("running as root (chmod does not stop root) and chattr is not installed")
    done = subprocess.run([chattr, "+i", *targets], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        subprocess.run([chattr, "-i", *targets], capture_output=True, check=False)
        pytest.skip(f"running as root (chmod does not stop root) and chattr +i is refused here: {done.stderr.strip()}")
    return [chattr, "-i", *targets]


REASON = "Operation not permitted" if os.geteuid() == 0 else "Permission denied"


def test_an_unwritable_home_is_a_clear_error(home: Path, capsys) -> None:
    undo = _make_unwritable(home)
    try:
        result = pm(capsys, home, "sync")
    finally:
        subprocess.run(undo, check=True)
    assert result.code == 1
    assert result.err == (f"error: {home / 'pm'}: cannot create folder: {REASON}\n"  # and it says no receipt went
                          f"warning: receipt not written: {home / 'pm' / 'receipts'}: cannot create folder: {REASON}\n")
    assert not (home / "pm").exists()


def test_an_unwritable_pm_folder_keeps_the_selection(home: Path, changed, capsys) -> None:
    before = state_bytes(home)
    undo = _make_unwritable(home / "pm")
    try:
        result = pm(capsys, home, "sync")
    finally:
        subprocess.run(undo, check=True)
    assert result.code == 1
    if os.geteuid() == 0:  # immutable: not even the lock file opens for writing, nor a receipt
        error, warning = result.err.splitlines()
        assert error == f"error: {home / 'pm' / 'lock'}: cannot open the home lock: {REASON}"
        assert warning.startswith(f"warning: receipt not written: {home / 'pm' / 'receipts'}/")
        assert warning.endswith(f"-sync-{os.getpid()}.json: cannot write: {REASON}")
    else:  # the lock is the user's own file; the first new folder is refused
        assert result.err.startswith(f"error: {home / 'pm' / 'generations'}/")
        assert result.err.splitlines()[0].endswith(f": cannot create folder: {REASON}")
    assert state_bytes(home) == before and generations.all_ids(home) == [changed.id]
    assert pm(capsys, home, "sync").code == 0  # writable again: the sync goes through


def test_after_a_mismatch_refresh_asks_for_the_pages_again_and_builds(home: Path, capsys, monkeypatch,
                                                                      tmp_path: Path) -> None:
    """The index fixes its page after pm cached it fresh for ten minutes (PyPI's max-age): a plain
    sync keeps failing on the cached page, the receipt's next step (--refresh) asks again and builds."""
    files = build_packages(tmp_path / "fixed-later", SPEC)
    with LocalIndex(files, corrupt_hashes={"beta-1.0-py3-none-any.whl"}, **PRESETS["pypi"]) as index:
        monkeypatch.setenv("HERMES_PM_INDEX_URL", index.url)
        failed = pm(capsys, home, "sync", "--json").data
        assert failed["failure"]["kind"] == "hash-mismatch"
        step = f"hermes pm sync --refresh --home {home}"
        assert [s["command"] for s in failed["next_steps"]] == [step]
        index.corrupt_hashes.clear()  # the index is fixed; its pages change (and their ETags with them)
        assert pm(capsys, home, "sync", "--json").data["failure"]["kind"] == "hash-mismatch"  # still cached

        index.reset_log()
        fixed = pm(capsys, home, *step.split()[2:], "--json")

        assert fixed.code == 0, fixed.data.get("failure")
        assert generations.selected(home) is not None
        asked = [path for _, path in index.requests if path.startswith("/simple/")]
        assert len(asked) == len(set(asked)), "each page is asked for once, not once per use"
