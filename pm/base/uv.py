"""The one choke point where pm runs uv: argv lists, never a shell; a cleaned environment; output
captured and attached to a typed error; a ``runner`` tests can swap for another real program.

The uv binary is the one shipped by the ``uv`` distribution pm depends on.
"""

from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pm.base.errors import PmError
from pm.base.watch import UNWATCHED, Watch

Runner = Callable[..., subprocess.CompletedProcess[str]]

#: Environment variables that would let a user's uv or pip configuration change what pm builds.
_DROPPED_PREFIXES = ("UV_", "PIP_", "VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH", "PYTHONHOME")


_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


class UvError(PmError):
    """uv is missing or failed; carries the argv and uv's own output."""

    kind = "uv"

    def __init__(self, argv: Sequence[str], detail: str, output: str = "") -> None:
        self.argv = tuple(argv)
        self.detail = detail
        self.output = output
        tail = "\n".join(output.strip().splitlines()[-15:])
        super().__init__(f"uv failed: {detail}" + (f"\n{tail}" if tail else ""))


def find_uv() -> str:
    """Path of the uv binary (``$HERMES_PM_UV`` first, for tests and packagers)."""
    override = os.environ.get("HERMES_PM_UV")
    if override:
        return override
    try:
        from uv import find_uv_bin
    except ImportError as exc:
        raise UvError(["uv"], "the 'uv' package is not installed in this environment") from exc
    try:
        return str(find_uv_bin())
    except FileNotFoundError as exc:
        raise UvError(["uv"], f"the uv binary is missing: {exc}") from exc


def clean_env(cache_dir: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment uv runs in: no user configuration, no Python downloads, pm's own cache."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_DROPPED_PREFIXES)}
    env.update({
        "UV_NO_CONFIG": "1",
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_CACHE_DIR": str(cache_dir),
        "UV_NO_PROGRESS": "1",
        "NO_COLOR": "1",
    })
    env.update(extra or {})
    return env


@dataclass
class Uv:
    cache_dir: Path
    runner: Runner = subprocess.run
    binary: str | None = None
    timeout: float = 900.0

    def run(self, *args: str, env: Mapping[str, str] | None = None) -> str:
        argv = [self.binary or find_uv(), *args]
        try:
            done = self.runner(argv, capture_output=True, text=True, env=clean_env(self.cache_dir, env),
                               timeout=self.timeout, check=False, stdin=subprocess.DEVNULL,
                               preexec_fn=die_with_parent())
        except FileNotFoundError as exc:
            raise UvError(argv, f"cannot run {argv[0]!r}: not found "
                          "(pm runs the uv of the 'uv' package, or $HERMES_PM_UV)") from exc
        except subprocess.TimeoutExpired as exc:
            raise UvError(argv, f"timed out after {self.timeout:.0f}s") from exc
        except OSError as exc:
            raise UvError(argv, f"cannot run {argv[0]!r}: {exc.strerror or exc}") from exc
        if done.returncode != 0:
            output = done.stdout + done.stderr
            detail = f"`{_shown(argv)}` exited with {done.returncode}" + ("" if output.strip() else " (no output)")
            raise UvError(argv, detail, output)
        return done.stdout + done.stderr

    def version(self) -> str:
        words = self.run("--version").split()
        return words[1] if len(words) > 1 else "unknown"


@functools.lru_cache(maxsize=1)
def die_with_parent() -> Callable[[], None] | None:
    """On Linux, a hook for the child (between fork and exec) that has the kernel SIGKILL uv when
    pm dies: a pm killed mid-build never leaves uv writing into a folder the next run removes."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return lambda: prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _shown(argv: Sequence[str]) -> str:
    """``uv pip install`` (the program and its subcommand words, not its long argument list)."""
    program = "uv" if os.path.basename(argv[0]) == "uv" else argv[0]
    words = []
    for word in argv[1:3]:
        if word.startswith("-"):
            break
        words.append(word)
    return " ".join([program, *words])


def uv_version(*, watch: Watch = UNWATCHED) -> str | None:
    """``uv --version`` of the uv pm drives, its binary noted in ``watch`` (receipts name it)."""
    version, binary = _uv_version()
    if binary is not None:
        watch.stat(binary)
    else:  # not found, or not there: where it would be found next time is not looked at again
        watch.unwatchable("uv")
    return version


@functools.lru_cache(maxsize=1)
def _uv_version() -> tuple[str | None, str | None]:
    """``uv --version`` of the uv pm drives (``pm.base.uv.find_uv``), or None when it cannot be run.

    Remembered in the cache per binary (path, size, mtime), so a receipt costs no subprocess.
    """
    from pm.base.cachedir import default_cache_dir
    from pm.base.store import Store

    try:
        binary = find_uv()
        stat = os.stat(binary)
    except (PmError, OSError):
        return None, None
    key = f"{binary}:{stat.st_size}:{stat.st_mtime_ns}"
    memo = default_cache_dir() / "uv-version.json"
    try:
        data = json.loads(memo.read_text())
        if data.get("key") == key:
            return str(data["version"]), binary
    except (OSError, ValueError, KeyError):
        pass
    try:
        done = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None, binary
    words = done.stdout.split()
    version = words[1] if done.returncode == 0 and len(words) > 1 else None
    if version is not None:
        try:
            Store(memo.parent).write_json(memo, {"key": key, "version": version})
        except PmError:
            pass
    return version, binary
