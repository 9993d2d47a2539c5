"""Benchmark: `hermes pm resolve` against `uv pip compile`, whole commands, cold and warm caches.

Usage: python scripts/bench/resolve.py [--runs N] [--python PATH] [--sizes 10,50,200]
           [--workloads realistic,pool,big] [--modes pypi,mirror] [--seed N] [--tree-cache DIR]
           [--keep] [--raw-index]

Workloads, served by a real local simple index (pm.testing.LocalIndex on 127.0.0.1):
  realistic    small pages: 16 root requirements (core + 3 plugins) resolving to ~40 packages
  N plugins    N manifest plugins drawing their requirements from a shared pool of 80 packages
               (--sizes; "pool" in --workloads)
  big pages    5 memory-style plugins and an exact-pinned core over projects with 5,000-10,000
               files each across platform tags, CPython/abi3/PyPy and ~100-200 versions, like
               numpy, grpcio and pydantic-core (see bigpages.py; the tree is built once per
               --seed and cached under --tree-cache)
Index header modes (--modes), presets of pm.testing.index.PRESETS:
  pypi         pages `Cache-Control: max-age=600` with an ETag, PEP 658 metadata files
  mirror       a bare mirror: no Cache-Control, no validators, no metadata files (metadata only
               from the wheels: by range requests where the server honours them, else whole)
  revalidate   LocalIndex's stock headers (max-age=0, must-revalidate, ETag, PEP 658): what
               this bench used before; it flatters pm, since uv revalidates every page

For each workload and mode, pm and uv run pairwise, alternating which goes first: `python -m pm
resolve --home H --index-url URL --core C --core-lock L --python REAL` and `uv pip compile
requirements.in --python REAL --only-binary :all:` (the union of root requirements, core's lock
pins included; wheels only, as pm resolves), with an empty cache per run (cold) and a warmed one
(warm). REAL is the bench interpreter's real executable, so neither tool pays for a shim.
pm's bytecode is cached (PYTHONPYCACHEPREFIX) and warmed by an untimed first run. Reported:
medians, ratios to uv, pm's second identical resolve (a result-cache hit, once pm has one),
body bytes the index sent in a cold run (pages; metadata = .metadata files plus wheel bytes,
whole or ranges; how many wheel GETs were answered whole / by range), peak RSS of each tool's
process, and whether both pin the same versions. Then the targets of issue 11, each ok or MISS
(or n/a: "no wheel fetched whole while ranges work" needs an index that answers ranges with
206, which LocalIndex does once its `_file` serves Range). The machine is shared: figures are
noisy.
This is a benchmark script, not a test: it prints figures and never fails on them.
"""

from __future__ import annotations

import json
import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

import _harness as h
import bigpages
import workloads

from pm.testing import LocalIndex, build_packages

KINDS = ("pages", "metadata", "files", "other")
UV_EXTRA = ("--only-binary", ":all:")


@dataclass(frozen=True)
class Sample:
    """One timed command: seconds, peak RSS, and what the index sent while it ran."""

    seconds: float
    peak_rss: int
    sent: dict[str, int]
    whole_wheels: int  # GETs of a file answered 200: the whole wheel
    ranged: int = 0  # answers 206: the server honoured a Range
    requests: int = 0  # every request answered (304s included)
    cpu: float = 0.0  # user + system seconds of the command's process (and children it waited for)


@dataclass(frozen=True)
class Figures:
    """A tool on a workload in one mode."""

    cold: list[Sample]
    warm: list[Sample]
    second: Sample  # the first run after the warming one: a second identical command

    def median(self, which: str) -> float:
        return statistics.median(s.seconds for s in getattr(self, which))

    def cpu(self, which: str) -> float:
        return statistics.median(s.cpu for s in getattr(self, which))

    def bytes(self, kind: str) -> float:
        return statistics.median(s.sent[kind] for s in self.cold)

    def meta_bytes(self) -> float:
        return statistics.median(s.sent["metadata"] + s.sent["files"] for s in self.cold)

    def peak(self) -> int:
        return max(s.peak_rss for s in [*self.cold, *self.warm, self.second])


