"""pm.cli._exit.leave: a command ends without the interpreter's finalization, yet loses nothing a
normal exit would keep — output, exit code, atexit hooks, a running thread's work."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from pm.cli._exit import _others_running

ROOT = Path(__file__).resolve().parents[2]


def _python(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, timeout=60)


def test_leave_keeps_the_output_the_exit_code_and_the_atexit_hooks(tmp_path: Path) -> None:
    hook = tmp_path / "hook"
    done = _python(
        "import atexit, logging, sys\n"
        "from pm.cli._exit import leave\n"
        f"atexit.register(lambda: open({str(hook)!r}, 'w').write('ran'))\n"
        "logging.basicConfig(stream=sys.stderr); logging.getLogger('x').warning('logged')\n"
        "sys.stdout.write('x' * 200000)\n"  # more than a pipe's buffer: flushed, never cut
        "sys.stderr.write('to stderr')\n"
        "leave(3)\n"
        "print('never')\n",
        tmp_path,
    )
    assert done.returncode == 3
    assert done.stdout == "x" * 200000
    assert "logged" in done.stderr and done.stderr.endswith("to stderr")
    assert hook.read_text() == "ran"


def test_leave_waits_like_a_normal_exit_while_another_thread_works(tmp_path: Path) -> None:
    written = tmp_path / "written"
    done = _python(
        "import threading, time\n"
        "from pm.cli._exit import leave\n"
        f"def work():\n    time.sleep(0.3)\n    open({str(written)!r}, 'w').write('done')\n"
        "threading.Thread(target=work).start()\n"
        "leave(0)\n",
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert written.read_text() == "done"


def test_python_m_pm_under_cprofile_still_writes_the_profile(tmp_path: Path) -> None:
    stats = tmp_path / "stats"
    (tmp_path / "home").mkdir()
    done = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(stats), "-m", "pm", "scan", "--home",
                           str(tmp_path / "home")],
                          capture_output=True, text=True, cwd=ROOT, check=False, timeout=60,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert stats.stat().st_size > 0


def test_a_running_non_daemon_thread_is_what_keeps_the_normal_exit() -> None:
    release = threading.Event()
    worker = threading.Thread(target=release.wait)
    worker.start()
    try:
        assert _others_running()
    finally:
        release.set()
        worker.join()


def test_leave_with_stdout_closed_from_the_start(tmp_path: Path) -> None:
    """Started with descriptor 1 closed, Python has no sys.stdout at all (None)."""
    done = subprocess.run(["sh", "-c", 'exec "$@" >&-', "sh", sys.executable, "-c",
                           "import sys; from pm.cli._exit import leave; sys.stderr.write('said'); leave(4)"],
                          capture_output=True, text=True, cwd=ROOT, check=False, timeout=60,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 4 and done.stderr == "said"
