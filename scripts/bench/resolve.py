"""Benchmark: `hermes pm resolve` against `uv pip compile`, whole commands, cold and warm caches.

Usage: python scripts/bench/resolve.py [--runs N] [--python PATH] [--sizes 10,50,200] [--keep]

Workloads, served by a real local simple index (pm.testing.LocalIndex on 127.0.0.1):
  realistic    16 root requirements (core + 3 plugins) resolving to ~40 packages
  N plugins    N manifest plugins drawing their requirements from a shared pool of 80 packages

For each: median wall time of N runs of `python -m pm resolve --home H --index-url URL --core C
--core-lock L` and of `uv pip compile requirements.in` (the union of root requirements, core's lock
pins included) with an empty cache per run (cold) and a warmed cache (warm), and ours/uv.
Targets (issue 3): warm <= 3x uv, cold <= 2x uv. Also checks that both pin the same versions.
This is a benchmark script, not a test: it prints figures and never fails on them.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import _harness as h
import workloads

from pm.testing import LocalIndex, build_packages


def ours_pins(
    python: str, layout: workloads.Layout, url: str, env: dict[str, str]
) -> dict[str, str]:
    _, out = h.run(h.pm_argv(python, "resolve", layout, url, "--json"), env)
    return {p["name"]: p["version"] for p in json.loads(out)["resolution"]["packages"]}


def uv_pins(python: str, layout: workloads.Layout, url: str, cache: Path) -> dict[str, str]:
    argv = h.uv_compile_argv(python, layout, url, cache)
    h.run(argv, h.uv_env())
    text = Path(argv[argv.index("--output-file") + 1]).read_text()
    return dict(re.findall(r"^([A-Za-z0-9._-]+)==(\S+)", text, re.MULTILINE))


def compare(ours: dict[str, str], theirs: dict[str, str]) -> str:
    if ours == theirs:
        return "same pins"
    differ = sorted(n for n in ours.keys() | theirs.keys() if ours.get(n) != theirs.get(n))
    return f"{len(differ)} differ: " + ", ".join(
        f"{n} {ours.get(n)}/{theirs.get(n)}" for n in differ[:6]
    )


def measure(args, folder: Path, workload: workloads.Workload, url: str) -> list[str]:
    layout = workloads.write(workload, folder)
    bundled, pycache = folder / "no-bundled", folder.parent / "pycache"
    bundled.mkdir()
    pins = ours_pins(args.python, layout, url, h.pm_env(folder / "pins-cache", bundled, pycache))
    agreement = compare(pins, uv_pins(args.python, layout, url, folder / "pins-uv-cache"))
    ours_cold, ours_warm = h.cold_and_warm(
        args.runs,
        folder / "ours",
        lambda cache: h.pm_argv(args.python, "resolve", layout, url),
        lambda cache: h.pm_env(cache, bundled, pycache),
    )
    uv_cold, uv_warm = h.cold_and_warm(
        args.runs,
        folder / "uv",
        lambda cache: h.uv_compile_argv(args.python, layout, url, cache),
        lambda cache: h.uv_env(),
    )
    roots = len(workload.core_requires) + sum(map(len, workload.plugins.values()))
    return [
        workload.name,
        str(roots),
        str(len(pins)),
        h.ms(ours_cold),
        h.ms(uv_cold),
        h.ratio(ours_cold, uv_cold, 2),
        h.ms(ours_warm),
        h.ms(uv_warm),
        h.ratio(ours_warm, uv_warm, 3),
        agreement,
    ]


def main() -> None:
    args = h.arguments(__doc__.splitlines()[0])
    holder = h.work_dir(args.keep)
    folder = Path(holder if isinstance(holder, Path) else holder.name)
    realistic = workloads.realistic()
    spec, ref = workloads.pool()
    print(
        f"python {args.python}; uv {h.UV}; median of {args.runs} runs; work folder {folder}",
        file=sys.stderr,
    )
    rows = []
    with LocalIndex(build_packages(folder / "dists-realistic", realistic.spec)) as index:
        rows.append(measure(args, folder / "realistic", realistic, index.url))
    with LocalIndex(build_packages(folder / "dists-pool", spec)) as index:
        for count in (int(s) for s in args.sizes.split(",")):
            workload = workloads.pooled(count, spec, ref)
            rows.append(measure(args, folder / f"plugins-{count}", workload, index.url))
            print(f"  done: {workload.name}", file=sys.stderr)
    h.print_table(
        [
            "workload",
            "roots",
            "pins",
            "ours cold",
            "uv cold",
            "cold ratio",
            "ours warm",
            "uv warm",
            "warm ratio",
            "ours vs uv",
        ],
        rows,
    )


if __name__ == "__main__":
    main()
