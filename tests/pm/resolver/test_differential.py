"""Differential test: our resolver and ``uv pip compile`` on generated indexes and plugin sets.

Each seeded index is a random dependency DAG (ranges, exact and excluding pins, extras, live and
dead markers, yanked releases, Requires-Python cuts, references to missing packages), built as real
wheels and served by one LocalIndex for all of its cases. Each case is a random home (1-4 manifest
plugins, sometimes a core requirement and a core lock pin). Both tools get the same union (core's
lock pins as root ``==`` requirements, which is how pm treats them) on the same interpreter and
must agree on whether a solution exists. Every pin set we produce is then checked independently
with ``packaging``: every root requirement, every Requires-Dist (extras followed) of every pinned
wheel read from the wheel file itself, every pinned file's Requires-Python, and no yanked file
unless an ``==`` pin asked for it.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from email.parser import BytesParser
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from pm.cli import main
from pm.testing import IndexFile, LocalIndex, build_packages, metadata_bytes
from pm.testing.receipts import assert_valid_receipt

#: Index seed -> whether it publishes pre-releases (its cases then run with pre-releases allowed
#: on both sides: uv's default policy differs from PEP 440 on purpose, see test_packse.py).
INDEX_SEEDS = {11: False, 23: False, 37: True, 41: True}
CASES_PER_INDEX = 5
VERSIONS = ("0.9", "1.0", "1.1", "1.5", "2.0", "2.1", "3.0")
PRE_VERSIONS = ("1.1b1", "2.0rc1", "3.1a2")
ENVIRONMENT = {**default_environment(), "extra": ""}


def _specifier(rng: random.Random, versions: list[str], avoid: frozenset[str] = frozenset()) -> str:
    """A random specifier over ``versions`` (sometimes admitting none of them); never ``==`` on
    a version in ``avoid``."""
    pick = rng.choice(versions)
    shape = rng.randrange(12)
    if shape < 5:
        return ""
    if shape < 7:
        return f">={pick}"
    if shape == 7:
        return f"<{pick}"
    if shape == 8:
        return f"=={pick}" if pick not in avoid else f">={pick}"
    if shape == 9:
        return f"!={pick}"
    if shape == 10:
        higher = [v for v in VERSIONS if Version(v) > Version(pick)]
        return f">={pick},<{rng.choice(higher)}" if higher else f">={pick}"
    return f"~={pick}"


def generate_index(
    seed: int, size: int = 14, prereleases: bool = False
) -> dict[str, dict[str, object]]:
    """A spec for :func:`build_packages`: ``size`` packages ``s<seed>-<i>`` forming a DAG.

    No Requires-Dist pins a yanked release with ``==``: whether such a pin opts into the yanked
    file is where pm's policy (PEP 592: yes) and uv's (only a root pin does) differ on purpose
    (see ``DIFFERS_FROM_POLICY`` in tests/conformance/test_packse.py).
    """
    rng = random.Random(seed)
    names = [f"s{seed}-{i}" for i in range(size)]
    pool = VERSIONS + PRE_VERSIONS if prereleases else VERSIONS
    versions = {n: sorted(rng.sample(pool, rng.randint(1, 4)), key=Version) for n in names}
    yanked = {n: frozenset(v for v in vs[:-1] if rng.random() < 0.1) for n, vs in versions.items()}
    spec: dict[str, dict[str, object]] = {}
    for i, name in enumerate(names):
        spec[name] = {}
        for version in versions[name]:
            later = names[i + 1 :] + ([f"missing-{seed}"] if rng.random() < 0.04 else [])

            def dependency(dep: str) -> str:
                text = dep + _specifier(
                    rng, versions.get(dep, ["1.0"]), yanked.get(dep, frozenset())
                )
                roll = rng.random()
                if roll < 0.08:
                    return text + "; sys_platform == 'win32'"  # dead: never applies here
                return text + "; python_version >= '3.8'" if roll < 0.16 else text

            deps = rng.sample(later, min(len(later), rng.choice((0, 0, 1, 1, 2, 3))))
            info: dict[str, object] = {"requires": [dependency(d) for d in deps]}
            if later and rng.random() < 0.2:
                info["extras"] = {"plus": [dependency(rng.choice(later))]}
            if rng.random() < 0.04:
                info["requires_python"] = ">=3.99"
            if version in yanked[name]:
                info["yanked"] = "generated"
            spec[name][version] = info
    return spec


def generate_case(
    seed: int, spec: dict[str, dict[str, object]], prereleases: bool = False
) -> dict[str, object]:
    """Plugins (name -> requirements), core requirements, core lock pins and the pre-release
    policy of one case."""
    rng = random.Random(seed)
    names = sorted(spec)
    versions = {n: list(v) for n, v in spec.items()}

    def requirement() -> str:
        name = rng.choice(names)
        extra = (
            "[plus]"
            if any("extras" in i for i in spec[name].values()) and rng.random() < 0.5
            else ""
        )
        return name + extra + _specifier(rng, versions[name])

    plugins = {
        f"plug{i}": [requirement() for _ in range(rng.randint(1, 3))]
        for i in range(rng.randint(1, 3))
    }
    core, lock = [], {}
    if rng.random() < 0.4:
        name = rng.choice(names)
        core, lock = [name], {name: rng.choice(versions[name])}
    return {"plugins": plugins, "core": core, "lock": lock, "prereleases": prereleases}


@pytest.fixture(scope="module")
def indexes(tmp_path_factory) -> Iterator[dict[int, tuple[LocalIndex, dict[str, IndexFile]]]]:
    """One started index per seed, with its files by filename."""
    served = {}
    for seed, prereleases in INDEX_SEEDS.items():
        spec = generate_index(seed, prereleases=prereleases)
        files = build_packages(tmp_path_factory.mktemp(f"dists-{seed}"), spec)
        served[seed] = (LocalIndex(files).start(), {f.filename: f for f in files})
    yield served
    for index, _ in served.values():
        index.stop()


@pytest.fixture(scope="module")
def caches(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("caches")


def write_case(root: Path, case: dict) -> tuple[list[str], list[Requirement]]:
    """Write the home, core files and requirements.in of ``case``; return (argv, roots)."""
    home = root / "home"
    for name, requirements in case["plugins"].items():
        (home / "plugins" / name).mkdir(parents=True)
        (home / "plugins" / name / "plugin.yaml").write_text(
            json.dumps({"pip_dependencies": requirements})
        )
    (home / "config.yaml").write_text(json.dumps({"plugins": {"enabled": list(case["plugins"])}}))
    (root / "core.toml").write_text(
        f"[project]\nname = 'host'\ndependencies = {json.dumps(case['core'])}\n"
    )
    (root / "lock.txt").write_text("".join(f"{n}=={v}\n" for n, v in case["lock"].items()))
    texts = [
        *case["core"],
        *(r for rs in case["plugins"].values() for r in rs),
        *(f"{n}=={v}" for n, v in case["lock"].items()),
    ]
    (root / "requirements.in").write_text("\n".join(texts) + "\n")
    argv = [
        "--home",
        str(home),
        "--core",
        str(root / "core.toml"),
        "--core-lock",
        str(root / "lock.txt"),
    ]
    if case["prereleases"]:
        argv += ["--prereleases", "allow"]
    return argv, [Requirement(t) for t in texts]


def uv_compile(
    uv_bin: str, root: Path, url: str, cache: Path, prereleases: bool
) -> subprocess.CompletedProcess[str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("UV_", "PIP_")) and k != "VIRTUAL_ENV"
    }
    env.update(UV_NO_CONFIG="1", UV_PYTHON_DOWNLOADS="never", UV_CACHE_DIR=str(cache), NO_COLOR="1")
    return subprocess.run(
        [
            uv_bin,
            "pip",
            "compile",
            str(root / "requirements.in"),
            "--index-url",
            url,
            "--python",
            sys.executable,
            "--no-header",
            "--output-file",
            str(root / "uv.txt"),
            *(["--prerelease", "allow"] if prereleases else []),
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def check_pins(receipt: dict, roots: list[Requirement], files: dict[str, IndexFile]) -> list[str]:
    """Every way the resolution in ``receipt`` fails to satisfy its inputs (empty when none)."""
    packages = {p["name"]: p for p in receipt["resolution"]["packages"]}
    pins = {name: Version(p["version"]) for name, p in packages.items()}
    problems: list[str] = []
    wanted: list[tuple[Requirement, str]] = [(r, "root") for r in roots]
    extras_seen: set[tuple[str, str]] = set()
    exact_pins: set[str] = set()
    while wanted:
        requirement, who = wanted.pop()
        if requirement.marker is not None and not requirement.marker.evaluate(ENVIRONMENT):
            continue
        name = canonicalize_name(requirement.name)
        if name not in pins:
            problems.append(f"{who} requires {requirement}: {name} is not pinned")
            continue
        if not requirement.specifier.contains(pins[name], prereleases=True):
            problems.append(f"{who} requires {requirement}: pinned {name} {pins[name]}")
        if any(s.operator in ("==", "===") and "*" not in s.version for s in requirement.specifier):
            exact_pins.add(name)  # PEP 592: an exact pin, from a root or a dependency, may take a yanked file
        for extra in {"", *requirement.extras}:
            if (name, extra) not in extras_seen:
                extras_seen.add((name, extra))
                wanted += [
                    (r, f"{name} {pins[name]}") for r in requires_dist(files, packages[name], extra)
                ]
    for name, package in packages.items():
        record = files[package["file"]["filename"]]
        python = metadata(record)["Requires-Python"]
        if python and not SpecifierSet(python).contains(ENVIRONMENT["python_full_version"]):
            problems.append(f"{name} {pins[name]}: Requires-Python {python}")
        if record.yanked and name not in exact_pins:
            problems.append(f"{name} {pins[name]}: yanked and not pinned with ==")
    return problems


def metadata(record: IndexFile):
    return BytesParser().parsebytes(metadata_bytes(record.path), headersonly=True)


def requires_dist(files: dict[str, IndexFile], package: dict, extra: str) -> list[Requirement]:
    """Requires-Dist of the pinned wheel that apply with ``extra`` active (only the extra's own
    requirements when ``extra`` is not empty)."""
    environment = {**ENVIRONMENT, "extra": extra}
    applying = []
    for text in metadata(files[package["file"]["filename"]]).get_all("Requires-Dist") or []:
        requirement = Requirement(text)
        marker = requirement.marker
        if extra and (marker is None or "extra" not in str(marker)):
            continue
        if marker is None or marker.evaluate(environment):
            requirement.marker = None
            applying.append(requirement)
    return applying


CASES = [(seed, number) for seed in INDEX_SEEDS for number in range(CASES_PER_INDEX)]


def case_for(index_seed: int, number: int) -> dict[str, object]:
    prereleases = INDEX_SEEDS[index_seed]
    spec = generate_index(index_seed, prereleases=prereleases)
    return generate_case(index_seed * 100 + number, spec, prereleases)


@pytest.mark.parametrize(
    ("index_seed", "number"), CASES, ids=[f"index{s}-case{n}" for s, n in CASES]
)
def test_we_and_uv_agree(
    index_seed, number, indexes, caches, uv_bin, tmp_path, capsys, monkeypatch
):
    index, files = indexes[index_seed]
    case = case_for(index_seed, number)
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(caches / f"pm-{index_seed}"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "no-bundled"))
    argv, roots = write_case(tmp_path, case)

    code = main(["resolve", "--json", "--index-url", index.url, *argv])
    receipt = json.loads(capsys.readouterr().out)
    uv = uv_compile(uv_bin, tmp_path, index.url, caches / "uv", case["prereleases"])

    assert_valid_receipt(receipt)
    ours = receipt["resolution"] or receipt["conflict"] or receipt["failure"]
    theirs = (tmp_path / "uv.txt").read_text() if uv.returncode == 0 else uv.stderr
    story = (
        f"case {json.dumps(case)}\n--- ours (exit {code}):\n{json.dumps(ours, indent=1)}\n"
        f"--- uv:\n{theirs}"
    )
    assert code in (0, 3), story
    assert uv.returncode == 0 or "No solution found" in uv.stderr, story
    assert (code == 0) == (uv.returncode == 0), story
    if code == 0:
        assert check_pins(receipt, roots, files) == [], story