def sample(index: LocalIndex | None, argv: list[str], env: dict[str, str]) -> Sample:
    """Run one command; with an ``index``, what it sent meanwhile (else nothing is counted)."""
    if index is None:
        done = h.run_measured(argv, env)
        return Sample(done.seconds, done.peak_rss, dict.fromkeys(KINDS, 0), 0, cpu=done.cpu)
    index.reset_log()
    done = h.run_measured(argv, env)
    files = [t for t in index.transfers if t.kind == "files" and t.method == "GET"]
    whole = sum(1 for t in files if t.status == 200)
    ranged = sum(1 for t in files if t.status == 206)
    return Sample(done.seconds, done.peak_rss, index.bytes_sent(), whole, ranged,
                  len(index.transfers), done.cpu)


class Tools:
    """The two commands of one workload on one index."""

    def __init__(self, args, folder: Path, layout: workloads.Layout, url: str) -> None:
        self.args, self.folder, self.layout, self.url = args, folder, layout, url
        self.bundled, self.pycache = folder / "no-bundled", folder.parent / "pycache"
        self.bundled.mkdir(parents=True, exist_ok=True)

    def pm(self, cache: Path, *extra: str) -> tuple[list[str], dict[str, str]]:
        argv = h.pm_argv(self.args.python, "resolve", self.layout, self.url, "--python",
                         self.args.target, *extra)
        return argv, h.pm_env(cache, self.bundled, self.pycache)

    def uv(self, cache: Path) -> tuple[list[str], dict[str, str]]:
        argv = h.uv_compile_argv(self.args.target, self.layout, self.url, cache, *UV_EXTRA)
        return argv, h.uv_env()


def ours_pins(tools: Tools) -> dict[str, str]:
    argv, env = tools.pm(tools.folder / "pins-cache", "--json")
    _, out = h.run(argv, env)  # also warms pm's bytecode cache
    return {p["name"]: p["version"] for p in json.loads(out)["resolution"]["packages"]}


def uv_pins(tools: Tools) -> dict[str, str]:
    argv, env = tools.uv(tools.folder / "pins-uv-cache")
    h.run(argv, env)
    text = Path(argv[argv.index("--output-file") + 1]).read_text()
    return dict(re.findall(r"^([A-Za-z0-9._-]+)==(\S+)", text, re.MULTILINE))


def compare(ours: dict[str, str], theirs: dict[str, str]) -> str:
    if ours == theirs:
        return "same pins"
    differ = sorted(n for n in ours.keys() | theirs.keys() if ours.get(n) != theirs.get(n))
    return f"{len(differ)} differ: " + ", ".join(
        f"{n} {ours.get(n)}/{theirs.get(n)}" for n in differ[:6]
    )


def pairwise(runs: int, index: LocalIndex | None, tools: Tools) -> tuple[Figures, Figures]:
    """pm and uv alternately: cold runs (a fresh cache each), then warm runs (one warmed cache
    each); the pair's order flips every run so neither always runs right after the other."""
    folder = tools.folder
    commands = {"pm": tools.pm, "uv": tools.uv}
    cold: dict[str, list[Sample]] = {"pm": [], "uv": []}
    warm: dict[str, list[Sample]] = {"pm": [], "uv": []}
    for i in range(runs):
        for tool in ("pm", "uv") if i % 2 == 0 else ("uv", "pm"):
            cold[tool].append(sample(index, *commands[tool](folder / f"{tool}-cold-{i}")))
    second = {}
    for tool, command in commands.items():
        h.run(*command(folder / f"{tool}-warm"))  # warm it (untimed)
        second[tool] = sample(index, *command(folder / f"{tool}-warm"))
    for i in range(runs):
        for tool in ("pm", "uv") if i % 2 == 0 else ("uv", "pm"):
            warm[tool].append(sample(index, *commands[tool](folder / f"{tool}-warm")))
    pm, uv = (Figures(cold[t], warm[t], second[t]) for t in ("pm", "uv"))
    return pm, uv


@dataclass(frozen=True)
class Result:
    workload: str
    mode: str
    pins: int
    agreement: str
    pm: Figures
    uv: Figures


def measure(args, folder: Path, workload: workloads.Workload, index: LocalIndex,
            mode: str) -> Result:
    layout = workloads.write(workload, folder)
    tools = Tools(args, folder, layout, index.url)
    pins = ours_pins(tools)
    agreement = compare(pins, uv_pins(tools))
    pm, uv = pairwise(args.runs, index, tools)
    print(f"  done: {workload.name} ({mode})", file=sys.stderr)
    return Result(workload.name, mode, len(pins), agreement, pm, uv)


