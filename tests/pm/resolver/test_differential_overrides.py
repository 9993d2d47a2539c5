"""Differential test of the operator's constraints and overrides: pm's pins equal ``uv pip compile
--constraint FILE --override FILE`` on the same generated indexes, the same union and the same two
files (pm reads them with its own ``--constraint``/``--override``).

Each seeded index is a small dependency DAG of real wheels (ranges, exclusions, live and dead
markers, an extra); each case is a home of 1-3 plugins, sometimes with a core lock pin, and a few
constraints and overrides drawn on the index's projects (on direct and transitive projects, on
projects no one requires, some under a marker that holds and some under one that never does).
Both tools must agree on whether a solution exists, and where one does, on every pin.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from packaging.version import Version

from pm.cli import main
from pm.testing import LocalIndex, build_packages
from pm.testing.receipts import assert_valid_receipt

from .test_differential import write_case

INDEX_SEEDS = (5, 17, 29)
CASES_PER_INDEX = 8
VERSIONS = ("1.0", "1.1", "2.0", "2.5", "3.0")
MARKERS = ("", "", "", "; python_version >= '3.8'", "; sys_platform == 'win32'")


def _specifier(rng: random.Random, versions: list[str]) -> str:
    pick = rng.choice(versions)
    return rng.choice(("", "", "", f">={pick}", f">={pick}", f"<{pick}", f"=={pick}", f"!={pick}", f"<={pick}"))


def generate_index(seed: int, size: int = 8) -> dict[str, dict[str, object]]:
    """``size`` packages ``o<seed>-<i>``, each depending on later ones only."""
    rng = random.Random(seed)
    names = [f"o{seed}-{i}" for i in range(size)]
    versions = {n: sorted(rng.sample(VERSIONS, rng.randint(2, 4)), key=Version) for n in names}
    spec: dict[str, dict[str, object]] = {}
    for i, name in enumerate(names):
        spec[name] = {}
        for version in versions[name]:
            later = names[i + 1:]
            deps = rng.sample(later, min(len(later), rng.choice((0, 1, 1, 2))))
            info: dict[str, object] = {"requires": [d + _specifier(rng, versions[d]) + rng.choice(MARKERS)
                                                    for d in deps]}
            if later and rng.random() < 0.25:
                dep = rng.choice(later)
                info["extras"] = {"plus": [dep + _specifier(rng, versions[dep])]}
            spec[name][version] = info
    return spec


def generate_case(seed: int, spec: dict[str, dict[str, object]]) -> dict[str, object]:
    rng = random.Random(seed)
    names = sorted(spec)
    versions = {n: list(v) for n, v in spec.items()}

    def requirement(name: str | None = None) -> str:  # looser than the index's own: more sets resolve
        name = name or rng.choice(names)
        pick = rng.choice(versions[name])
        return name + rng.choice(("", "", f">={pick}", f"<={pick}", f"!={pick}"))

    plugins = {f"plug{i}": [requirement() for _ in range(rng.randint(1, 3))] for i in range(rng.randint(1, 3))}
    core, lock = [], {}
    if rng.random() < 0.3:
        name = rng.choice(names)
        core, lock = [name], {name: rng.choice(versions[name])}
    constraints = [requirement() + rng.choice(MARKERS) for _ in range(rng.randint(0, 2))]
    overridden = rng.sample(names, rng.randint(1, 2))
    overrides = [requirement(name) + rng.choice(MARKERS) for name in overridden]
    if rng.random() < 0.3:  # a second override on one project: both take its place
        overrides.append(requirement(overridden[0]))
    return {"plugins": plugins, "core": core, "lock": lock, "prereleases": False,
            "constraints": constraints, "overrides": overrides}


@pytest.fixture(scope="module")
def indexes(tmp_path_factory) -> Iterator[dict[int, LocalIndex]]:
    served = {seed: LocalIndex(build_packages(tmp_path_factory.mktemp(f"dists-{seed}"), generate_index(seed))).start()
              for seed in INDEX_SEEDS}
    yield served
    for index in served.values():
        index.stop()


CASES = [(seed, number) for seed in INDEX_SEEDS for number in range(CASES_PER_INDEX)]


@pytest.mark.parametrize(("index_seed", "number"), CASES, ids=[f"index{s}-case{n}" for s, n in CASES])
def test_pins_equal_uvs_with_the_same_constraints_and_overrides(index_seed, number, indexes, uv_bin, tmp_path,
                                                               capsys, monkeypatch):
    index = indexes[index_seed]
    case = generate_case(index_seed * 100 + number, generate_index(index_seed))
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "pm-cache"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "no-bundled"))
    argv, _ = write_case(tmp_path, case)
    files = {kind: tmp_path / f"{kind}.txt" for kind in ("constraints", "overrides")}
    for kind, path in files.items():
        path.write_text("".join(f"{line}\n" for line in case[kind]))  # type: ignore[attr-defined]

    code = main(["resolve", "--json", "--index-url", index.url, *argv,
                 "--constraint", str(files["constraints"]), "--override", str(files["overrides"])])
    receipt = json.loads(capsys.readouterr().out)
    uv = _uv_compile_with(uv_bin, tmp_path, index.url, files)

    assert_valid_receipt(receipt)
    ours = receipt["resolution"] or receipt["conflict"] or receipt["failure"]
    theirs = (tmp_path / "uv.txt").read_text() if uv.returncode == 0 else uv.stderr
    story = f"case {json.dumps(case)}\n--- ours (exit {code}):\n{json.dumps(ours, indent=1)}\n--- uv:\n{theirs}"
    assert code in (0, 3), story
    assert uv.returncode == 0 or "No solution found" in uv.stderr, story
    assert (code == 0) == (uv.returncode == 0), story
    if code == 0:
        ours_pins = {p["name"]: p["version"] for p in receipt["resolution"]["packages"]}
        if ours_pins != _pins(theirs):  # another solution: each tool must accept the other's, pin for pin
            _cross_check(ours_pins, _pins(theirs), index.url, argv, files, uv_bin, tmp_path, capsys, story)


def _cross_check(ours: dict[str, str], theirs: dict[str, str], url: str, argv: list[str], files: dict[str, Path],
                 uv_bin: str, root: Path, capsys, story: str) -> None:
    """Where the two tools chose differently among solutions (their orders of choosing differ),
    each one's pins, given to the other as constraints beside the same files, come back whole:
    uv finds pm's pins a solution of these constraints and overrides, and pm finds uv's."""
    for name, pins in (("ours", ours), ("theirs", theirs)):
        (root / f"{name}.txt").write_text("".join(f"{n}=={v}\n" for n, v in pins.items()))
    uv = _uv_compile_with(uv_bin, root, url, files, root / "ours.txt")
    assert uv.returncode == 0 and _pins((root / "uv.txt").read_text()) == ours, f"{story}\n--- uv on ours:\n{uv.stderr}"
    code = main(["resolve", "--json", "--index-url", url, *argv, "--constraint", str(files["constraints"]),
                 "--constraint", str(root / "theirs.txt"), "--override", str(files["overrides"])])
    receipt = json.loads(capsys.readouterr().out)
    assert code == 0, f"{story}\n--- ours on uv's:\n{receipt['conflict'] or receipt['failure']}"
    assert {p["name"]: p["version"] for p in receipt["resolution"]["packages"]} == theirs, story


def _uv_compile_with(uv_bin: str, root: Path, url: str, files: dict[str, Path],
                     pinned: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The plain differential's ``uv pip compile`` with ``--constraint`` and ``--override`` (and
    ``pinned``, another constraints file)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "PIP_")) and k != "VIRTUAL_ENV"}
    env.update(UV_NO_CONFIG="1", UV_PYTHON_DOWNLOADS="never", UV_CACHE_DIR=str(root / "uv-cache"), NO_COLOR="1")
    return subprocess.run([uv_bin, "pip", "compile", str(root / "requirements.in"), "--index-url", url,
                           "--python", sys.executable, "--no-header", "--no-annotate",
                           "--output-file", str(root / "uv.txt"),
                           "--constraint", str(files["constraints"]), "--override", str(files["overrides"]),
                           *(["--constraint", str(pinned)] if pinned else [])],
                          capture_output=True, text=True, env=env, check=False)


def _pins(text: str) -> dict[str, str]:
    found = {}
    for line in text.splitlines():
        if "==" in line and not line.startswith("#"):
            name, _, version = line.split(";")[0].strip().partition("==")
            found[name] = version
    return found

