"""Shared plumbing of the benchmarks: whole-command timing, uv's clean environment, tables.

Every measured command is a real subprocess; a figure is the median wall time of ``runs`` runs.
"Cold" runs get a fresh, empty cache directory each; "warm" runs share one directory warmed by an
untimed first run. :func:`run_measured` also reads the process's peak RSS (``os.wait4``: the
high-water mark of that child alone, not of every child so far). Both tools target the same real
interpreter (:func:`real_python`): uv gets it as ``--python``; pm, run by the bench's own
interpreter (a venv's, which has pm's dependencies), gets it as ``--python`` too, which pm treats
as itself when the real paths agree (a venv and its base share markers and tags).
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # `pm.testing` is imported from the checkout
    sys.path.insert(0, str(ROOT))

from uv import find_uv_bin  # noqa: E402

from pm.testing.environ import NO_TOOL_FILES  # noqa: E402

UV = str(find_uv_bin())


def arguments(
    description: str,
    more: Callable[[argparse.ArgumentParser], None] | None = None,
    *,
    runs: int = 5,
    local: bool = True,
) -> argparse.Namespace:
    """Parse the common options (and ``more``; ``local``: the local-index ones, --sizes and
    --raw-index); ``args.target`` is the real interpreter."""
    parser = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--runs", type=int, default=runs, help=f"timed runs per figure (median; default {runs})"
    )
    parser.add_argument(
        "--python",
        default=sys.executable,
        help="interpreter that runs `python -m pm` (it needs pm's dependencies; default: this "
        "one); both tools target its real executable (symlinks and shims resolved)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the work folder and print it")
    parser.add_argument(
        "--pm-from",
        choices=("wheel", "checkout"),
        default="wheel",
        help="run pm as users have it, built and installed (not editable) into a venv of its own "
        "made once per state of the sources (default), or from the checkout on PYTHONPATH with "
        "--python's packages (an editable install's import hooks then cost ~20 ms per command)",
    )
    if local:
        parser.add_argument(
            "--sizes", default="10,50,200", help="plugin counts (default 10,50,200)"
        )
        parser.add_argument(
            "--raw-index",
            action="store_true",
            help="serve with LocalIndex's stock socket settings (see tune_local_index)",
        )
    if more is not None:
        more(parser)
    args = parser.parse_args()
    if local and not args.raw_index:
        tune_local_index()
    args.target = real_python(args.python)
    if args.pm_from == "wheel":
        global PM_FROM_CHECKOUT
        PM_FROM_CHECKOUT = False
        args.python = installed_pm(args.target)
    return args


#: Whether `python -m pm` imports pm from the checkout (PYTHONPATH) rather than an installed copy.
PM_FROM_CHECKOUT = True
BENCH_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hermes-pm-bench"


#: Installed states of pm kept in the bench cache (the newest; one per source state).
KEEP_INSTALLS = 4


def installed_pm(base: str) -> str:
    """The interpreter of a venv (on ``base``) with this checkout built and installed as a wheel,
    as `uv tool install` or `pip install` would leave it; made once per state of the sources."""
    import hashlib

    digest = hashlib.sha256(base.encode())
    for path in sorted([ROOT / "pyproject.toml", *ROOT.glob("pm/**/*"), *ROOT.glob("agent/**/*")]):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(f"{path.relative_to(ROOT)}\0".encode() + path.read_bytes())
    venv = BENCH_CACHE / f"pm-{digest.hexdigest()[:16]}"
    python = venv / "bin" / "python"
    if not python.exists():
        print(f"  installing pm (wheel) into {venv}", file=sys.stderr)
        # Keep the newest few: other worktrees' benches may be running from theirs right now.
        built = sorted(BENCH_CACHE.glob("pm-*"), key=lambda p: p.stat().st_mtime, reverse=True)
        for stale in built[KEEP_INSTALLS - 1:]:
            subprocess.run(["rm", "-rf", str(stale)], check=False)
        subprocess.run([UV, "venv", "--quiet", "--python", base, str(venv)], check=True, env=uv_env())
        subprocess.run([UV, "pip", "install", "--quiet", "--python", str(python), str(ROOT)], check=True,
                       env=uv_env())
    return str(python)


def real_python(python: str) -> str:
    """The real executable behind ``python``: a venv's symlink, a pyenv shim (a shell script)
    and the like resolved by asking the interpreter itself."""
    done = subprocess.run(
        [python, "-c", "import os, sys; print(os.path.realpath(sys.executable))"],
        capture_output=True, text=True, check=True,
    )
    return done.stdout.strip()


def tune_local_index() -> None:
    """Serve without two socket artefacts of the stock test server that dwarf what is measured.

    ``socketserver`` listens with a backlog of 5: more simultaneous connects (pm fetches on 16
    threads, uv on more) overflow it and the kernel drops SYNs, which the client retransmits
    after 1 s. And the handler writes headers and body in two sends with Nagle on, so every body
    waits for the client's delayed ACK (~40 ms). Both belong in ``pm.testing.index`` (a
    ``request_queue_size`` on the server, ``disable_nagle_algorithm = True`` on the handler);
    until then the benchmark sets them here, for every client alike.
    """
    import http.server

    import pm.testing._handler

    http.server.ThreadingHTTPServer.request_queue_size = 256
    pm.testing._handler._Handler.disable_nagle_algorithm = True


def work_dir(keep: bool) -> tempfile.TemporaryDirectory[str] | Path:
    if keep:
        return Path(tempfile.mkdtemp(prefix="hermes-bench-"))
    return tempfile.TemporaryDirectory(prefix="hermes-bench-")


#: Header modes of the local index: pm.testing.index.PRESETS plus LocalIndex's stock headers.
INDEX_MODES = ("pypi", "mirror", "revalidate")


def index_knobs(mode: str) -> dict[str, Any]:
    """LocalIndex knobs of a header mode (``revalidate``: the stock ones, max-age=0 + ETag)."""
    from pm.testing import PRESETS

    return dict(PRESETS.get(mode, {}))


_outputs = itertools.count()


def pm_argv(python: str, command: str, layout: Any, url: str, *extra: str) -> list[str]:
    """``python -m pm COMMAND`` on a workload's home, index and empty core."""
    return [python, "-m", "pm", command, "--home", str(layout.home), "--index-url", url,
            "--core", str(layout.core), "--core-lock", str(layout.core_lock), *extra]


