"""The gate on a catalog shaped like a real one (issue 23's bench catalog, smaller; issue 35's
verdicts): every entry's own row says what it is on every target: each member of a colliding pair
and of the group of three collides, naming its partners; the source-only entry is refused alone
for want of a wheel on Linux only, the old-Python entry on 3.13 only; the entry needing a missing
project and the one colliding with core are refused alone with their kinds. Every group member is
annotated on its own file, paths relative to the catalog argument, and no output names the
scratch checkout. The gate runs with no home and writes none."""

from __future__ import annotations

import json
import shutil

import pytest

from pm.cli import main
from pm.testing import index_from_spec
from pm.testing.catalogs import make_catalog

TARGETS = [("linux", "3.12"), ("linux", "3.13"), ("macos", "3.12"), ("macos", "3.13")]
SCRATCH = "hermes-pm-catalog-"  # the prefix of the gate's scratch checkout


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    root = tmp_path_factory.mktemp("gate")
    made = make_catalog(root, entries=12)
    with index_from_spec(root / "dists", made.spec) as index:
        (root / "core.toml").write_text(made.core_pyproject())
        (root / "lock.txt").write_text("")
        yield made, index, root


@pytest.fixture
def bare(made, tmp_path, monkeypatch):
    """A bare runner: HOME an empty folder, no HERMES_HOME, the catalog named relative to the
    working folder; the arguments of a gate run over every target."""
    catalog, index, root = made
    empty = tmp_path / "empty-home"
    empty.mkdir()
    monkeypatch.setenv("HOME", str(empty))
    monkeypatch.delenv("HERMES_HOME", raising=False)
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "none"))
    monkeypatch.chdir(root)
    argv = ["catalog", "check", "catalog.d", "--index-url", index.url, "--core", "core.toml", "--core-lock", "lock.txt"]
    for platform in ("linux", "macos"):
        argv += ["--platform", platform]
    for version in ("3.12", "3.13"):
        argv += ["--python-version", version]
    return argv, empty


def _expected(catalog, target: str) -> dict[str, tuple[str, list[str]]]:
    """entry -> (kind, partners) on ``target``."""
    platform, version = target.split(" / Python ")
    expected = {name: ("ok", []) for name in catalog.repos}
    for a, b in catalog.pairs:
        expected[a], expected[b] = ("collides", [b]), ("collides", [a])
    for name in catalog.trio:
        expected[name] = ("collides", [n for n in catalog.trio if n != name])
    expected["native"] = ("no-wheel", []) if platform == "linux" else ("ok", [])
    expected["oldpy"] = ("requires-python", []) if version == "3.13" else ("ok", [])
    expected["ghost"], expected["corefight"] = ("missing-project", []), ("collides-with-core", [])
    return expected


def test_every_entrys_row_says_what_it_is_with_its_partners_and_kind(made, bare, capsys) -> None:
    catalog, _, _ = made
    argv, _ = bare
    assert main([*argv, "--json"]) == 3
    out = capsys.readouterr().out
    assert SCRATCH not in out
    report = json.loads(out)
    verdicts = {(v["entry"], v["target"]): v for v in report["verdicts"]}
    assert len(verdicts) == len(report["verdicts"]) == 12 * len(TARGETS)  # one row per entry and target
    for platform, version in TARGETS:
        target = f"{platform} / Python {version}"
        expected = _expected(catalog, target)
        assert {e: (verdicts[(e, target)]["kind"], verdicts[(e, target)]["partners"]) for e in expected} == expected
        for name in catalog.trio:
            assert verdicts[(name, target)]["group"] == sorted(catalog.trio)
        assert verdicts[("corefight", target)]["core"] == ["corelib<2"]
        assert verdicts[("ghost", target)]["projects"] == ["no-such-project-anywhere"]
        assert verdicts[("ghost", target)]["label"] == "refused alone: missing project"
        assert verdicts[("corefight", target)]["label"] == "refused alone: collides with core"
        assert verdicts[("corefight", target)]["verdict"] == "refused alone"
        passes = [t for t in report["together"] if t["target"] == target]
        assert sorted(tuple(g) for t in passes for g in t["groups"]) == sorted(
            [*(tuple(sorted(p)) for p in catalog.pairs), tuple(sorted(catalog.trio))]), target
        assert passes[-1]["outcome"] == "ok"  # the rest fits together
    where = verdicts[("pair0-a", "linux / Python 3.12")]["where"]
    assert where == {"file": "catalog.d/pair0-a.yaml", "source": f"file://{catalog.repos['pair0-a']}@"
                     + json.loads((catalog.folder / "pair0-a.yaml").read_text())["sha"], "path": "plugin.yaml"}
    cause = verdicts[("pair0-a", "linux / Python 3.12")]["cause"]
    assert f"plugin 'pair0-b' ({verdicts[('pair0-b', 'linux / Python 3.12')]['where']['source']}:plugin.yaml)" in cause
    assert "trio-" not in cause  # the pair's row tells the pair's collision, not the group's from the same pass