def serve(files: list, mode: str, **knobs: object) -> LocalIndex:
    return LocalIndex(files, **h.index_knobs(mode), **knobs)  # type: ignore[arg-type]


def run_all(args, folder: Path) -> list[Result]:
    chosen = args.workloads.split(",")
    modes = args.modes.split(",")
    results = []
    if "realistic" in chosen:
        realistic = workloads.realistic()
        files = build_packages(folder / "dists-realistic", realistic.spec)
        for mode in modes:
            with serve(files, mode) as index:
                results.append(measure(args, folder / f"realistic-{mode}", realistic, index, mode))
    if "pool" in chosen:
        spec, ref = workloads.pool()
        files = build_packages(folder / "dists-pool", spec)
        for mode in modes:
            with serve(files, mode) as index:
                for count in (int(s) for s in args.sizes.split(",")):
                    workload = workloads.pooled(count, spec, ref)
                    results.append(
                        measure(args, folder / f"plugins-{count}-{mode}", workload, index, mode)
                    )
    if "big" in chosen:
        records = bigpages.tree(args.seed, args.tree_cache)
        print(f"  big pages: {bigpages.describe(records)}", file=sys.stderr)
        workload = bigpages.workload(args.seed)
        for mode in modes:
            with serve(records, mode, rescan=False) as index:
                results.append(measure(args, folder / f"big-{mode}", workload, index, mode))
    return results


def times_table(results: list[Result]) -> None:
    rows = [
        [
            r.workload, r.mode, str(r.pins),
            h.ms(r.pm.median("cold")), h.ms(r.uv.median("cold")),
            f"{r.pm.median('cold') / r.uv.median('cold'):.2f}x",
            h.ms(r.pm.median("warm")), h.ms(r.uv.median("warm")),
            f"{r.pm.median('warm') / r.uv.median('warm'):.2f}x",
            h.ms(r.pm.second.seconds), r.agreement,
        ]
        for r in results
    ]
    h.print_table(["workload", "mode", "pins", "pm cold", "uv cold", "cold/uv", "pm warm",
                   "uv warm", "warm/uv", "pm 2nd run", "pm vs uv"], rows)


def cpu_table(results: list[Result]) -> None:
    """CPU seconds (user + system) beside wall time: on a shared 2-core machine wall time follows
    CPU time once other work runs, so the CPU ratio is the steadier one."""
    rows = []
    for r in results:
        row = [r.workload, r.mode]
        for which in ("cold", "warm"):
            pm, uv = r.pm.cpu(which), r.uv.cpu(which)
            row += [h.ms(r.pm.median(which)), h.ms(pm), h.ms(r.uv.median(which)), h.ms(uv),
                    f"{pm / uv:.2f}x" if uv else "-"]
        rows.append(row)
    h.print_table(["workload", "mode", "pm cold wall", "pm cold CPU", "uv cold wall",
                   "uv cold CPU", "cold CPU/uv", "pm warm wall", "pm warm CPU", "uv warm wall",
                   "uv warm CPU", "warm CPU/uv"], rows)


def _files(figures: Figures) -> str:
    """Wheel GETs of a cold run (median): answered whole (200) / by range (206)."""
    whole = statistics.median(s.whole_wheels for s in figures.cold)
    return f"{whole:g}/{statistics.median(s.ranged for s in figures.cold):g}"


def bytes_table(results: list[Result]) -> None:
    rows = []
    for r in results:
        ratio = r.pm.meta_bytes() / r.uv.meta_bytes() if r.uv.meta_bytes() else float("nan")
        rows.append([
            r.workload, r.mode,
            h.size(r.pm.bytes("pages")), h.size(r.pm.bytes("metadata")), h.size(r.pm.bytes("files")),
            _files(r.pm),
            h.size(r.uv.bytes("pages")), h.size(r.uv.bytes("metadata")), h.size(r.uv.bytes("files")),
            _files(r.uv),
            f"{ratio:.2f}x",
            h.size(statistics.median(s.sent["pages"] for s in r.pm.warm)),
            h.size(statistics.median(s.sent["pages"] for s in r.uv.warm)),
            f"{statistics.median(s.requests for s in r.pm.warm):g}/"
            f"{statistics.median(s.requests for s in r.uv.warm):g}",
            h.size(r.pm.peak()), h.size(r.uv.peak()),
        ])
    h.print_table(["workload", "mode", "pm pages", "pm .metadata", "pm wheels", "whole/206",
                   "uv pages", "uv .metadata", "uv wheels", "whole/206", "meta pm/uv",
                   "pm warm pages", "uv warm pages", "warm reqs pm/uv", "pm peak RSS",
                   "uv peak RSS"], rows)


