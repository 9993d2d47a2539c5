"""Benchmark: unsatisfiable sets — every refusal timed against uv refusing the same input.

Usage: python scripts/bench/refusals.py [--runs N] [--python PATH] [--keep] [--mode pypi|mirror] [--only A,B]

Each workload is a core of exact pins plus one wide range (>= 100 versions, none of them related to
the collision), and one plugin whose pin collides with core (issue 20's shapes):

- ``direct``: the plugin's pinned release needs an older release of a package core pins;
- ``two-deep``, ``three-deep``: the same collision one and two packages further down;
- ``extra``: the collision comes through an extra of the plugin's package;
- ``marker``: through a dependency whose marker holds on this target;
- ``python``: every release the plugin could use has Requires-Python and ranges (the shape of
  the public-index loop that ended "too complex" before the Requires-Python fix);
- ``deep-chain``: 10 links of 12 versions each, every version needing the next link, and every
  version of the last link colliding with core (pyrex-style: each path dies at its end);
- ``behind-source-only``: the colliding package also has a newer source-only release.
- ``cycle``: issue 33's smallest unsatisfiable cycle (a 1.0.0 needs b==1.0.0, a 2.0.0 needs
  b==2.0.0, b 1.0.0 needs a==2.0.0, b 2.0.0 needs a==1.0.0; the plugin needs a), which ended "too
  complex" after 20,000 rounds; ``cycle-4x6``: four projects of six versions around a cycle, each
  version pinning the next project's same version, the last one shifted by one;
- ``yanked``: the plugin's package pins a release that is yanked (PEP 592: only a root's exact
  pin opts into it, as uv).
- ``pyrax``: resolvelib's real snapshot of PyPI around ``pyrax==1.9.8`` (445 projects, 6,280
  releases; ``data/pypi-2020-02-15-pyrax.json.gz``, from sarugaku/resolvelib's functional tests,
  ISC licence), where the chains end at projects the snapshot has no release of: a missing
  project for both tools (no core here).

Cold: a fresh cache each run (pm's and uv's); warm: one cache warmed by an untimed run. Both tools
must refuse (pm exit 3, uv exit 1); a row where pm does not (a "too complex", exit 1) says FAILED. Target
(issue 20): every workload at most 3x uv, cold and warm. A benchmark, not a test.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import _harness as h
import workloads

from pm.testing import LocalIndex, build_packages

WIDE = {f"0.{100 + i}.0": ["wide-dep>=1"] for i in range(110)}  # fastapi-like: 110 versions
BASE_SPEC = {
    "wide": WIDE,
    "wide-dep": {"1.0": [], "2.0": []},
    "tenacity": {v: [] for v in ("8.1.0", "8.2.3", "9.0.0", "9.1.4")},
    "pydantic": {**{f"1.10.{i}": [] for i in range(8)}, "2.10.3": ["annotated-types>=0.6"]},
    "annotated-types": {"0.7.0": []},
    "anyio": {"4.7.0": {"requires": ["sniffio>=1.1"], "requires_python": ">=3.9"}},
    "sniffio": {"1.3.1": {"requires_python": ">=3.7"}},
}
CORE = ["tenacity==9.1.4", "pydantic==2.10.3", "anyio==4.7.0", "wide>=0.104,<1"]
MISSING = {"pyrax"}  # refused as a missing project: pm exits 1 (a failure, not a conflict), uv 1


def _workload(name: str, extra_spec: dict, plugin: list[str]) -> workloads.Workload:
    return workloads.Workload(name, {**BASE_SPEC, **extra_spec}, CORE, {}, {"plug": plugin})


def shapes() -> list[workloads.Workload]:
    chain = {f"link{i}": {f"{v}.0": [f"link{i + 1}>=1"] for v in range(1, 13)} for i in range(10)}
    chain["link10"] = {f"{v}.0": ["tenacity<9"] for v in range(1, 13)}  # the end of every path collides
    return [
        _workload("direct", {"lc": {"0.0.200": ["tenacity>=8.1,<9"], "0.3.0": ["tenacity>=8"]}}, ["lc==0.0.200"]),
        _workload("two-deep", {"lc": {"0.0.200": ["mid>=1"]}, "mid": {"1.0": ["tenacity<9"]}}, ["lc==0.0.200"]),
        _workload("three-deep", {"lc": {"0.0.200": ["mid>=1"]}, "mid": {"1.0": ["low>=1"]},
                                 "low": {"1.0": ["pydantic<2"]}}, ["lc==0.0.200"]),
        _workload("extra", {"lc": {"0.0.200": {"extras": {"all": ["tenacity<9"]}}}}, ["lc[all]==0.0.200"]),
        _workload("marker", {"lc": {"0.0.200": ["tenacity<9; python_version >= '3.8'"]}}, ["lc==0.0.200"]),
        _workload("python", {"lc": {"0.0.200": {"requires": ["pydantic>=1,<2", "anyio>=3"],
                                                "requires_python": ">=3.8.1,<4.0"}}}, ["lc==0.0.200"]),
        _workload("deep-chain", chain, ["link0"]),
        _workload("behind-source-only", {"lc": {"0.0.200": ["tenacity<9"], "0.1.0": {"sdist_only": True}}},
                  ["lc==0.0.200"]),
        _workload("cycle", {"cyc-a": {"1.0.0": ["cyc-b==1.0.0"], "2.0.0": ["cyc-b==2.0.0"]},
                            "cyc-b": {"1.0.0": ["cyc-a==2.0.0"], "2.0.0": ["cyc-a==1.0.0"]}}, ["cyc-a"]),
        _workload("cycle-4x6", {f"ring{i}": {f"{v}.0": [f"ring{(i + 1) % 4}=={v % 6 + 1 if i == 3 else v}.0"]
                                             for v in range(1, 7)} for i in range(4)}, ["ring0"]),
        _workload("yanked", {"lc": {"0.0.200": ["brokenrel==1.0"]},
                             "brokenrel": {"0.9": [], "1.0": {"yanked": "the wheel is missing a module"}}},
                  ["lc==0.0.200"]),
    ] + [pyrax()]


def pyrax() -> workloads.Workload:
    """The pyrax snapshot as a workload: each release's dependencies, projects without one left out."""
    with gzip.open(Path(__file__).parent / "data" / "pypi-2020-02-15-pyrax.json.gz", "rt") as snapshot:
        index = json.load(snapshot)
    spec = {name: {version: info["dependencies"] for version, info in versions.items()}
            for name, versions in index.items() if versions}
    return workloads.Workload("pyrax", spec, [], {}, {"plug": ["pyrax==1.9.8"]})


