"""Benchmark: the catalog gate (`hermes pm catalog check`) against uv answering the same questions.

Usage: python scripts/bench/catalog.py [--entries 50] [--python PATH]

A catalog of ``--entries`` entries (pm.testing.catalogs: colliding pairs, a group of three, a
source-only entry on Linux, one requiring Python < 3.13, fillers) in real git repositories, on a
local index with PyPI's headers, checked over four targets (linux and macos x Python 3.12 and
3.13). Timed, whole commands:

- the gate, cold caches: `python -m pm catalog check DIR --platform ... --python-version ... --json`;
- uv: one `uv pip compile --python-platform P --python-version V` per (entry, target) pair, in
  sequence, cold cache (what a catalog's CI would otherwise run, solo checks only);
- `--changed-since` the gate's report after one entry moved to a new pin.

Targets (issue 23): gate <= 2x the uv sequence; the --changed-since run <= 10 % of the full gate.

``--scale N`` (issue 35): instead, a generated catalog shaped like Home Assistant's (N entries in
subdirs of one repository, each pinning its own libraries exactly over a shared pool, a core with
a lock; pm.testing.catalogs.make_scale_catalog) on a local index of generated wheels, one target
(the running interpreter): the gate's time per entry, its peak RSS (target <= 400 MB at 1,000),
and the together pass alone (a --changed-since run over the gate's own report: every solo verdict
reused) against one `uv pip compile` of the same union (target <= 1.5x).
A benchmark, not a test.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import _harness as h

from pm.testing import PRESETS, index_from_spec
from pm.testing.catalogs import make_catalog, recommit

TARGETS = [("linux", "3.12"), ("linux", "3.13"), ("macos", "3.12"), ("macos", "3.13")]


def main() -> int:
    args = h.arguments(__doc__ or "", _options, runs=1, local=False)
    if args.scale:
        return _scale(args.scale)
    with tempfile.TemporaryDirectory(prefix="hermes-bench-catalog-") as work:
        root = Path(work)
        made = make_catalog(root, args.entries)
        with index_from_spec(root / "dists", made.spec, **PRESETS["pypi"]) as index:
            (root / "core.toml").write_text(made.core_pyproject())
            (root / "lock.txt").write_text("")
            (root / "home").mkdir()
            env = h.pm_env(root / "pm-cache", root / "none", root / "pycache")
            targets = [a for p, v in TARGETS for a in ("--platform", p)][:4] + [
                a for v in ("3.12", "3.13") for a in ("--python-version", v)]
            gate = [sys.executable, "-m", "pm", "catalog", "check", str(made.folder), "--home", str(root / "home"),
                    "--index-url", index.url, "--core", str(root / "core.toml"), "--core-lock", str(root / "lock.txt"),
                    *targets, "--json"]
            seconds, out = h.run(gate, env, ok=(0, 3))
            report = root / "report.json"
            report.write_text(out)
            together = json.loads(out)["together"]
            uv_seconds = _uv_pairs(root, made, index.url)
            name = "fine-0" if (made.folder / "fine-0.yaml").exists() else sorted(made.repos)[0]
            commit = recommit(made.repos[name], name, ["base>=1"])
            entry = json.loads((made.folder / f"{name}.yaml").read_text())
            (made.folder / f"{name}.yaml").write_text(json.dumps({**entry, "sha": commit}))
            env = h.pm_env(root / "pm-cache-2", root / "none", root / "pycache")
            changed, _ = h.run([*gate, "--changed-since", str(report)], env, ok=(0, 3))
    groups = sorted({tuple(g) for t in together for g in t["groups"]})
    print(f"{args.entries} entries x {len(TARGETS)} targets; groups named: {len(groups)} "
          f"({len(made.pairs)} pairs and a group of three expected)")
    print(f"gate, cold:                          {seconds * 1000:8.0f} ms")
    print(f"uv pip compile per (entry, target):  {uv_seconds * 1000:8.0f} ms   gate/uv {seconds / uv_seconds:.2f}x "
          f"({'ok' if seconds <= 2 * uv_seconds else 'MISS'}, target <= 2x)")
    print(f"--changed-since, one entry moved:    {changed * 1000:8.0f} ms   {changed / seconds:.0%} of the gate "
          f"({'ok' if changed <= 0.1 * seconds else 'MISS'}, target <= 10 %)")
    return 0


def _options(parser) -> None:  # type: ignore[no-untyped-def]
    parser.add_argument("--entries", type=int, default=50)
    parser.add_argument("--scale", type=int, default=0, metavar="N", help="the generated N-entry catalog instead")


def _scale(entries: int) -> int:
    from pm.testing.catalogs import make_scale_catalog

    with tempfile.TemporaryDirectory(prefix="hermes-bench-catalog-scale-") as work:
        root = Path(work)
        made = make_scale_catalog(root, entries)
        with index_from_spec(root / "dists", made.spec, **PRESETS["pypi"]) as index:
            core = "[project]\nname = 'host'\ndependencies = [" + ", ".join(repr(r) for r in made.core) + "]\n"
            (root / "core.toml").write_text(core)
            (root / "lock.txt").write_text("".join(f"{n}=={v}\n" for n, v in made.lock.items()))
            (root / "home").mkdir()
            env = h.pm_env(root / "pm-cache", root / "none", root / "pycache")
            gate = [sys.executable, "-m", "pm", "catalog", "check", str(made.folder), "--home", str(root / "home"),
                    "--index-url", index.url, "--core", str(root / "core.toml"), "--core-lock", str(root / "lock.txt"),
                    "--json"]
            full = h.run_measured(gate, env, ok=(0, 3))
            (root / "report.json").write_text(full.stdout)
            verdicts = json.loads(full.stdout)["verdicts"]
            together = h.run_measured([*gate, "--changed-since", str(root / "report.json")], env, ok=(0, 3))
            union = root / "union.in"
            union.write_text("\n".join([*made.core, *(r for rs in made.requirements.values() for r in rs)]) + "\n")
            (root / "constraints.txt").write_text((root / "lock.txt").read_text())
            uv_env = h.uv_env() | {"UV_CACHE_DIR": str(root / "uv-cache")}
            compile_argv = [h.UV, "pip", "compile", str(union), "-c", str(root / "constraints.txt"), "--index-url",
                            index.url, "--quiet", "-o", str(root / "union.txt")]
            h.run_measured(compile_argv, uv_env)  # warm uv's cache, as pm's is warm for the together run
            uv = h.run_measured(compile_argv, uv_env)
    refused = sum(v["verdict"] != "ok" for v in verdicts)
    ratio = together.seconds / uv.seconds
    print(f"{entries} entries in one repository, one target; {refused} verdicts not ok")
    print(f"gate, cold:                {full.seconds:8.1f} s   {full.seconds / entries * 1000:6.1f} ms per entry")
    print(f"gate peak RSS:             {full.peak_rss / 2**20:8.0f} MB  "
          f"({'ok' if full.peak_rss <= 400 * 2**20 or entries < 1000 else 'MISS'}, target <= 400 MB at 1,000)")
    print(f"together pass (warm, --changed-since): {together.seconds:8.2f} s   peak {together.peak_rss / 2**20:.0f} MB")
    print(f"one uv pip compile of the union (warm): {uv.seconds:8.2f} s   together/uv {ratio:.2f}x "
          f"({'ok' if ratio <= 1.5 else 'MISS'}, target <= 1.5x)")
    return 0


def _uv_pairs(root: Path, made, url: str) -> float:  # type: ignore[no-untyped-def]
    """uv's time for every (entry, target) pair, one compile each, in sequence, cold cache."""
    env = h.uv_env() | {"UV_CACHE_DIR": str(root / "uv-cache")}
    started = time.perf_counter()
    for name in sorted(made.repos):
        requirements = json.loads((made.repos[name] / "plugin.yaml").read_text())["pip_dependencies"]
        folder = root / "uv" / name
        folder.mkdir(parents=True)
        (folder / "req.in").write_text("\n".join(requirements) + "\n")
        for platform, version in TARGETS:
            h.run_measured([h.UV, "pip", "compile", str(folder / "req.in"), "--index-url", url, "--python-platform",
                            platform, "--python-version", version, "--quiet", "-o", str(folder / "out.txt")],
                           env, ok=(0, 1, 2))
    return time.perf_counter() - started


if __name__ == "__main__":
    sys.exit(main())
