"""Benchmark: many homes, one index — pm and uv behind a real devpi-server and a real pypiserver.

Usage: python scripts/bench/fleet.py [--homes 16] [--repeat 20] [--python PATH] [--keep]

The realistic workload (~40 packages) is served by a local index with PyPI's headers; a real
devpi-server on 127.0.0.1 mirrors it (pull-through, pages kept 600 s), and a real pypiserver
serves the same wheels as a private index behind basic auth (both installed from PyPI into a venv
of their own on first use, see pm.testing.servers). Each home has its own pm and uv caches, as on
its own machine. Figures, each pm against uv in the same run:

1. N homes resolve cold at once through the warm mirror: `pm resolve` against `uv pip compile`
   of the same requirements (wall time of the whole fleet; requests that reached the mirror).
2. One home, `pm sync` N times in a row after its first sync, against `uv pip compile` warm the
   same number of times: median time and requests that reached the mirror.
3. The same as 1 against pypiserver with credentials in the index URL.

A benchmark, not a test: it prints figures and never fails on them. Requests are counted from each
server's own access log.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

import _harness as h
import workloads

from pm.testing import LocalIndex, build_packages
from pm.testing.index import PRESETS
from pm.testing.servers import Devpi, PypiServer, Server, server_venv


def _options(parser) -> None:
    parser.add_argument("--homes", type=int, default=16, help="homes resolving at once (default 16)")
    parser.add_argument("--repeat", type=int, default=20, help="syncs of one home in a row (default 20)")
    parser.add_argument("--workers", type=int, default=None,
                        help="HERMES_PM_FETCH_WORKERS for every pm (default: pm's own sizing)")


def at_once(argvs: list[list[str]], envs: list[dict[str, str]]) -> tuple[float, list[str]]:
    """Start every command at once: the wall time until the last ends, and the failures (the
    last line each printed)."""
    started = time.perf_counter()
    runs = [subprocess.Popen(a, env=e, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            for a, e in zip(argvs, envs, strict=True)]
    failures = []
    for run in runs:
        _, err = run.communicate(timeout=900)
        if run.returncode != 0:
            failures.append(f"exit {run.returncode}: " + next((line for line in err.splitlines() if "error" in line),
                                                              err.strip()[-300:]))
    return time.perf_counter() - started, failures


def _shown(seconds: float, failures: list[str], homes: int) -> str:
    if failures:
        print("\n".join(f"  failed: {f}" for f in failures), file=sys.stderr)
        return f"{h.ms(seconds)} ({len(failures)} of {homes} failed)"
    return h.ms(seconds)


def fleet_row(args, folder: Path, server: Server, url: str, label: str) -> list[str]:
    """N homes cold at once: pm resolve against uv pip compile, each home its own caches."""
    layouts = [workloads.write(workloads.realistic(), folder / f"{label}-{n:02d}") for n in range(args.homes)]
    pm_argvs = [h.pm_argv(args.python, "resolve", lay, url) for lay in layouts]
    pm_envs = [h.pm_env(lay.home.parent / "pm-cache", folder / "no-bundled", folder / "pycache") for lay in layouts]
    if args.workers:
        pm_envs = [env | {"HERMES_PM_FETCH_WORKERS": str(args.workers)} for env in pm_envs]
    uv_argvs = [h.uv_compile_argv(args.target, lay, url, lay.home.parent / "uv-cache") for lay in layouts]
    uv_envs = [h.uv_env() for _ in layouts]
    asked = len(server.requests())
    ours, ours_failed = at_once(pm_argvs, pm_envs)
    ours_asked = len(server.requests()) - asked
    theirs, theirs_failed = at_once(uv_argvs, uv_envs)
    theirs_asked = len(server.requests()) - asked - ours_asked
    return [f"{args.homes} homes cold at once, {label}", _shown(ours, ours_failed, args.homes),
            _shown(theirs, theirs_failed, args.homes), h.ratio(ours, theirs, 1.2), str(ours_asked), str(theirs_asked)]


def repeat_row(args, folder: Path, mirror: Devpi) -> list[str]:
    """One home: sync, then N no-op syncs; uv: N warm compiles. Medians and requests."""
    layout = workloads.write(workloads.realistic(), folder / "repeat")
    env = h.pm_env(folder / "repeat-cache", folder / "no-bundled", folder / "pycache")
    h.run(h.pm_argv(args.python, "sync", layout, mirror.index_url), env)
    asked = len(mirror.requests())
    ours = statistics.median(h.run(h.pm_argv(args.python, "sync", layout, mirror.index_url), env)[0]
                             for _ in range(args.repeat))
    ours_asked = len(mirror.requests()) - asked
    uv_cache = folder / "repeat-uv-cache"
    h.run(h.uv_compile_argv(args.target, layout, mirror.index_url, uv_cache), h.uv_env())
    asked = len(mirror.requests())
    theirs = statistics.median(h.run(h.uv_compile_argv(args.target, layout, mirror.index_url, uv_cache),
                                     h.uv_env())[0] for _ in range(args.repeat))
    theirs_asked = len(mirror.requests()) - asked
    return [f"one home, {args.repeat} syncs in a row (median), devpi", h.ms(ours), h.ms(theirs),
            h.ratio(ours, theirs, 2.0), str(ours_asked), str(theirs_asked)]


def main() -> None:
    args = h.arguments(__doc__, _options, local=False)
    holder = h.work_dir(args.keep)
    folder = Path(holder if isinstance(holder, Path) else holder.name)
    print(f"python {args.python}; uv {h.UV}; work folder {folder}", file=sys.stderr)
    venv = server_venv(h.BENCH_CACHE, h.UV, args.target)
    realistic = workloads.realistic()
    files = build_packages(folder / "dists", realistic.spec)
    rows = []
    with LocalIndex(files, **PRESETS["pypi"]) as upstream, Devpi(venv, folder / "devpi", upstream.url) as mirror:
        warm = workloads.write(realistic, folder / "warm-up")
        h.run(h.uv_compile_argv(args.target, warm, mirror.index_url, folder / "warm-uv"), h.uv_env())  # fills it
        rows.append(fleet_row(args, folder, mirror, mirror.index_url, "devpi"))
        rows.append(repeat_row(args, folder, mirror))
    with PypiServer(venv, folder / "pypiserver", folder / "dists") as private:
        rows.append(fleet_row(args, folder, private, private.index_url, "pypiserver+auth"))
    h.print_table(["workload", "pm", "uv", "pm/uv", "requests (pm)", "requests (uv)"], rows)


if __name__ == "__main__":
    main()
