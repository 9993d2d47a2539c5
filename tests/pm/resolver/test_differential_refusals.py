"""Differential refusals (issue 20): pm and ``uv pip compile`` on a few hundred generated sets in
the shapes users meet — core's exact lock pins plus one wide range (110 versions that have nothing
to do with any collision), and plugins pinning one release of a package whose dependency collides
with a core pin one, two or three levels down, through an extra or through a live marker, with
noise (dead markers, Requires-Python cuts, ranges) around it.

Both tools get the same union on the same interpreter and must agree on the verdict; pm must
decide within its round limit (never "too complex"), and every project pm names as the place of
a collision must be one uv's explanation names too — or, where the set holds two independent
collisions and each tool told another one, core with only the plugins pm named must be refused
by uv as well (so pm's collision is a refusal on its own, not a guess).
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pm.cli import main
from pm.testing import LocalIndex, build_packages
from pm.testing.receipts import assert_valid_receipt

SEEDS = (3, 5, 8)
CASES_PER_SEED = 100
BASES = 4  # projects core pins exactly (b0..b3), five versions each
MIDS = 6  # m0..m5: depend on a base
TOPS = 6  # t0..t5: what plugins pin; depend on mids (or bases) one to three levels down
BASE_VERSIONS = ("1.0", "2.0", "3.0", "4.0", "5.0")


def _range(rng: random.Random, versions: tuple[str, ...], loose: bool = False) -> str:
    pick = rng.choice(versions)
    shapes = (f">={pick}", f"<{pick}", f"=={pick}", f"<={pick}", f"!={pick}", f">={versions[0]}", "")
    return rng.choice(shapes if loose else shapes[:4])


def generate_index(seed: int) -> dict[str, dict[str, object]]:
    rng = random.Random(seed)
    spec: dict[str, dict[str, object]] = {
        "wide": {f"0.{100 + i}.0": ["wide-dep>=1"] for i in range(110)},
        "wide-dep": {"1.0": [], "2.0": []},
    }
    for b in range(BASES):
        spec[f"b{b}"] = {v: [] for v in BASE_VERSIONS}
    for m in range(MIDS):
        spec[f"m{m}"] = {v: {"requires": [f"b{rng.randrange(BASES)}{_range(rng, BASE_VERSIONS)}"]}
                         for v in ("1.0", "2.0", "3.0")}
    for t in range(TOPS):
        versions: dict[str, object] = {}
        for v in ("1.0", "1.5", "2.0"):
            below = rng.choice(["m", "m", "b"])
            dep = (f"m{rng.randrange(MIDS)}{_range(rng, ('1.0', '2.0', '3.0'))}" if below == "m"
                   else f"b{rng.randrange(BASES)}{_range(rng, BASE_VERSIONS)}")
            shape = rng.random()
            info: dict[str, object] = {"requires": [dep]}
            if shape < 0.15:  # the collision comes through an extra
                info = {"requires": [], "extras": {"full": [dep]}}
            elif shape < 0.3:  # through a marker that holds here
                info = {"requires": [f"{dep}; python_version >= '3.8'"]}
            elif shape < 0.38:  # noise: a dependency that never applies here
                info = {"requires": [f"{dep}; sys_platform == 'win32'"]}
            if rng.random() < 0.1:
                info["requires_python"] = ">=3.99"
            if t > 0 and rng.random() < 0.3:  # two and three levels: a top needing another top
                info["requires"] = [*info.get("requires", []), f"t{rng.randrange(t)}"]  # type: ignore[list-item]
            versions[v] = info
        spec[f"t{t}"] = versions
    return spec


def generate_case(seed: int) -> dict[str, object]:
    rng = random.Random(seed)
    lock = {f"b{b}": rng.choice(BASE_VERSIONS) for b in rng.sample(range(BASES), rng.randint(2, BASES))}
    plugins = {"p0": [f"t{rng.randrange(TOPS)}{rng.choice(['', '[full]'])}=={rng.choice(('1.0', '1.5', '2.0'))}"]}
    if rng.random() < 0.5:
        plugins["p1"] = [f"t{rng.randrange(TOPS)}{_range(rng, ('1.0', '1.5', '2.0'), loose=True)}"]
    return {"core": ["wide>=0.100"], "lock": lock, "plugins": plugins}


CASES = [(seed, n) for seed in SEEDS for n in range(CASES_PER_SEED)]


def _write(root: Path, case: dict) -> list[str]:
    home = root / "home"
    for name, requirements in case["plugins"].items():
        (home / "plugins" / name).mkdir(parents=True)
        (home / "plugins" / name / "plugin.yaml").write_text(json.dumps({"pip_dependencies": requirements}))
    (home / "config.yaml").write_text(json.dumps({"plugins": {"enabled": list(case["plugins"])}}))
    (root / "core.toml").write_text(f"[project]\nname = 'host'\ndependencies = {json.dumps(case['core'])}\n")
    (root / "lock.txt").write_text("".join(f"{n}=={v}\n" for n, v in case["lock"].items()))
    texts = [*case["core"], *(r for rs in case["plugins"].values() for r in rs),
             *(f"{n}=={v}" for n, v in case["lock"].items())]
    (root / "requirements.in").write_text("\n".join(texts) + "\n")
    return ["--home", str(home), "--core", str(root / "core.toml"), "--core-lock", str(root / "lock.txt")]


def _uv(uv_bin: str, root: Path, url: str, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "PIP_")) and k != "VIRTUAL_ENV"}
    env.update(UV_NO_CONFIG="1", UV_PYTHON_DOWNLOADS="never", UV_CACHE_DIR=str(cache), NO_COLOR="1")
    return subprocess.run([uv_bin, "pip", "compile", str(root / "requirements.in"), "--index-url", url,
                           "--python", sys.executable, "--no-header", "-o", str(root / "uv.txt")],
                          capture_output=True, text=True, env=env, check=False, timeout=120)


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory, uv_bin) -> Iterator[dict[tuple[int, int], tuple[Path, str, subprocess.CompletedProcess[str]]]]:
    """Every case written, and uv's answer to it (run two at a time), per started index."""
    indexes = {seed: LocalIndex(build_packages(tmp_path_factory.mktemp(f"refusal-dists-{seed}"),
                                               generate_index(seed))).start() for seed in SEEDS}
    roots = {(seed, n): tmp_path_factory.mktemp(f"refusal-{seed}-{n}") for seed, n in CASES}
    cache = tmp_path_factory.mktemp("uv-cache")
    for (seed, n), root in roots.items():
        _write(root, generate_case(seed * 1000 + n))
    with ThreadPoolExecutor(2) as pool:
        answers = dict(zip(roots, pool.map(lambda key: _uv(uv_bin, roots[key], indexes[key[0]].url, cache), roots),
                           strict=True))
    yield {key: (roots[key], indexes[key[0]].url, answers[key]) for key in roots}
    for index in indexes.values():
        index.stop()


