"""`hermes pm sync`: build and select, the no-op, new generations on change, progress on a terminal."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from pm.env import generations

from .helpers import PINS, edit, latest, pm, run_python


def test_sync_builds_selects_and_records_a_generation(home: Path, capsys) -> None:
    result = pm(capsys, home, "sync", "--json")
    assert result.code == 0, result.err
    receipt = result.data
    current = generations.selected(home)
    assert current is not None
    assert receipt["outcome"] == "ok" and receipt["exit_code"] == 0
    assert receipt["message"] == f"built and selected generation {current.id}"
    assert receipt["generation"] == current.to_receipt(selected=True, restart_required=True)
    assert {p["name"]: p["version"] for p in receipt["resolution"]["packages"]} == PINS
    assert current.record["resolution"] == receipt["resolution"]
    assert current.fingerprint == receipt["inputs"]["fingerprint"]
    assert current.record["uv"] == receipt["tool"]["uv"]
    assert [m["name"] for m in current.record["members"]] == ["notes", "search"]
    assert receipt == latest(home) | {"receipt_path": receipt["receipt_path"]}
    assert generations.read_state(home)["previous"] is None
    assert run_python(current, "import alpha, beta, gamma, delta; print(alpha.__version__)") == "1.0"
    assert current.intact() and generations.all_ids(home) == [current.id]


def test_second_sync_is_a_noop(home: Path, capsys) -> None:
    first = pm(capsys, home, "sync", "--json").data["generation"]
    again = pm(capsys, home, "sync")
    assert again.code == 0
    receipt = latest(home)
    assert receipt["outcome"] == "ok" and receipt["message"] == "already in sync"
    assert receipt["generation"] == {**first, "restart_required": False}
    assert receipt["resolution"] == generations.selected(home).record["resolution"]  # every file, for Nix
    assert generations.all_ids(home) == [first["id"]]
    written = max((home / "pm" / "receipts").glob("*-sync-*.json"))
    assert again.err == (f"already in sync: generation {first['id']} ({first['path']})\n"
                         f"receipt: {written}\n")


def test_changed_declaration_builds_a_new_generation_and_keeps_the_previous(home: Path, capsys) -> None:
    first = pm(capsys, home, "sync", "--json").data["generation"]["id"]
    edit(home / "plugins" / "notes" / "pyproject.toml", '"beta>=1"', '"beta>=1", "epsilon"')
    result = pm(capsys, home, "sync", "--json")
    second = result.data["generation"]
    assert result.code == 0 and second["id"] != first and second["restart_required"] is True
    assert generations.read_state(home)["selected"] == second["id"]
    assert generations.read_state(home)["previous"] == first
    assert generations.all_ids(home) == sorted([first, second["id"]])
    assert generations.load(home, first) is not None and generations.load(home, first).intact()
    assert run_python(generations.selected(home), "import epsilon; print(epsilon.__version__)") == "1.0"
    assert result.err == ""  # --json: people's messages stay quiet, data is on stdout


def _sync_on_a_terminal(home: Path, env: dict[str, str], *extra: str) -> tuple[int, str]:
    """Run a real `python -m pm sync` whose stderr is a pseudo-terminal; return (exit, what it showed)."""
    leader, follower = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "pm", "sync", "--home", str(home), *extra],
                               env={**env, "NO_COLOR": "1"}, stdout=subprocess.DEVNULL, stderr=follower)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    return process.wait(), b"".join(chunks).decode().replace("\r\n", "\n")


def test_progress_shows_on_a_terminal_only_and_never_with_json(home: Path, env: dict[str, str]) -> None:
    code, shown = _sync_on_a_terminal(home, env)
    assert code == 0, shown
    gid = generations.read_state(home)["selected"]
    size = sum(p["file"]["size"] for p in generations.selected(home).record["resolution"]["packages"])
    assert shown.splitlines()[:5] == [
        "… resolving",
        f"… creating generation {gid}",
        f"… downloading and installing 4 packages ({size / 1e6:.1f} MB)",
        "… verifying",
        f"… selecting generation {gid}",
    ]
    edit(home / "plugins" / "notes" / "pyproject.toml", '"beta>=1"', '"beta>=1", "epsilon"')
    code, shown = _sync_on_a_terminal(home, env, "--json")
    assert code == 0 and shown == ""
    edit(home / "plugins" / "notes" / "pyproject.toml", '"epsilon"', '"epsilon>=1"')
    piped = subprocess.run([sys.executable, "-m", "pm", "sync", "--home", str(home)], env=env,
                           capture_output=True, text=True, check=False)
    assert piped.returncode == 0 and "…" not in piped.stderr
    assert piped.stderr.startswith("built and selected generation ")


def test_sync_and_rollback_tell_the_package_diff(home: Path, capsys) -> None:
    first = pm(capsys, home, "sync")
    assert first.code == 0
    assert [line for line in first.err.splitlines() if line[:2] in ("+ ", "- ")] == [
        "+ alpha==1.0", "+ beta==1.0", "+ delta==1.0", "+ gamma==1.0"]
    edit(home / "plugins" / "notes" / "pyproject.toml", '"beta>=1"', '"beta>=1", "epsilon"')
    second = pm(capsys, home, "sync")
    assert second.code == 0 and second.err.startswith("+ epsilon==1.0\nbuilt and selected generation ")  # first, as uv
    back = pm(capsys, home, "rollback")
    assert back.code == 0 and back.err.startswith("- epsilon==1.0\ngeneration ")
    assert pm(capsys, home, "sync", "-q").err == ""  # -q: errors and data only
    assert "==" not in pm(capsys, home, "sync").err  # a no-op sync changes nothing, so tells no diff


def test_quiet_hides_progress_on_a_terminal(home: Path, env: dict[str, str]) -> None:
    code, shown = _sync_on_a_terminal(home, env, "-q")
    assert code == 0 and "…" not in shown
