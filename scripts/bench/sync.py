"""Benchmark: `hermes pm sync` / `hermes pm check` as whole commands against uv doing the same.

Usage: python scripts/bench/sync.py [--runs N] [--python PATH] [--sizes 10,50,200] [--keep]
           [--mode revalidate|pypi|mirror]

1. No-op: after a first sync of N plugins (a shared pool of 80 packages on a local index) and
   one untimed no-op of each command (the full one, which the shortcut remembers), the median
   time of `python -m pm sync` (nothing changed), `python -m pm check` and `hermes pm sync` (the
   console script), against `uv pip compile` of the same requirements with a warm cache; the four
   interleaved, run after run, so a shared machine's load falls on all of them alike.
   Target (issue 22): a no-op at most twice that uv pip compile; the per-plugin slope is printed.
2. Build: the realistic workload (~40 packages). With warm caches, the median time of a
   `python -m pm sync` that must build (each run one plugin requirement gains a different
   `!=0.0.N` exclusion: the inputs change, the resolution does not): resolve (the venv made
   meanwhile) + `uv pip install` of the hashed files + verify + select; against `uv venv` + `uv pip install
   --no-deps -r` of the same pins with hashes into a fresh venv (plain `name==version --hash`
   lines with --index-url, and pm's own form, direct URLs with --no-index). Target (issue 4):
   <= 1.5x. The build step alone: `python -m pm sync --from pylock.toml` (a frozen sync, no
   resolver; each run's file is exported, untimed, after the inputs change) against the same. The
   four are run in turns, one of each per round, so that a change of the machine's load between
   rounds moves pm's and uv's figures alike. One more sync, through a shim on HERMES_PM_UV that
   logs each uv call, splits the build into uv's time and pm's own. "Python floor", timed in the
   same rounds: the same interpreter starting and importing only packaging.requirements and yaml
   (:data:`FLOOR`), what no Python implementation of pm can skip, as a ratio to uv's pair.
--mode picks the local index's headers (see resolve.py; default revalidate, LocalIndex's stock
max-age=0, under which a warm uv revalidates every page: with pypi a warm uv compile sends no
request at all, a harder bar for the no-op). uv targets the real executable behind --python (a venv's symlink or a pyenv shim resolved), so
its interpreter discovery is cheap; pm runs on --python itself (it needs pm's dependencies).
This is a benchmark script, not a test: it prints figures and never fails on them.
"""

from __future__ import annotations

import shutil
import statistics
import sys
from pathlib import Path

import _harness as h
import workloads

from pm.testing import LocalIndex, add_plugin, build_packages


def noop_row(args, folder: Path, workload: workloads.Workload, url: str) -> tuple[list[str], tuple[int, float, float]]:
    layout = workloads.write(workload, folder)
    env = h.pm_env(folder / "pm-cache", folder / "no-bundled", folder.parent / "pycache")
    first, _ = h.run(h.pm_argv(args.python, "sync", layout, url), env)
    uv_cache = folder / "uv-cache"
    hermes = str(Path(args.python).with_name("hermes"))  # the console script the wheel installs
    commands = {
        "sync": lambda: h.pm_argv(args.python, "sync", layout, url),
        "check": lambda: h.pm_argv(args.python, "check", layout, url),
        "hermes": lambda: [hermes, "pm", *h.pm_argv(args.python, "sync", layout, url)[3:]],
        "uv": lambda: h.uv_compile_argv(args.target, layout, url, uv_cache),
    }
    for name, argv in commands.items():  # untimed: the full no-ops (remembered), uv's warm cache
        h.run(argv(), h.uv_env() if name == "uv" else env)  # check must be ready (exit 0)
    times: dict[str, list[float]] = {name: [] for name in commands}
    for i in range(args.runs):  # interleaved, in a turning order: the machine's load falls on all alike
        names = list(commands)
        for name in names[i % len(names):] + names[: i % len(names)]:
            times[name].append(h.run(commands[name](), h.uv_env() if name == "uv" else env)[0])
    sync, check, via_hermes, compile_ = (statistics.median(times[n]) for n in commands)
    return [
        workload.name,
        h.ms(first),
        h.ms(sync),
        h.ms(check),
        h.ms(via_hermes),
        h.ms(compile_),
        h.ratio(sync, compile_, 2),
        h.ratio(check, compile_, 2),
        h.ratio(via_hermes, compile_, 2),
    ], (len(workload.plugins), sync, check)