def _named_by_uv(stderr: str) -> set[str]:
    return set(re.findall(r"\b(t\d|m\d|b\d|wide-dep|wide)\b", stderr))


def _named_by_pm(conflict: dict) -> set[str]:
    """The projects where pm says the collision is: each finding's package, and the ends of its chains."""
    named = set()
    for finding in conflict["findings"]:
        named.add(finding["package"].split("[")[0])
        stack = [finding.get("dead_end")]
        while stack:
            end = stack.pop()
            if not end:
                continue
            needs = end.get("needs") or []
            if not needs:
                named.add(str(end.get("package", "")).split("[")[0])
            stack += [n.get("dead") for n in needs]
    return {n for n in named if n}


def test_the_generated_sets_are_mostly_refusals(verdicts) -> None:
    refused = sum(1 for _, _, uv in verdicts.values() if uv.returncode != 0)
    assert refused >= len(CASES) // 2, f"only {refused} of {len(CASES)} refused: the generator drifted"


@pytest.mark.parametrize(("seed", "number"), CASES, ids=[f"seed{s}-case{n}" for s, n in CASES])
def test_pm_and_uv_reach_the_same_verdict_naming_the_same_place(seed, number, verdicts, tmp_path, capsys,
                                                                 monkeypatch, uv_bin) -> None:
    root, url, uv = verdicts[(seed, number)]
    case = generate_case(seed * 1000 + number)
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(root.parent / f"pm-cache-{seed}"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "no-bundled"))
    argv = ["--home", str(root / "home"), "--core", str(root / "core.toml"), "--core-lock", str(root / "lock.txt")]
    code = main(["resolve", "--json", "--index-url", url, *argv])
    receipt = json.loads(capsys.readouterr().out)
    assert_valid_receipt(receipt)
    story = (f"case {json.dumps(case)}\n--- pm (exit {code}):\n"
             f"{json.dumps(receipt['conflict'] or receipt['failure'], indent=1)}\n--- uv:\n{uv.stderr}")
    assert uv.returncode == 0 or "No solution found" in uv.stderr, story
    assert code != 1 or receipt["failure"]["kind"] != "too-complex", story
    assert (code == 0) == (uv.returncode == 0), story
    if code == 3 and not _named_by_pm(receipt["conflict"]) <= _named_by_uv(uv.stderr) | {"python"}:
        # two independent collisions, and each tool told another one: pm's must then be a refusal
        # on its own — core with only the plugins pm named is refused by uv too
        alone = {**case, "plugins": {p: case["plugins"][p] for p in receipt["conflict"]["plugins"]}}
        _write(tmp_path / "alone", alone)
        again = _uv(uv_bin, tmp_path / "alone", url, tmp_path / "uv-cache")
        assert "No solution found" in again.stderr, story + f"\n--- uv on core + {list(alone['plugins'])}:\n{again.stdout}"