def check(label: str, value: float, target: float, unit: str = "x") -> str:
    shown = f"{value:.2f}x" if unit == "x" else f"{value:.0f} {unit}"
    limit = f"{target:g}x" if unit == "x" else f"{target:g} {unit}"
    return f"  {'ok  ' if value <= target else 'MISS'}  {label}: {shown} (target <= {limit})"


def targets(results: list[Result]) -> list[str]:
    """Issue 11's targets, one line each, for the workloads this run measured."""
    lines = []
    for r in results:
        name = f"{r.workload} ({r.mode})"
        if r.workload == "big pages":
            lines.append(check(f"warm resolve, heavy set, {name}",
                                r.pm.median("warm") / r.uv.median("warm"), 1.5))
            lines.append(check(f"cold resolve, heavy set, {name}",
                                r.pm.median("cold") / r.uv.median("cold"), 3))
            if r.uv.meta_bytes():
                lines.append(check(f"metadata bytes cold vs uv, {name}",
                                    r.pm.meta_bytes() / r.uv.meta_bytes(), 1.5))
            if any(s.ranged for s in [*r.pm.cold, *r.uv.cold]):
                whole = max(s.whole_wheels for s in r.pm.cold)
                lines.append(check(f"wheels pm fetched whole while ranges work, {name}",
                                   whole, 0, "wheels"))
            elif r.mode == "mirror":
                lines.append(f"  n/a   wheels fetched whole while ranges work, {name}: "
                             "this index answered no Range request with 206")
            lines.append(check(f"pm peak memory, {name}", r.pm.peak() / 1e6, 300, "MB"))
        if r.workload in ("realistic", "big pages") and r.uv.cpu("cold"):
            lines.append(check(f"cold resolve's CPU vs uv's (issue 33), {name}",
                                r.pm.cpu("cold") / r.uv.cpu("cold"), 2))
        if r.workload == "realistic":
            lines.append(check(f"small-page index, fresh cache, whole command, {name}",
                                r.pm.median("cold") / r.uv.median("cold"), 5))
        if r.workload in ("realistic", "big pages"):
            lines.append(check(f"second identical pm resolve (result-cache hit), {name}",
                                r.pm.second.seconds * 1000, 80, "ms"))
    return lines


def options(parser) -> None:
    parser.add_argument("--workloads", default="realistic,pool,big",
                        help="any of realistic,pool,big (default: all three)")
    parser.add_argument("--modes", default="pypi,mirror",
                        help="index header modes: any of pypi,mirror,revalidate "
                        "(default: pypi,mirror)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the big-pages tree")
    parser.add_argument("--tree-cache", type=Path, default=None,
                        help="where big-pages trees are kept "
                        f"(default: {bigpages.default_cache()})")


def main() -> None:
    args = h.arguments(__doc__, options)
    holder = h.work_dir(args.keep)
    folder = Path(holder if isinstance(holder, Path) else holder.name)
    print(
        f"python {args.python} (both tools target {args.target}); uv {h.UV}; "
        f"median of {args.runs} runs; work folder {folder}",
        file=sys.stderr,
    )
    results = run_all(args, folder)
    print("whole-command wall time, median of", args.runs, "pairwise runs (shared machine: noisy)")
    times_table(results)
    print()
    print("CPU seconds (user + system of each command's process), median of", args.runs)
    cpu_table(results)
    print()
    print("body bytes the index sent in a cold run (median) and peak RSS over all runs")
    bytes_table(results)
    print()
    print("issue 11 targets")
    print("\n".join(targets(results)))


if __name__ == "__main__":
    main()
