"""The gate on a catalog shaped like a real one (issue 23's bench catalog, smaller): every
colliding pair and the group of three named with their exact partners on every target, the
source-only entry refused alone on Linux only, the old-Python entry refused alone on 3.13 only."""

from __future__ import annotations

import json

import pytest

from pm.cli import main
from pm.testing import index_from_spec, make_home
from pm.testing.catalogs import make_catalog

TARGETS = [("linux", "3.12"), ("linux", "3.13"), ("macos", "3.12"), ("macos", "3.13")]


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    root = tmp_path_factory.mktemp("gate")
    made = make_catalog(root, entries=12)
    with index_from_spec(root / "dists", made.spec) as index:
        (root / "core.toml").write_text("[project]\nname = 'host'\ndependencies = []\n")
        (root / "lock.txt").write_text("")
        make_home(root / "home")
        yield made, index, root


def test_every_pair_and_the_group_of_three_with_their_exact_partners(made, monkeypatch, capsys) -> None:
    catalog, index, root = made
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(root / "cache"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(root / "none"))
    argv = ["catalog", "check", str(catalog.folder), "--home", str(root / "home"), "--index-url", index.url,
            "--core", str(root / "core.toml"), "--core-lock", str(root / "lock.txt"), "--json"]
    for platform in ("linux", "macos"):
        argv += ["--platform", platform]
    for version in ("3.12", "3.13"):
        argv += ["--python-version", version]
    assert main(argv) == 3
    report = json.loads(capsys.readouterr().out)
    solo = {(v["entry"], v["target"]): v["verdict"] for v in report["verdicts"] if v["entry"] != "(together)"}
    for platform, version in TARGETS:
        target = f"{platform} / Python {version}"
        assert solo[("native", target)] == ("conflict" if platform == "linux" else "ok"), target
        assert solo[("oldpy", target)] == ("conflict" if version == "3.13" else "ok"), target
        fine = [e for (e, t), verdict in solo.items() if t == target and e not in ("native", "oldpy")]
        assert all(solo[(e, target)] == "ok" for e in fine), target
        passes = [v for v in report["verdicts"] if v["entry"] == "(together)" and v["target"] == target]
        groups = sorted(tuple(g) for v in passes if v["verdict"] == "conflict" for g in v["groups"])
        assert groups == sorted([*(tuple(sorted(p)) for p in catalog.pairs), tuple(sorted(catalog.trio))]), target
        assert passes[-1]["verdict"] == "ok"  # the rest fits together