def test_github_annotates_every_group_member_on_its_own_file_naming_its_partners(made, bare, capsys) -> None:
    catalog, _, _ = made
    argv, _ = bare
    assert main([*argv, "--github"]) == 3
    out = capsys.readouterr().out
    assert SCRATCH not in out
    lines = out.splitlines()
    for platform, version in TARGETS:
        target = f"{platform} / Python {version}"
        for name, (kind, partners) in _expected(catalog, target).items():
            mine = [line for line in lines if line.startswith(f"::error file=catalog.d/{name}.yaml,title={name} on "
                                                              f"{target.replace(':', '%3A')}%3A ")]
            assert len(mine) == (kind != "ok"), (name, target, mine)
            if kind == "collides":
                assert mine[0].split("::")[2].startswith(f"collides with {', '.join(partners)}; in group "), mine


def test_the_table_and_markdown_are_whole_with_the_together_summary_and_the_count(made, bare, capsys) -> None:
    argv, _ = bare
    assert main([*argv, "--json"]) == 3
    report = json.loads(capsys.readouterr().out)
    causes = [v["cause"] for v in report["verdicts"] if v["cause"]]
    assert max(len(c) for c in causes) > 160  # long enough that cutting them would show
    assert main([*argv, "--markdown"]) == 3
    markdown = capsys.readouterr().out
    assert main(argv) == 3
    captured = capsys.readouterr()
    table = captured.out
    for shown in (markdown, table, captured.err):
        assert SCRATCH not in shown
        assert "(together)" not in shown
    for cause in causes:
        assert cause.replace("|", "\\|") in markdown  # every cell whole
        for word in cause.split():
            assert word in table.split(), word  # wrapped at spaces, never cut mid-word
    for text in (markdown, table):
        assert "9 of 12 entries refused on 4 of 4 targets" in text
        assert ("together on linux / Python 3.12: 2 resolves; colliding: {pair0-a, pair0-b}; {trio-1, trio-2, "
                "trio-3}; the other 4 entries fit together (3 pins)") in text  # fine-0..2 and oldpy


def test_the_gate_runs_with_no_home_and_writes_none(made, bare, tmp_path, capsys) -> None:
    argv, empty = bare
    assert main([*argv, "--json"]) == 3
    assert json.loads(capsys.readouterr().out)["receipt_path"] is None
    assert list(empty.iterdir()) == []  # no home made, no receipt in one
    receipts = tmp_path / "receipts"
    assert main([*argv, "--receipts", str(receipts)]) == 3
    (receipt,) = receipts.iterdir()
    data = json.loads(receipt.read_text())
    assert (data["kind"], data["exit_code"]) == ("catalog-check", 3)
    assert list(empty.iterdir()) == []


def test_exit_0_when_all_fit_and_1_only_when_the_gate_cannot_run(made, bare, tmp_path, capsys) -> None:
    catalog, _, root = made
    argv, _ = bare
    fitting = root / "fitting.d"
    fitting.mkdir(exist_ok=True)
    for name in ("fine-0", "fine-1", "pair0-a"):
        shutil.copy(catalog.folder / f"{name}.yaml", fitting / f"{name}.yaml")
    assert main([*[a if a != "catalog.d" else "fitting.d" for a in argv]]) == 0
    assert "all 3 entries fit on 4 targets" in capsys.readouterr().out
    broken = [a if a != "core.toml" else "no-such-core.toml" for a in argv]
    assert main([*broken, "--json"]) == 1  # core cannot be read: no entry can be judged
    report = json.loads(capsys.readouterr().out)
    assert report["stopped"] and all("no-such-core.toml" in why for why in report["stopped"])