def uv_compile_argv(
    python: str, layout: Any, url: str, cache: Path, *extra: str
) -> list[str]:
    """``uv pip compile`` of a workload's root requirements, into a fresh output (no preferences)."""
    output = layout.requirements_in.parent / f"uv-out-{next(_outputs)}.txt"
    return [UV, "pip", "compile", str(layout.requirements_in), "--index-url", url, "--python", python,
            "--cache-dir", str(cache), "--quiet", "--output-file", str(output), *extra]


def pm_env(cache: Path, bundled: Path, pycache: Path) -> dict[str, str]:
    """Environment of `python -m pm`: pm installed (or the checkout importable, with --pm-from
    checkout), a given cache, no bundled plugins.

    Bytecode is cached (under ``pycache``, outside the checkout) as in any installed tool, even
    when the caller's environment says PYTHONDONTWRITEBYTECODE.
    """
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("HERMES_", "UV_", "PIP_")) and k != "PYTHONDONTWRITEBYTECODE"
    }
    if PM_FROM_CHECKOUT:
        env["PYTHONPATH"] = str(ROOT)
    env.update(NO_TOOL_FILES)  # the machine's uv.toml / pip.conf index settings stay out of the figures
    env.update(
        PYTHONPYCACHEPREFIX=str(pycache),
        HERMES_PM_CACHE_DIR=str(cache),
        HERMES_BUNDLED_PLUGINS=str(bundled),
        NO_COLOR="1",
    )
    return env


