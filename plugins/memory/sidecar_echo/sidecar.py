"""The sidecar environment: ``<home>/plugins/.sidecar_echo/venv``, built with uv.

:func:`setup_sidecar` makes a fresh virtual environment with uv (``from uv import find_uv_bin``)
for the running interpreter's Python and installs ``runtime/pyproject.toml``'s requirements into
it. It builds beside the old environment and swaps it in only once complete, so a failed setup
leaves the previous one usable. pm never runs this and never looks inside: the folder's name
starts with ``.``, which pm's discovery skips.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["RUNTIME", "SidecarSetupError", "backend_script", "setup_sidecar", "sidecar_dir",
           "sidecar_python"]

RUNTIME = Path(__file__).resolve().parent / "runtime"
_DROPPED = ("UV_", "PIP_", "VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH", "PYTHONHOME")


class SidecarSetupError(RuntimeError):
    """uv failed while making the sidecar environment; ``output`` is uv's own output."""

    def __init__(self, argv: Sequence[str], detail: str, output: str = "") -> None:
        self.argv = tuple(argv)
        self.output = output
        tail = "\n".join(output.strip().splitlines()[-10:])
        super().__init__(f"sidecar_echo setup failed: {detail}" + (f"\n{tail}" if tail else ""))


def sidecar_dir(home: str | os.PathLike[str]) -> Path:
    return Path(home) / "plugins" / ".sidecar_echo"


def sidecar_python(home: str | os.PathLike[str]) -> Path:
    return sidecar_dir(home) / "venv" / "bin" / "python"


def backend_script() -> Path:
    return RUNTIME / "backend.py"


def _uv_env(cache_dir: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_DROPPED)}
    env.update(UV_NO_CONFIG="1", UV_PYTHON_DOWNLOADS="never", NO_COLOR="1", UV_NO_PROGRESS="1")
    if cache_dir is not None:
        env["UV_CACHE_DIR"] = str(cache_dir)
    return env


def _run(argv: list[str], env: dict[str, str], timeout: float) -> None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout,
                              check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SidecarSetupError(argv, f"cannot run {argv[0]!r}: {exc}") from exc
    if done.returncode != 0:
        raise SidecarSetupError(argv, f"`uv {' '.join(argv[1:3])}` exited with {done.returncode}",
                                done.stdout + done.stderr)


def setup_sidecar(
    home: str | os.PathLike[str],
    *,
    find_links: Sequence[str | os.PathLike[str]] = (),
    index_url: str | None = None,
    no_index: bool = False,
    offline: bool = False,
    cache_dir: Path | None = None,
    timeout: float = 600.0,
) -> Path:
    """Build the sidecar environment of ``home`` and return its interpreter. Index options are
    passed to ``uv pip install``; ``cache_dir`` is uv's cache (default: uv's own).
    Raises :class:`SidecarSetupError`."""
    from uv import find_uv_bin

    uv = str(find_uv_bin())
    target = sidecar_dir(home)
    target.mkdir(parents=True, exist_ok=True)
    staging = target / f".venv-new-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    env = _uv_env(cache_dir)
    try:
        _run([uv, "venv", "--python", sys.executable, "--no-project", str(staging)], env, timeout)
        options = [f"--find-links={link}" for link in find_links]
        options += [f"--index-url={index_url}"] if index_url else []
        options += ["--no-index"] if no_index else []
        options += ["--offline"] if offline else []
        _run([uv, "pip", "install", "--python", str(staging / "bin" / "python"),
              "-r", str(RUNTIME / "pyproject.toml"), *options], env, timeout)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    _swap_in(staging, target / "venv")
    record = {"python": str(sidecar_python(home)), "requirements": str(RUNTIME / "pyproject.toml")}
    (target / "sidecar.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return sidecar_python(home)


def _swap_in(staging: Path, venv: Path) -> None:
    old = venv.with_name(f".venv-old-{os.getpid()}")
    if venv.exists():
        venv.rename(old)
    staging.rename(venv)
    shutil.rmtree(old, ignore_errors=True)
