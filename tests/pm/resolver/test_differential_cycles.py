"""Differential cycles (issue 33): pm and ``uv pip compile`` on generated dependency cycles of 2-4
projects with 2-6 versions each (every version of one project requiring the next one around the
cycle, by an exact pin or a range, some with a second edge across it), requested by one or two
plugins.

Both tools get the same union on the same interpreter and must agree on the verdict; pm must
decide within a second or so (never "too complex"); where both resolve, pm's pins must satisfy
every requirement (checked here against the generated index) and be uv's pins — except where
resolvelib's search settles elsewhere: when a later pin excludes an earlier one, resolvelib moves
the earlier pin where uv's PubGrub tries the next version of the later one, so both answers are
solutions and uv's pins are checked to be one too (:data:`OTHER_SOLUTION` counts them, so a
change in either direction shows); where both refuse, pm's conflict names a project of the cycle.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from pm.cli import main
from pm.testing import LocalIndex, build_packages
from pm.testing.receipts import assert_valid_receipt

SEED = 33
GROUPS = 80  # one cycle per case, all served by one index
#: Wall seconds a verdict may take here (issue 33's target is 1 s; this machine is shared, so the
#: bound leaves room for its load: the figures are printed by scripts/bench/refusals.py).
VERDICT_SECONDS = 5.0


def _specifier(rng: random.Random, versions: list[str]) -> str:
    pick = rng.choice(versions)
    return rng.choice([f"=={pick}"] * 5 + [f">={pick}", f"<{pick}", f"<={pick}", f"!={pick}", ""])


def generate_group(rng: random.Random, group: int) -> tuple[dict[str, dict[str, list[str]]], list[str]]:
    """One cycle: its projects' versions and requirements, and the projects in cycle order."""
    names = [f"cy{group}x{i}" for i in range(rng.randint(2, 4))]
    versions = {name: [f"{v}.0.0" for v in range(1, rng.randint(2, 6) + 1)] for name in names}
    spec: dict[str, dict[str, list[str]]] = {}
    for i, name in enumerate(names):
        after = names[(i + 1) % len(names)]
        spec[name] = {}
        for version in versions[name]:
            requires = [f"{after}{_specifier(rng, versions[after])}"]
            across = rng.choice(names)
            if rng.random() < 0.3 and across not in (name, after):
                requires.append(f"{across}{_specifier(rng, versions[across])}")
            spec[name][version] = requires
    return spec, names


def generate() -> tuple[dict[str, dict[str, list[str]]], list[dict[str, list[str]]]]:
    """The index of every cycle, and each case's plugins."""
    rng = random.Random(SEED)
    index: dict[str, dict[str, list[str]]] = {}
    cases = []
    for group in range(GROUPS):
        spec, names = generate_group(rng, group)
        index |= spec
        plugins = {"p0": [names[0]]}
        if rng.random() < 0.5:
            other = rng.choice(names)
            plugins["p1"] = [f"{other}{_specifier(rng, list(spec[other]))}"]
        cases.append(plugins)
    return index, cases


INDEX, CASES = generate()
#: Cases where both resolve, each to another solution (see the module docstring).
OTHER_SOLUTION = frozenset({6, 7, 12, 18, 22, 28, 36, 63, 69})


def unmet(pins: dict[str, str], plugins: dict[str, list[str]]) -> list[str]:
    """Requirements of the plugins and of the pinned versions that ``pins`` do not satisfy."""
    wanted = [Requirement(r) for rs in plugins.values() for r in rs]
    wanted += [Requirement(r) for name, version in pins.items() for r in INDEX[name][version]]
    return [str(r) for r in wanted if r.name not in pins or not r.specifier.contains(Version(pins[r.name]))]


def _write(root: Path, plugins: dict[str, list[str]]) -> list[str]:
    home = root / "home"
    for name, requirements in plugins.items():
        (home / "plugins" / name).mkdir(parents=True)
        (home / "plugins" / name / "plugin.yaml").write_text(json.dumps({"pip_dependencies": requirements}))
    (home / "config.yaml").write_text(json.dumps({"plugins": {"enabled": list(plugins)}}))
    (root / "core.toml").write_text("[project]\nname = 'host'\ndependencies = []\n")
    (root / "lock.txt").write_text("")
    (root / "requirements.in").write_text("\n".join(r for rs in plugins.values() for r in rs) + "\n")
    return ["--home", str(home), "--core", str(root / "core.toml"), "--core-lock", str(root / "lock.txt")]