def row(args, folder: Path, workload: workloads.Workload) -> list[str]:
    layout = workloads.write(workload, folder / workload.name)
    files = build_packages(folder / workload.name / "dists", workload.spec)
    with LocalIndex(files, **h.index_knobs(args.mode)) as index:
        def ours(cache: Path) -> list[str]:
            return h.pm_argv(args.python, "resolve", layout, index.url)

        def ours_env(cache: Path) -> dict[str, str]:
            return h.pm_env(cache, folder / "no-bundled", folder / "pycache")

        def theirs(cache: Path) -> list[str]:
            return h.uv_compile_argv(args.target, layout, index.url, cache)

        uv_cold, uv_warm = _timed(args, folder / workload.name / "uv", theirs, lambda _: h.uv_env(), (1,))
        try:
            pm_cold, pm_warm = _timed(args, folder / workload.name / "pm", ours, ours_env,
                                      (1,) if workload.name in MISSING else (3,))
        except SystemExit as failed:  # not a refusal (a "too complex"): say so in the row, go on
            said = str(failed).strip().splitlines()
            shown = next((line for line in said if line.startswith("error:")), said[-1] if said else "?")
            return [workload.name, "FAILED", h.ms(uv_cold), shown[:60], "", h.ms(uv_warm), ""]
    return [workload.name, h.ms(pm_cold), h.ms(uv_cold), h.ratio(pm_cold, uv_cold, 3),
            h.ms(pm_warm), h.ms(uv_warm), h.ratio(pm_warm, uv_warm, 3)]


def _timed(args, folder: Path, command, env, ok: tuple[int, ...]) -> tuple[float, float]:
    def once(cache: Path) -> float:
        return h.run(command(cache), env(cache), ok=ok)[0]

    cold = h.median_of(args.runs, lambda i: once(folder / f"cold-{i}"))
    once(folder / "warm")
    warm = h.median_of(args.runs, lambda i: once(folder / "warm"))
    return cold, warm


def main() -> None:
    def more(parser) -> None:
        parser.add_argument("--mode", choices=h.INDEX_MODES, default="pypi")
        parser.add_argument("--only", default="", help="comma-separated workload names (default: all)")

    args = h.arguments(__doc__, more, runs=3)
    holder = h.work_dir(args.keep)
    folder = Path(holder if isinstance(holder, Path) else holder.name)
    print(f"python {args.python}; uv {h.UV}; median of {args.runs} runs; work folder {folder}", file=sys.stderr)
    only = {n for n in args.only.split(",") if n}
    rows = [row(args, folder, workload) for workload in shapes() if not only or workload.name in only]
    print(f"refusals (pm exit 3, uv exit 1), index headers: {args.mode}; target <= 3x uv")
    h.print_table(["workload", "pm cold", "uv cold", "ratio", "pm warm", "uv warm", "ratio"], rows)


if __name__ == "__main__":
    main()