def uv_env() -> dict[str, str]:
    """uv without user configuration or Python downloads."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("UV_", "PIP_")) and k != "VIRTUAL_ENV"
    }
    env.update(UV_NO_CONFIG="1", UV_PYTHON_DOWNLOADS="never", NO_COLOR="1")
    return env


@dataclass(frozen=True)
class Measured:
    """One finished command: wall seconds, stdout, its peak resident set size in bytes, and the
    CPU seconds (user + system) of the process and the children it waited for."""

    seconds: float
    stdout: str
    peak_rss: int
    cpu: float = 0.0


#: Starts a command and reports its wall time, peak RSS and CPU time (user + system). A child forked from the bench itself
#: would report at least the bench's own RSS (Linux carries the old address space's high-water
#: mark across fork and exec, and the bench holds the index in memory); forked from this small
#: launcher, it reports its own. The launcher's start-up is outside the time it reports.
_LAUNCHER = """
import os, sys, time
report, argv = sys.argv[1], sys.argv[2:]
started = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
seconds = time.perf_counter() - started
with open(report, "w") as out:
    out.write(f"{seconds!r} {usage.ru_maxrss} {usage.ru_utime + usage.ru_stime!r}")
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
"""


def run_measured(argv: Sequence[str], env: dict[str, str], ok: Sequence[int] = (0,)) -> Measured:
    """Run ``argv`` (through :data:`_LAUNCHER`); raises SystemExit with its output on an odd
    exit. Peak RSS is ``ru_maxrss`` of that process (and of children it waited for)."""
    with tempfile.TemporaryDirectory(prefix="hermes-bench-run-") as folder:
        report = Path(folder) / "report"
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(report), *argv], env=env,
            capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL,
        )
        if done.returncode not in ok:
            raise SystemExit(
                f"exit {done.returncode}: {' '.join(argv)}\n{done.stdout}\n{done.stderr}"
            )
        seconds, peak_kib, cpu = report.read_text().split()
    return Measured(float(seconds), done.stdout, int(peak_kib) * 1024, float(cpu))  # Linux: KiB


def run(argv: Sequence[str], env: dict[str, str], ok: Sequence[int] = (0,)) -> tuple[float, str]:
    """Run ``argv``; return (seconds, stdout). Raises SystemExit with its output on an odd exit."""
    done = run_measured(argv, env, ok)
    return done.seconds, done.stdout


def median_of(runs: int, once: Callable[[int], float]) -> float:
    """Median of ``once(i)`` for i in range(runs)."""
    return statistics.median(once(i) for i in range(runs))


def cold_and_warm(
    runs: int,
    folder: Path,
    command: Callable[[Path], Sequence[str]],
    env: Callable[[Path], dict[str, str]],
) -> tuple[float, float]:
    """Median seconds of ``command(cache)`` with a fresh cache per run, then with a warmed one."""
    cold = median_of(
        runs, lambda i: run(command(folder / f"cold-{i}"), env(folder / f"cold-{i}"))[0]
    )
    warm_cache = folder / "warm"
    run(command(warm_cache), env(warm_cache))  # warm it (untimed)
    warm = median_of(runs, lambda i: run(command(warm_cache), env(warm_cache))[0])
    return cold, warm


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def size(count: float) -> str:
    """Bytes for people: 0 B, 812 B, 4.1 kB, 30.2 MB, 1.20 GB."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= scale:
            return f"{count / scale:.{2 if unit == 'GB' else 1}f} {unit}"
    return f"{count:.0f} B"


def ratio(ours: float, theirs: float, target: float) -> str:
    value = ours / theirs
    return f"{value:.2f}x " + ("ok" if value <= target else f"MISS (target <= {target:g}x)")


def print_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    widths = [max(len(str(c)) for c in column) for column in zip(headers, *rows, strict=False)]
    for line in (headers, ["-" * w for w in widths], *rows):
        print("  ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=False)).rstrip())