def _change_inputs(layout: workloads.Layout, workload: workloads.Workload, run: int) -> None:
    """Rewrite the first plugin with its first requirement excluding ``0.0.<run>``: new inputs
    (a new fingerprint), the same resolution."""
    plugin, requirements = next(iter(workload.plugins.items()))
    first, *rest = requirements
    joiner = "," if any(op in first for op in "<>=!~") else ""
    add_plugin(
        layout.home / "plugins",
        plugin,
        style="manifest",
        dependencies=[f"{first}{joiner}!=0.0.{run}", *rest],
    )


_SHIM = """#!{python} -S
import subprocess, sys, time
started = time.perf_counter()
done = subprocess.run([{uv!r}, *sys.argv[1:]])
with open({log!r}, "a") as log:
    log.write(f"{{time.perf_counter() - started:.6f}} {{sys.argv[1]}}\\n")
sys.exit(done.returncode)
"""


def uv_share(
    args, layout: workloads.Layout, workload: workloads.Workload, url: str, env: dict[str, str]
) -> tuple[float, float]:
    """One more building sync with uv behind a logging shim: (seconds of the sync, of uv in it)."""
    folder = layout.home.parent
    log, shim = folder / "uv-calls.log", folder / "uv-shim"
    shim.write_text(_SHIM.format(python=sys.executable, uv=h.UV, log=str(log)))
    shim.chmod(0o755)
    _change_inputs(layout, workload, 999)
    seconds, _ = h.run(
        h.pm_argv(args.python, "sync", layout, url), {**env, "HERMES_PM_UV": str(shim)}
    )
    calls = [line.split() for line in log.read_text().splitlines()]
    print(
        "  uv calls in one building sync (pm's share also holds ~8 ms of shim start per call): "
        + ", ".join(f"{c[1]} {float(c[0]) * 1000:.0f} ms" for c in calls),
        file=sys.stderr,
    )
    return seconds, sum(float(c[0]) for c in calls)


def _pins(
    layout: workloads.Layout, python: str, url: str, env: dict[str, str]
) -> tuple[Path, Path]:
    """The current resolution as pins twice: ``name==v --hash`` and pm's ``name @ URL --hash``."""
    _, text = h.run([*h.pm_argv(python, "export", layout, url), "--format", "requirements"], env)
    plain = layout.home.parent / "pins.txt"
    plain.write_text(text)
    state = layout.home / "pm" / "generations"
    direct = max(state.glob("*/requirements.txt"), key=lambda p: p.stat().st_mtime)
    return plain, direct


def uv_install(python: str, venv: Path, pins: Path, cache: Path, index: list[str]) -> float:
    shutil.rmtree(venv, ignore_errors=True)
    env = h.uv_env()
    made, _ = h.run(
        [h.UV, "venv", "--quiet", "--python", python, "--cache-dir", str(cache), str(venv)], env
    )
    installed, _ = h.run(
        [
            h.UV,
            "pip",
            "install",
            "--quiet",
            "--python",
            str(venv / "bin" / "python"),
            "--cache-dir",
            str(cache),
            "--no-deps",
            "--require-hashes",
            *index,
            "-r",
            str(pins),
        ],
        env,
    )
    return made + installed


#: What any pm process that reads plugin declarations pays before its own code runs: the
#: interpreter's start and the parsers it cannot do without (requirements, YAML manifests).
FLOOR = "import packaging.requirements, yaml"


def frozen_sync(
    args, layout: workloads.Layout, workload: workloads.Workload, url: str, env: dict[str, str], run: int
) -> float:
    """Seconds of one `pm sync --from pylock.toml` that builds: new inputs, exported (untimed) to a
    pylock.toml whose recorded inputs match them, so the frozen sync builds without resolving."""
    _change_inputs(layout, workload, run)
    frozen = layout.home.parent / f"pylock.run{run}.toml"  # a PEP 751 name, as uv and pip read
    h.run([*h.pm_argv(args.python, "export", layout, url), "--output", str(frozen)], env)
    return h.run([*h.pm_argv(args.python, "sync", layout, url), "--from", str(frozen)], env)[0]


