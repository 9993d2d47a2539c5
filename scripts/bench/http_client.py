"""Benchmark: pm's own HTTP client against urllib3 on the same index pages (issue 24: "decide with
a measurement whether urllib3 ... serves better than the hand-written client").

Usage: python scripts/bench/http_client.py [--runs N] [--pages N] [--threads N]

Serves ``--pages`` static project pages (40 files each across platform tags) from Python's own
http.server in a process of its own on 127.0.0.1, and fetches every page with pm's :class:`pm.index.http.HttpClient` and with
``urllib3.PoolManager`` (installed from PyPI into a venv of its own under the bench cache on first
use, never into pm's environment), one after another and then on ``--threads`` threads; each
figure is the median of ``--runs``. Both clients keep connections alive and ask for gzip. A
benchmark, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

import _harness as h

CLIENTS = r'''
import json, statistics, sys, time
from concurrent.futures import ThreadPoolExecutor
sys.path.insert(0, sys.argv[1])
import urllib3
from pm.index.http import HttpClient
urls, runs, threads = json.loads(sys.stdin.read()), int(sys.argv[2]), int(sys.argv[3])
HEADERS = {"Accept": "application/vnd.pypi.simple.v1+json", "Accept-Encoding": "gzip"}

def pm_get(client, url):
    return len(client.get(url, headers=HEADERS).body)

def urllib3_get(pool, url):
    return len(pool.request("GET", url, headers=HEADERS).data)

def timed(make, get, workers):
    times = []
    for _ in range(runs):
        client = make()
        started = time.perf_counter()
        if workers == 1:
            sizes = [get(client, u) for u in urls]
        else:
            with ThreadPoolExecutor(workers) as pool:
                sizes = list(pool.map(lambda u: get(client, u), urls))
        times.append(time.perf_counter() - started)
        assert all(sizes), "an empty page"
    return statistics.median(times)

out = {}
for workers in (1, threads):
    out[f"pm/{workers}"] = timed(HttpClient, pm_get, workers)
    out[f"urllib3/{workers}"] = timed(lambda: urllib3.PoolManager(maxsize=max(workers, 1)), urllib3_get, workers)
print(json.dumps(out))
'''


def urllib3_python(cache: Path) -> Path:
    folder = cache / "urllib3-venv"
    python = folder / "bin" / "python"
    if not python.exists():
        venv.create(folder, with_pip=False)
        h.run([h.UV, "pip", "install", "--python", str(python), "urllib3", str(h.ROOT)], h.uv_env())
    return python


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--threads", type=int, default=8)
    args = parser.parse_args()
    cache = Path(os.environ.get("HERMES_PM_BENCH_CACHE", Path.home() / ".cache" / "hermes-pm-bench"))
    python = urllib3_python(cache)
    tags = [f"cp311-cp311-{p}" for p in ("manylinux_2_17_x86_64", "musllinux_1_1_x86_64", "win_amd64",
                                          "macosx_11_0_arm64")]
    with tempfile.TemporaryDirectory(prefix="hermes-bench-http-") as work:
        root = Path(work)
        for i in range(args.pages):  # static pages: the server's own cost stays out of the figures
            page = root / "simple" / f"proj{i}" / "index.html"
            page.parent.mkdir(parents=True)
            links = "".join(f'<a href="../../files/proj{i}-1.{v}-{t}.whl#sha256={"0" * 64}">proj{i}-1.{v}-{t}.whl</a><br>'
                            for v in range(10) for t in tags)
            page.write_text(f"<!DOCTYPE html><html><body>{links}</body></html>")
        server = subprocess.Popen([sys.executable, "-m", "http.server", "0", "--bind", "127.0.0.1"], cwd=work,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            line = server.stdout.readline() if server.stdout else ""
            port = int(line.split("port ")[1].split()[0])
            urls = [f"http://127.0.0.1:{port}/simple/proj{i}/" for i in range(args.pages)]
            done = subprocess.run([str(python), "-c", CLIENTS, str(h.ROOT), str(args.runs), str(args.threads)],
                                  input=json.dumps(urls), capture_output=True, text=True, check=False)
        finally:
            server.kill()
            server.wait()
    if done.returncode != 0:
        raise SystemExit(f"the timing process failed:\n{done.stderr[-3000:]}")
    figures = json.loads(done.stdout)
    print(f"{args.pages} static pages of {10 * len(tags)} files each, http.server on 127.0.0.1; median of {args.runs}")
    print(f"{'threads':<8} {'pm client':>10} {'urllib3':>10} {'pm / urllib3':>13}")
    for workers in (1, args.threads):
        ours, theirs = figures[f"pm/{workers}"], figures[f"urllib3/{workers}"]
        print(f"{workers:<8} {ours * 1000:>8.0f} ms {theirs * 1000:>8.0f} ms {ours / theirs:>12.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