def _uv(uv_bin: str, root: Path, url: str, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "PIP_")) and k != "VIRTUAL_ENV"}
    env.update(UV_NO_CONFIG="1", UV_PYTHON_DOWNLOADS="never", UV_CACHE_DIR=str(cache), NO_COLOR="1")
    return subprocess.run([uv_bin, "pip", "compile", str(root / "requirements.in"), "--index-url", url,
                           "--python", sys.executable, "--no-header", "--no-annotate", "-o", str(root / "uv.txt")],
                          capture_output=True, text=True, env=env, check=False, timeout=120)


def _uv_pins(root: Path) -> dict[str, str]:
    lines = (root / "uv.txt").read_text().splitlines()
    return dict(line.strip().split("==", 1) for line in lines if "==" in line and not line.startswith("#"))


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory, uv_bin) -> Iterator[tuple[str, dict[int, tuple[Path, subprocess.CompletedProcess[str]]]]]:
    index = LocalIndex(build_packages(tmp_path_factory.mktemp("cycle-dists"), INDEX)).start()
    roots = {n: tmp_path_factory.mktemp(f"cycle-{n}-") for n in range(len(CASES))}
    for n, root in roots.items():
        _write(root, CASES[n])
    cache = tmp_path_factory.mktemp("uv-cache")
    with ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(lambda n: _uv(uv_bin, roots[n], index.url, cache), roots))
    yield index.url, {n: (roots[n], answers[n]) for n in roots}
    index.stop()


def test_the_generated_cycles_are_both_refused_and_resolved(verdicts) -> None:
    _, answers = verdicts
    refused = sum(1 for _, uv in answers.values() if uv.returncode != 0)
    assert len(CASES) // 5 <= refused <= len(CASES) * 4 // 5, f"{refused} of {len(CASES)} refused: the generator drifted"


@pytest.mark.parametrize("number", range(len(CASES)), ids=[f"cycle{n}" for n in range(len(CASES))])
def test_pm_and_uv_agree_on_a_cycle(number, verdicts, tmp_path, capsys, monkeypatch) -> None:
    url, answers = verdicts
    root, uv = answers[number]
    plugins = CASES[number]
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(root / "pm-cache"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "no-bundled"))
    argv = ["--home", str(root / "home"), "--core", str(root / "core.toml"), "--core-lock", str(root / "lock.txt")]
    started = time.monotonic()
    code = main(["resolve", "--json", "--index-url", url, *argv])
    took = time.monotonic() - started
    receipt = json.loads(capsys.readouterr().out)
    assert_valid_receipt(receipt)
    group = {name: INDEX[name] for name in INDEX if name.startswith(f"cy{number}x")}
    story = (f"plugins {json.dumps(plugins)}\nindex {json.dumps(group)}\n--- pm (exit {code}, {took:.2f} s):\n"
             f"{json.dumps(receipt['conflict'] or receipt['failure'], indent=1)}\n--- uv:\n{uv.stderr}")
    assert uv.returncode == 0 or "No solution found" in uv.stderr, story
    assert code in (0, 3), story
    assert (code == 0) == (uv.returncode == 0), story
    assert took < VERDICT_SECONDS, story
    if code == 0:
        pins, theirs = {p["name"]: p["version"] for p in receipt["resolution"]["packages"]}, _uv_pins(root)
        assert not unmet(pins, plugins), story
        assert not unmet(theirs, plugins), story
        assert (pins == theirs) == (number not in OTHER_SOLUTION), story + f"\n--- pins: pm {pins}, uv {theirs}"
    else:
        conflict = receipt["conflict"]
        assert {f["package"].split("[")[0] for f in conflict["findings"]} <= set(group), story
        assert conflict["plugins"], story
