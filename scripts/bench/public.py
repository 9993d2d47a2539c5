"""Benchmark (opt-in, needs the internet): `hermes pm resolve` against `uv pip compile` on PyPI.

Usage: python scripts/bench/public.py [--runs N] [--python PATH] [--keep]
           [--index-url URL] [--lock-date DATE]

A heavy real plugin set, chosen to look like memory providers (a vector store with an embedding
stack on torch, a hosted-memory client, Postgres with pgvector, Qdrant, Redis) plus an LLM
helper, over an exact-pinned host core of the usual agent libraries (openai, anthropic, httpx,
pydantic, rich, jinja2, ...). Core's lock is what `uv pip compile` pins for core's requirements
with `--exclude-newer LOCK_DATE` (an untimed setup step), so core is held below the newest
releases like a shipped host; the timed resolves see the index as it is today.

pm and uv run pairwise, alternating which goes first, each cold (a fresh cache per run) and warm
(one warmed cache), both targeting the bench interpreter's real executable, wheels only (uv with
`--only-binary :all:`), with pm's bytecode cached. What the index sends decides what "warm" costs:
pypi.org sends `max-age=600`, ETags and PEP 658 metadata (a warm uv then needs no request); the
copy reachable from this project's machines sends none of these, so both tools re-read every page
warm and read metadata out of the wheels by range requests. Bytes on the wire cannot be counted
here (the index is not ours); the table gives each tool's cache size after a cold run instead.
Then issue 11's targets for a heavy real set: warm <= 1.5x, cold <= 3x, pm peak RSS <= 300 MB,
and the second identical pm resolve <= 80 ms; and issue 22's: cold <= 1.2x, warm <= 0.6x. Network load goes to PyPI only (about 50-100 MB of
pages per cold run and tool). Figures are noisy: the network and a shared machine.
This is a benchmark script, not a test: it prints figures and never fails on them.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import _harness as h
import resolve
import workloads

PYPI = "https://pypi.org/simple/"
LOCK_DATE = "2025-09-01T00:00:00Z"

#: The host core: requirements of a typical agent; locked by `uv pip compile --exclude-newer`.
CORE_REQUIRES = [
    "openai>=1.40", "anthropic>=0.34", "httpx>=0.27", "pydantic>=2.7", "pyyaml>=6",
    "rich>=13.7", "tenacity>=8.2", "jinja2>=3.1", "requests>=2.31", "python-dotenv>=1.0",
    "prompt-toolkit>=3.0", "tiktoken>=0.7", "aiohttp>=3.9",
]

#: Memory-provider-style plugins and an LLM helper, with the dependencies real ones declare.
#: (litellm is left out on purpose: against core's older lock both tools walk back through ~200
#: of its releases, which measures backtracking on one project, not big pages.)
PLUGINS: dict[str, list[str]] = {
    "memory-lancedb": ["lancedb>=0.13", "sentence-transformers>=3.0", "numpy>=1.26"],
    "memory-mem0": ["mem0ai>=0.1.50"],
    "memory-qdrant": ["qdrant-client>=1.10", "fastembed>=0.4"],
    "memory-postgres": ["psycopg[binary]>=3.1", "pgvector>=0.3", "sqlalchemy>=2.0"],
    "memory-redis": ["redis>=5.0", "hiredis>=2.3"],
    "assistant-llm": ["instructor>=1.4", "tokenizers>=0.19"],
}


def lock_core(args, folder: Path) -> dict[str, str]:
    """Core's lock: uv's pins for core's requirements as of ``args.lock_date`` (untimed)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "core.in").write_text("\n".join(CORE_REQUIRES) + "\n")
    out = folder / "core-lock.txt"
    h.run([h.UV, "pip", "compile", str(folder / "core.in"), "--index-url", args.index_url,
           "--python", args.target, "--exclude-newer", args.lock_date, "--quiet",
           "--only-binary", ":all:", "--cache-dir", str(folder / "uv-cache"),
           "--output-file", str(out)], h.uv_env())
    return dict(re.findall(r"^([A-Za-z0-9._-]+)==(\S+)", out.read_text(), re.MULTILINE))


def cache_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def options(parser) -> None:
    parser.add_argument("--index-url", default=PYPI, help=f"the public index (default {PYPI})")
    parser.add_argument("--lock-date", default=LOCK_DATE,
                        help=f"core's lock: uv's pins as of this date (default {LOCK_DATE})")


def main() -> None:
    args = h.arguments(__doc__, options, runs=3, local=False)
    holder = h.work_dir(args.keep)
    folder = Path(holder if isinstance(holder, Path) else holder.name)
    print(f"python {args.python} (both tools target {args.target}); uv {h.UV}; "
          f"median of {args.runs} runs; {args.index_url}; work folder {folder}", file=sys.stderr)
    lock = lock_core(args, folder / "core-lock")
    workload = workloads.Workload(f"public, {len(PLUGINS)} plugins", {}, CORE_REQUIRES, lock,
                                  PLUGINS)
    layout = workloads.write(workload, folder / "public")
    tools = resolve.Tools(args, folder / "public", layout, args.index_url)
    pins = resolve.ours_pins(tools)
    agreement = resolve.compare(pins, resolve.uv_pins(tools))
    print(f"  core lock: {len(lock)} pins; union resolves to {len(pins)} pins", file=sys.stderr)
    pm, uv = resolve.pairwise(args.runs, None, tools)
    result = resolve.Result(workload.name, "pypi.org", len(pins), agreement, pm, uv)
    print("whole-command wall time, median of", args.runs, "pairwise runs (network and a shared "
          "machine: noisy)")
    resolve.times_table([result])
    print()
    print("CPU seconds (user + system of each command's process), median of", args.runs)
    resolve.cpu_table([result])
    print()
    sizes = [cache_size(tools.folder / f"{tool}-cold-0") for tool in ("pm", "uv")]
    print(f"cache after one cold run: pm {h.size(sizes[0])}, uv {h.size(sizes[1])}; "
          f"peak RSS: pm {h.size(pm.peak())}, uv {h.size(uv.peak())}")
    print()
    print("issue 11 targets (heavy real set)")
    print("\n".join([
        resolve.check("warm resolve", pm.median("warm") / uv.median("warm"), 1.5),
        resolve.check("cold resolve", pm.median("cold") / uv.median("cold"), 3),
        resolve.check("pm peak memory", pm.peak() / 1e6, 300, "MB"),
        resolve.check("second identical pm resolve (result-cache hit)",
                      pm.second.seconds * 1000, 80, "ms"),
    ]))
    print("issue 22 targets (heavy real set)")
    print("\n".join([
        resolve.check("cold resolve", pm.median("cold") / uv.median("cold"), 1.2),
        resolve.check("warm resolve", pm.median("warm") / uv.median("warm"), 0.6),
    ]))
    print("issue 33 targets (heavy real set)")
    print(resolve.check("cold resolve's CPU vs uv's", pm.cpu("cold") / uv.cpu("cold"), 2))


if __name__ == "__main__":
    main()