def build_row(args, folder: Path, workload: workloads.Workload, url: str) -> list[str]:
    """pm's building sync and frozen sync, and uv's two pairs, run in turns (one of each per round,
    medians over the rounds): on a shared machine a change of load then moves both sides alike."""
    layout = workloads.write(workload, folder)
    env = h.pm_env(folder / "pm-cache", folder / "no-bundled", folder.parent / "pycache")
    h.run(h.pm_argv(args.python, "sync", layout, url), env)  # cold build: warms every cache
    plain, direct = _pins(layout, args.python, url, env)
    pairs = []
    for pins, index in ((plain, ["--index-url", url]), (direct, ["--no-index"])):
        cache = folder / f"uv-cache-{pins.stem}"
        uv_install(args.target, folder / "venv", pins, cache, index)  # warm the cache
        pairs.append((pins, cache, index))

    def ours(i: int) -> float:
        _change_inputs(layout, workload, i)
        return h.run(h.pm_argv(args.python, "sync", layout, url), env)[0]

    rounds: list[tuple[float, ...]] = []
    for i in range(args.runs):
        rounds.append((ours(i), frozen_sync(args, layout, workload, url, env, 500 + i),
                       h.run([args.python, "-c", FLOOR], env)[0],
                       *(uv_install(args.target, folder / "venv", pins, cache, index) for pins, cache, index in pairs)))
    sync, frozen, floor, *figures = (statistics.median(column) for column in zip(*rounds, strict=True))
    resolve = h.median_of(
        args.runs, lambda i: h.run(h.pm_argv(args.python, "resolve", layout, url), env)[0]
    )
    shimmed, in_uv = uv_share(args, layout, workload, url, env)
    pins_count = sum(1 for line in plain.read_text().splitlines() if "==" in line)
    return [
        f"{workload.name} ({pins_count} pins)",
        h.ms(sync),
        h.ms(resolve),
        h.ms(frozen),
        h.ratio(frozen, figures[1], 1.5),
        f"{h.ms(in_uv)} / {h.ms(shimmed - in_uv)}",
        h.ms(figures[0]),
        h.ratio(sync, figures[0], 1.5),
        h.ms(figures[1]),
        h.ratio(sync, figures[1], 1.5),
        f"{h.ms(floor)} ({floor / figures[1]:.2f}x)",
    ]


def slope(points: list[tuple[int, float]]) -> float:
    """Seconds per plugin of the least-squares line through ``(plugins, seconds)``."""
    mean_n = sum(n for n, _ in points) / len(points)
    mean_t = sum(t for _, t in points) / len(points)
    spread = sum((n - mean_n) ** 2 for n, _ in points)
    return sum((n - mean_n) * (t - mean_t) for n, t in points) / spread if spread else 0.0


def _mode_option(parser) -> None:
    parser.add_argument("--mode", choices=h.INDEX_MODES, default="revalidate",
                        help="the local index's headers (default: revalidate)")


def main() -> None:
    args = h.arguments(__doc__, _mode_option)
    holder = h.work_dir(args.keep)
    folder = Path(holder if isinstance(holder, Path) else holder.name)
    print(
        f"python {args.python}; uv {h.UV}; median of {args.runs} runs; work folder {folder}",
        file=sys.stderr,
    )
    spec, ref = workloads.pool()
    noop, figures = [], []
    knobs = h.index_knobs(args.mode)
    with LocalIndex(build_packages(folder / "dists-pool", spec), **knobs) as index:
        for count in (int(s) for s in args.sizes.split(",")):
            row, measured = noop_row(
                args, folder / f"plugins-{count}", workloads.pooled(count, spec, ref), index.url
            )
            noop.append(row)
            figures.append(measured)
            print(f"  done: {count} plugins", file=sys.stderr)
    realistic = workloads.realistic()
    with LocalIndex(build_packages(folder / "dists-realistic", realistic.spec), **knobs) as index:
        build = build_row(args, folder / "build", realistic, index.url)
    print("no-op (after a first sync), target: <= 2x uv pip compile warm")
    h.print_table(
        ["workload", "first sync", "no-op sync", "check", "hermes pm sync", "uv compile warm", "sync/uv",
         "check/uv", "hermes/uv"],
        noop,
    )
    if len(figures) > 1:
        print(f"per-plugin slope (least squares over {len(figures)} sizes): no-op sync "
              f"{slope([(n, t) for n, t, _ in figures]) * 1e3:.3f} ms/plugin, check "
              f"{slope([(n, t) for n, _, t in figures]) * 1e3:.3f} ms/plugin")
    print()
    print("building a generation with warm caches, target: <= 1.5x uv venv + uv pip install")
    h.print_table(
        [
            "workload",
            "pm sync (build)",
            "pm resolve alone",
            "pm sync --from",
            "--from/uv URLs",
            "uv / pm in one sync",
            "uv pins+index",
            "ratio",
            "uv URLs --no-index",
            "ratio",
            "Python floor (/uv URLs)",
        ],
        [build],
    )


if __name__ == "__main__":
    main()
