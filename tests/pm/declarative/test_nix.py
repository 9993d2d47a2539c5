"""The real Nix consumer: ``nix-instantiate --eval --strict`` runs the shipped ``wheels.nix`` over
an export or a receipt, fetching every wheel from the loopback index with ``builtins.fetchurl``
and checking its recorded hash. Each test uses a private Nix store (``--store local?root=…``),
so it runs as any user and every fetch really happens; skipped only where Nix is not installed
or cannot evaluate at all."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

from pm.records.export import NIX_FUNCTION, sri
from pm.testing import IndexFile, LocalIndex

from .conftest import PINS
from .helpers import pm

SKIP_NO_NIX = ("nix-instantiate not found: install Debian's nix-bin (.ci/run does) to run the Nix "
               "consumer tests")


class Nix:
    """``nix-instantiate`` against a store of its own under ``base``."""

    def __init__(self, program: str, base: Path) -> None:
        self.program = program
        self.root = base / "nix-root"
        (base / "nix-conf").mkdir()  # no host configuration: hermetic, whatever the machine's nix.conf
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(base / "nix-home"),
                    "XDG_CACHE_HOME": str(base / "nix-cache"), "XDG_CONFIG_HOME": str(base / "nix-config"),
                    "NIX_CONF_DIR": str(base / "nix-conf"), "NIX_REMOTE": ""}

    def evaluate(self, expression: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([self.program, "--store", f"local?root={self.root}", "--eval", "--strict",
                               "--json", "--expr", expression],
                              env=self.env, capture_output=True, text=True, timeout=120, check=False)

    def wheels(self, source: Path) -> list[dict[str, Any]]:
        done = self.evaluate(f"import {NIX_FUNCTION} {{ source = {source}; }}")
        assert done.returncode == 0, done.stderr
        return list(json.loads(done.stdout))

    def bytes_of(self, store_path: str) -> bytes:
        return (self.root / store_path.lstrip("/")).read_bytes()


@pytest.fixture
def nix(tmp_path: Path) -> Nix:
    program = shutil.which("nix-instantiate")
    if program is None:
        pytest.skip(SKIP_NO_NIX)
    found = Nix(program, tmp_path)
    probe = found.evaluate("1 + 1")
    if probe.returncode != 0 or probe.stdout.strip() != "2":
        pytest.skip(f"nix-instantiate cannot evaluate here: {probe.stderr.strip()[-300:]}")
    return found


def _served(dists: list[IndexFile]) -> dict[str, bytes]:
    return {d.filename: d.path.read_bytes() for d in dists}


def test_every_wheel_of_an_export_is_fetched_from_the_index_and_hash_checked(
        home: Path, index: LocalIndex, dists: list[IndexFile], nix: Nix, capsys) -> None:
    exported = home.parent / "hermes-wheels.nix"
    assert pm(capsys, home, "export", "--format", "nix", "-o", str(exported)).code == 0
    index.reset_log()

    wheels = nix.wheels(exported)

    files = _served(dists)
    assert [(w["name"], w["version"]) for w in wheels] == list(PINS.items())
    for wheel in wheels:
        assert wheel["url"] == f"{index.root}/files/{wheel['filename']}"
        assert wheel["hash"] == sri(hashlib.sha256(files[wheel["filename"]]).hexdigest())
        assert wheel["wheel"].endswith("-" + wheel["filename"])
        assert nix.bytes_of(wheel["wheel"]) == files[wheel["filename"]]
    fetched = sorted(path for method, path in index.requests if method == "GET")
    assert fetched == sorted(f"/files/{w['filename']}" for w in wheels), "each wheel fetched once, nothing else"
    origins = {w["name"]: [o.get("plugin", "core") for o in w["origins"]] for w in wheels}
    assert origins == {"alpha": ["core", "notes"], "beta": ["notes"], "delta": ["search"], "gamma": ["search"]}


def test_a_receipt_with_one_altered_hash_fails_the_evaluation(home: Path, index: LocalIndex, nix: Nix,
                                                              capsys) -> None:
    result = pm(capsys, home, "sync", "--json")
    assert result.code == 0, result.err
    receipt = json.loads(Path(result.data["receipt_path"]).read_text())
    good = home.parent / "receipt.json"
    good.write_text(json.dumps(receipt))
    assert [(w["name"], w["version"]) for w in nix.wheels(good)] == list(PINS.items())

    delta = next(p for p in receipt["resolution"]["packages"] if p["name"] == "delta")
    delta["file"]["sha256"] = delta["file"]["sha256"][::-1]
    altered = home.parent / "altered.json"
    altered.write_text(json.dumps(receipt))
    done = nix.evaluate(f"import {NIX_FUNCTION} {{ source = {altered}; }}")

    assert done.returncode != 0
    assert f"hash mismatch in file downloaded from '{delta['file']['url']}'" in done.stderr, done.stderr


def test_a_selected_export_a_pylock_and_the_generation_record_name_the_same_store_paths(
        home: Path, nix: Nix, capsys) -> None:
    assert pm(capsys, home, "sync").code == 0
    exported, lock = home.parent / "selected.nix", home.parent / "pylock.toml"
    assert pm(capsys, home, "export", "--format", "nix", "--selected", "-o", str(exported)).code == 0
    assert pm(capsys, home, "export", "--format", "pylock", "--selected", "-o", str(lock)).code == 0
    (record,) = home.glob("pm/generations/*/generation.json")
    paths = [f"(map (w: w.wheel) (import {NIX_FUNCTION} {{ source = {source}; }}))"
             for source in (exported, lock, record)]
    done = nix.evaluate(f"[ {paths[0]} ({paths[0]} == {paths[1]}) ({paths[0]} == {paths[2]}) ]")
    assert done.returncode == 0, done.stderr
    wheels, *same = json.loads(done.stdout)
    assert same == [True, True] and len(wheels) == len(PINS)


def test_the_default_pylock_export_of_dated_files_evaluates_like_the_selected_one(
        home: Path, index: LocalIndex, dists: list[IndexFile], nix: Nix, capsys) -> None:
    """Issue 14 finding 5: the index gives every file an upload-time (as PyPI does); the pylock that
    ``export`` writes by resolving (no ``--selected``) then carried it as a TOML datetime, which
    Nix 2.8's fromTOML rejects ("Dates and times are not supported"). Both exports of one
    resolution must evaluate, and fetch the same store paths."""
    index.add_files([dataclasses.replace(d, upload_time="2025-01-02T03:04:05Z") for d in dists])
    resolved, selected = home.parent / "resolved.toml", home.parent / "selected.toml"
    assert pm(capsys, home, "export", "--format", "pylock", "-o", str(resolved)).code == 0
    assert pm(capsys, home, "sync").code == 0
    assert pm(capsys, home, "export", "--format", "pylock", "--selected", "-o", str(selected)).code == 0

    paths = [f"(map (w: w.wheel) (import {NIX_FUNCTION} {{ source = {source}; }}))" for source in (resolved, selected)]
    done = nix.evaluate(f"[ {paths[0]} ({paths[0]} == {paths[1]}) ]")

    assert done.returncode == 0, done.stderr
    wheels, same = json.loads(done.stdout)
    assert same is True
    lock = tomllib.loads(resolved.read_text())
    assert [Path(w).name.split("-", 1)[1] for w in wheels] == [p["wheels"][0]["name"] for p in lock["packages"]]
    assert [(p["name"], p["version"]) for p in lock["packages"]] == list(PINS.items())


def test_a_receipt_without_resolution_is_refused_with_a_message(home: Path, nix: Nix, capsys) -> None:
    assert pm(capsys, home, "sync").code == 0
    pm(capsys, home, "resolve", "--with", "no-such-plugin")
    receipt = home / "pm" / "receipts" / "latest.json"
    done = nix.evaluate(f"import {NIX_FUNCTION} {{ source = {receipt}; }}")
    assert done.returncode != 0
    assert ("hermes-pm: this receipt (kind resolve, outcome failed) records no resolution; use the receipt of a "
            "resolve, or `hermes pm export --format nix --selected`") in done.stderr, done.stderr
