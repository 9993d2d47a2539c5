"""Helpers shared by the generation tests: run pm in-process or as a real process, tamper with a
generation, read receipts and state."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from pm.env import generations
from pm.testing.cli import Result, latest, pm  # noqa: F401 - shared by these tests

PINS = {"alpha": "1.0", "beta": "1.0", "delta": "1.0", "gamma": "1.0"}


def pm_process(env: dict[str, str], home: Path, *args: str, **extra: str) -> subprocess.Popen[str]:
    """Start ``python -m pm <args> --home <home>`` as a real process (stdout/stderr piped)."""
    return subprocess.Popen([sys.executable, "-m", "pm", *args, "--home", str(home)],
                            env={**env, **extra}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for(path: Path, process: subprocess.Popen[str], timeout: float = 20.0) -> None:
    """Wait until ``path`` exists (a pause point reached) while ``process`` is alive."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        if process.poll() is not None:
            out, err = process.communicate()
            raise AssertionError(f"process ended with {process.returncode} before {path.name}:\n{out}\n{err}")
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.01)


def kill(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGKILL)
    process.communicate()
    assert process.returncode == -signal.SIGKILL


def state_bytes(home: Path) -> bytes:
    return (home / "pm" / generations.STATE_FILE).read_bytes()


def run_python(generation: generations.Generation, code: str) -> str:
    """Run ``code`` with the generation's own interpreter (isolated from our environment)."""
    done = subprocess.run([str(generation.python), "-I", "-c", code], capture_output=True, text=True,
                          check=False, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def dist_info(generation: generations.Generation, name: str) -> Path:
    (found,) = generation.site_packages.glob(f"{name}-*.dist-info")
    return found


def remove_dist(generation: generations.Generation, name: str) -> None:
    """Tamper: delete a package's ``.dist-info`` (its module stays importable)."""
    shutil.rmtree(dist_info(generation, name))


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (old, text)
    path.write_text(text.replace(old, new))
