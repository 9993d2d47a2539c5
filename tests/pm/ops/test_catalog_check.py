"""`hermes pm catalog check` (issue 23, the acceptance gate): every entry fetched at its pin from
a real git repository, judged with core alone and all together on every target, the entries of a
collision named from the resolver's causes; table, --json, --markdown and --github outputs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from pm.cli import main
from pm.testing import index_from_spec, make_home
from pm.testing.catalogs import plugin_repo
from pm.testing.receipts import assert_valid_receipt

SPEC = {"sharedlib": {"1.0": [], "2.0": []}, "tinyhttp": {"1.0": []},
        "winlib": {"1.0": {"tags": ["py3-none-win_amd64"]}}}


def _repo(folder: Path, name: str, requirements: list[str]) -> tuple[str, str]:
    """A real git repository holding one plugin (pm.testing.catalogs); (its path, the commit)."""
    repo, commit = plugin_repo(folder, name, requirements)
    return str(repo), commit


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    with index_from_spec(tmp_path_factory.mktemp("catalog-dists"), SPEC) as served:
        yield served


@pytest.fixture
def catalog(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "none"))
    entries = []
    for name, requirements in {"old": ["sharedlib<2"], "new": ["sharedlib>=2"], "web": ["tinyhttp"],
                               "win": ["winlib"], "gone": ["tinyhttp"]}.items():
        repo, commit = _repo(tmp_path / "repos", name, requirements)
        entries.append({"name": name, "source": {"git": repo, "commit": commit}})
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps({"entries": entries, "removed": ["gone"]}))
    (tmp_path / "core.toml").write_text("[project]\nname = 'host'\ndependencies = ['tinyhttp']\n")
    (tmp_path / "lock.txt").write_text("")
    make_home(tmp_path / "home")
    return path


def _check(catalog: Path, index, *extra: str) -> list[str]:
    base = catalog.parent
    return ["catalog", "check", str(catalog), "--home", str(base / "home"), "--index-url", index.url,
            "--core", str(base / "core.toml"), "--core-lock", str(base / "lock.txt"), *extra]


def test_entries_alone_and_together_on_two_systems(catalog, index, tmp_path, capsys) -> None:
    receipts = tmp_path / "receipts"
    code = main(_check(catalog, index, "--platform", "linux", "--platform", "windows", "--json",
                       "--receipts", str(receipts)))
    report = json.loads(capsys.readouterr().out)
    assert code == 3
    assert report["fetched"]["gone"] == "removed: on the catalog's kill list, not checked"
    assert report["fetched"]["old"] == "plugin.yaml"
    verdicts = {(v["entry"], v["target"].split(" /")[0]): v for v in report["verdicts"]}
    assert {k: (v["verdict"], v["kind"]) for k, v in verdicts.items()} == {
        ("old", "linux"): ("collides", "collides"), ("new", "linux"): ("collides", "collides"),
        ("web", "linux"): ("ok", "ok"), ("win", "linux"): ("refused alone", "no-wheel"),
        ("old", "windows"): ("collides", "collides"), ("new", "windows"): ("collides", "collides"),
        ("web", "windows"): ("ok", "ok"), ("win", "windows"): ("ok", "ok")}
    for system in ("linux", "windows"):  # each of the two that collide names the other, from the causes
        assert (verdicts[("old", system)]["partners"], verdicts[("old", system)]["group"]) == (["new"], ["new", "old"])
        assert (verdicts[("new", system)]["partners"], verdicts[("new", system)]["group"]) == (["old"], ["new", "old"])
        passes = [t for t in report["together"] if t["target"].startswith(system)]
        assert passes[0]["outcome"] == "collides" and passes[0]["groups"] == [["new", "old"]]
        assert [t["outcome"] for t in passes[1:]] == (["ok"] if system == "windows" else [])  # the rest fits
    assert "winlib" in verdicts[("win", "linux")]["cause"]
    assert verdicts[("win", "linux")]["label"] == "refused alone: no wheel for this target"
    receipt = json.loads(Path(report["receipt_path"]).read_text())
    assert Path(report["receipt_path"]).parent == receipts and not (receipts / "latest.json").exists()
    assert_valid_receipt(receipt)
    assert (receipt["kind"], receipt["outcome"], receipt["exit_code"]) == ("catalog-check", "conflict", 3)
    assert receipt["catalog_check"]["verdicts"] == report["verdicts"]
    assert not (catalog.parent / "home" / "pm" / "receipts").exists()  # the home is never written


def test_a_fitting_catalog_passes_and_the_outputs_are_for_people_and_ci(catalog, index, capsys) -> None:
    data = json.loads(catalog.read_text())
    data["entries"] = [e for e in data["entries"] if e["name"] in ("new", "web")]
    catalog.write_text(json.dumps(data))
    assert main(_check(catalog, index)) == 0
    table = capsys.readouterr().out
    assert table.splitlines()[0].split() == ["ENTRY", "TARGET", "VERDICT", "PARTNERS", "DETAIL"]
    assert "(together)" not in table and "collides" not in table
    assert table.splitlines()[-2:] == [f"together on {_native()}: 1 resolve; the 2 entries fit together (2 pins)",
                                       "all 2 entries fit on 1 target"]
    assert main(_check(catalog, index, "--markdown")) == 0
    assert capsys.readouterr().out.startswith("| entry | target | verdict | partners | detail |")


def test_github_annotations_name_each_entry_that_is_not_ok_and_its_partners(catalog, index, capsys) -> None:
    assert main(_check(catalog, index, "--platform", "linux", "--github")) == 3
    lines = capsys.readouterr().out.splitlines()
    titles = [line.split(",title=")[1].split("::")[0] for line in lines]
    assert [t.split(" on ")[0] for t in titles] == ["old", "new", "win"]
    assert all(line.startswith(f"::error file={catalog},title=") and " on linux / Python 3." in line for line in lines)
    assert titles[0].endswith("%3A collides") and titles[2].endswith("%3A refused alone%3A no wheel for this target")
    assert lines[0].split("::")[2].startswith("collides with new; in group new, old: ")
    assert lines[1].split("::")[2].startswith("collides with old; in group new, old: ")


def _native() -> str:
    from pm.inputs.target import target_for

    target = target_for(None)
    return f"{target.platform} / Python {target.python_version}"


def test_the_exit_code_is_3_for_any_entry_not_ok_and_1_only_when_the_gate_could_not_run() -> None:
    from pm.ops.catalog_check import Report
    from pm.ops.catalog_verdicts import EntryVerdict

    target = "linux / Python 3.12"
    report = Report("c.yaml", [target], {"a": "plugin.yaml", "gone": "removed: on the kill list"})
    assert report.exit_code == 0
    report.verdicts.append(EntryVerdict("a", target, "ok", pins=1))
    assert report.exit_code == 0
    report.verdicts.append(EntryVerdict("b", target, "not-fetched", "not fetched: git clone failed"))
    assert report.exit_code == 3  # that entry's failure, not the catalog's
    report.verdicts.append(EntryVerdict("c", target, "not-judged", "too complex", failure="too-complex"))
    assert report.exit_code == 3
    report.verdicts.append(EntryVerdict("d", target, "not-judged", "http://x: 503", failure="index"))
    assert report.exit_code == 1  # the index failed: not a verdict (DESIGN invariant 5)
    report.verdicts.pop()
    report.stopped.append("linux / Python 3.12: core.toml: not readable")
    assert report.exit_code == 1


def _directory(tmp_path: Path, entries: dict[str, dict], removed: list | None = None) -> Path:
    folder = tmp_path / "catalog.d"
    folder.mkdir(exist_ok=True)
    for name, fields in entries.items():
        (folder / f"{name}.yaml").write_text(json.dumps(fields))
    if removed is not None:
        (folder / "removed.yaml").write_text(json.dumps(removed))
    return folder


def test_the_directory_form_one_file_per_entry_and_a_kill_list(catalog, index, tmp_path, capsys) -> None:
    from pm.inputs.catalog import load_catalog

    repo, commit = _repo(tmp_path / "more", "webby", ["tinyhttp"])
    folder = _directory(tmp_path, {"webby": {
        "name": "webby", "repo": f"file://{repo}", "sha": commit, "description": "d", "maintainer": "m",
        "tier": "community", "platforms": ["linux", "macos"], "capabilities": ["tools"],
        "requires_hermes": ">=0.1"}}, removed=[{"name": "old", "reason": "abandoned"}, "other"])
    loaded = load_catalog(folder)
    (entry,) = loaded.entries
    assert (entry.git, entry.commit, entry.platforms, entry.tier) == (f"file://{repo}", commit, ("linux", "macos"),
                                                                       "community")
    assert loaded.removed == ("old", "other")
    assert main(_check(folder, index, "--json")) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["fetched"] == {"webby": "plugin.yaml"} and {v["verdict"] for v in report["verdicts"]} == {"ok"}
    (verdict,) = report["verdicts"]
    assert verdict["where"] == {"file": str(folder / "webby.yaml"), "source": f"file://{repo}@{commit}",
                                "path": "plugin.yaml"}


def test_a_directory_entry_is_checked_key_by_key(tmp_path) -> None:
    from pm.base.errors import InputError
    from pm.inputs.catalog import load_catalog

    folder = _directory(tmp_path, {"bad": {"name": "bad", "repo": "http://example.org/x.git", "sha": "abc",
                                           "platforms": ["beos"], "colour": "red"}})
    with pytest.raises(InputError) as caught:
        load_catalog(folder)
    text = str(caught.value)
    for key, words in (("colour", "unknown key"), ("repo", "must be an https:// URL"), ("sha", "must be a 40-hex commit"),
                       ("platforms", "'beos' is not one of linux, macos, windows")):
        assert f"{folder / 'bad.yaml'}: {key}: {words}" in text, text


def test_install_honours_the_entrys_platforms_and_requires_hermes(tmp_path, monkeypatch) -> None:
    from pm.env.plugin_install import install, this_system
    from pm.inputs.catalog import CatalogRefusal, load_catalog

    repo, commit = _repo(tmp_path / "repos", "elsewhere", ["tinyhttp"])
    other = "windows" if this_system() != "windows" else "linux"
    folder = _directory(tmp_path, {
        "elsewhere": {"name": "elsewhere", "repo": f"file://{repo}", "sha": commit, "platforms": [other]},
        "future": {"name": "future", "repo": f"file://{repo}", "sha": commit, "requires_hermes": ">=99"}})
    home = make_home(tmp_path / "home")
    with pytest.raises(CatalogRefusal, match=f"cannot be installed here: it supports {other}, not {this_system()}"):
        install(home, "elsewhere", load_catalog(folder))
    with pytest.raises(CatalogRefusal, match="cannot be installed here: it requires hermes >=99, and this host is "):
        install(home, "future", load_catalog(folder))
    assert not (home / "plugins" / "elsewhere").exists()


def test_check_reports_an_installed_plugin_the_catalog_has_since_removed(tmp_path, monkeypatch, capsys) -> None:
    from pm.env.plugin_install import install
    from pm.inputs.catalog import load_catalog

    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "none"))
    repo, commit = _repo(tmp_path / "repos", "fading", [])
    home = make_home(tmp_path / "home", config={"pm": {"catalog": "../catalog.d"}})
    folder = _directory(tmp_path, {"fading": {"name": "fading", "repo": f"file://{repo}", "sha": commit,
                                              "tier": "community"}}, removed=[])
    install(home, "fading", load_catalog(folder))
    record = json.loads((home / "plugins" / ".install-metadata.json").read_text())["fading"]
    assert (record["catalog"], record["pin"], record["tier"]) == (str(folder), f"commit {commit}", "community")
    assert main(["check", "--home", str(home), "--json"]) in (0, 4)
    assert not [w for w in json.loads(capsys.readouterr().out)["warnings"] if "removed" in w]
    (folder / "removed.yaml").write_text(json.dumps([{"name": "fading", "reason": "unmaintained"}]))
    main(["check", "--home", str(home), "--json"])
    (warning,) = [w for w in json.loads(capsys.readouterr().out)["warnings"] if "removed" in w]
    assert warning == (f"plugin 'fading' was installed from the catalog (commit {commit}) and has since been removed "
                       f"from it ({folder}) (reason: unmaintained): run `hermes plugins remove fading`, or list it in "
                       "pm.keep_removed to keep it")
    (home / "config.yaml").write_text(json.dumps({"pm": {"catalog": "../catalog.d", "keep_removed": ["fading"]}}))
    main(["check", "--home", str(home), "--json"])
    assert not [w for w in json.loads(capsys.readouterr().out)["warnings"] if "removed" in w]


def test_update_reports_it_too(tmp_path, monkeypatch, capsys) -> None:
    from pm.env.plugin_install import install
    from pm.inputs.catalog import load_catalog
    from pm.ops.update import update

    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "none"))
    repo, commit = _repo(tmp_path / "repos", "fading", [])
    (tmp_path / "core.toml").write_text("[project]\nname = 'host'\ndependencies = []\n")
    (tmp_path / "lock.txt").write_text("")
    home = make_home(tmp_path / "home", config={"pm": {"catalog": "../catalog.d", "core": "../core.toml",
                                                         "core_lock": "../lock.txt", "no_index": True}})
    folder = _directory(tmp_path, {"fading": {"name": "fading", "repo": f"file://{repo}", "sha": commit}},
                        removed=["fading"])
    with pytest.raises(Exception, match="removed from the catalog"):
        install(home, "fading", load_catalog(folder))  # a removed entry is never installed
    (folder / "removed.yaml").write_text("[]")
    install(home, "fading", load_catalog(folder))
    (folder / "removed.yaml").write_text(json.dumps(["fading"]))
    done = update(home)
    assert any(w.startswith("plugin 'fading' was installed from the catalog") for w in done.receipt.warnings), \
        done.receipt.warnings


def test_the_shipped_schemas_accept_what_pm_accepts_and_refuse_what_it_refuses(tmp_path) -> None:
    import jsonschema  # type: ignore[import-untyped]

    import pm
    from pm.base import yamlfile as _yaml
    from pm.base.files import read_text

    schemas = Path(pm.__file__).parent / "schemas"
    entry = json.loads((schemas / "catalog-entry.schema.json").read_text())
    one_file = json.loads((schemas / "catalog.schema.json").read_text())
    for schema in (entry, one_file):
        jsonschema.Draft202012Validator.check_schema(schema)
    good = {"name": "webby", "repo": "https://example.org/webby.git", "sha": "0" * 40, "platforms": ["linux"],
            "tier": "community", "capabilities": ["tools"]}
    assert list(jsonschema.Draft202012Validator(entry).iter_errors(good)) == []
    for bad in ({**good, "sha": "abc"}, {**good, "repo": "http://x"}, {**good, "platforms": ["beos"]},
                {**good, "colour": "red"}):
        assert list(jsonschema.Draft202012Validator(entry).iter_errors(bad)), bad
    shipped = _yaml.load(read_text(schemas.parent / "data" / "catalog.yaml").text)
    assert list(jsonschema.Draft202012Validator(one_file).iter_errors(shipped)) == []


def test_changed_since_rechecks_only_new_pins_and_always_the_together_pass(catalog, index, tmp_path, capsys) -> None:
    data = json.loads(catalog.read_text())
    data["entries"] = [e for e in data["entries"] if e["name"] in ("old", "web")]
    catalog.write_text(json.dumps(data))
    assert main(_check(catalog, index, "--json")) == 0
    first = tmp_path / "first.json"
    first.write_text(capsys.readouterr().out)
    # 'web' moves to a new pin that collides with 'old'; 'old' is unchanged, and its repository is
    # gone: a check that fetched it would fail
    repo, commit = _repo(tmp_path / "moved", "web", ["tinyhttp", "sharedlib>=2"])
    data["entries"] = [e if e["name"] != "web" else {"name": "web", "source": {"git": repo, "commit": commit}}
                       for e in data["entries"]]
    catalog.write_text(json.dumps(data))
    old_repo = next(e["source"]["git"] for e in data["entries"] if e["name"] == "old")
    subprocess.run(["rm", "-rf", old_repo], check=True)
    assert main(_check(catalog, index, "--json", "--changed-since", str(first))) == 3
    report = json.loads(capsys.readouterr().out)
    assert report["reused"] == ["old"] and report["pins"]["web"] == f"commit {commit}"
    verdicts = {v["entry"]: v for v in report["verdicts"]}
    assert (verdicts["old"]["kind"], verdicts["old"]["partners"], verdicts["old"]["reused"]) == ("collides", ["web"], True)
    assert (verdicts["web"]["kind"], verdicts["web"]["partners"], verdicts["web"]["reused"]) == ("collides", ["old"], False)
    assert main(_check(catalog, index, "--changed-since", str(first))) == 3
    table = capsys.readouterr().out
    assert [line.split()[:3] for line in table.splitlines() if line.startswith(("old ", "web "))] == [
        ["old", _native().split()[0], "/"], ["web", _native().split()[0], "/"]]
    assert "collides (reused)" in table and table.count("(reused)") == 1
    assert table.splitlines()[-1].endswith("(1 judged alone before: reused from --changed-since)")
    # another core: nothing carries over, and the gone repository is then that entry's failure
    (catalog.parent / "core.toml").write_text("[project]\nname = 'host'\ndependencies = []\n")
    assert main(_check(catalog, index, "--json", "--changed-since", str(first))) == 3
    report = json.loads(capsys.readouterr().out)
    assert report["fetched"]["old"].startswith("not fetched")
    assert [v["kind"] for v in report["verdicts"] if v["entry"] == "old"] == ["not-fetched"]
    assert "hermes-pm-catalog-" not in json.dumps(report)


def test_shards_judge_their_share_alone_and_the_merge_runs_the_together_pass(catalog, index, tmp_path,
                                                                            capsys) -> None:
    reports = []
    for shard in ("1/2", "2/2"):
        assert main(_check(catalog, index, "--platform", "linux", "--json", "--shard", shard)) in (0, 3)
        reports.append(tmp_path / f"shard{shard[0]}.json")
        reports[-1].write_text(capsys.readouterr().out)
    shares = [{v["entry"] for v in json.loads(r.read_text())["verdicts"]} for r in reports]
    assert shares[0] | shares[1] == {"new", "old", "web", "win"} and not shares[0] & shares[1]
    assert not any(json.loads(r.read_text())["together"] for r in reports)
    merge = [a for r in reports for a in ("--changed-since", str(r))]
    assert main(_check(catalog, index, "--platform", "linux", "--json", *merge)) == 3
    merged = json.loads(capsys.readouterr().out)
    assert sorted(merged["reused"]) == ["new", "old", "web", "win"]
    (together,) = merged["together"]
    assert together["groups"] == [["new", "old"]]
    assert {v["entry"]: v["partners"] for v in merged["verdicts"] if v["kind"] == "collides"} == {
        "old": ["new"], "new": ["old"]}
    assert main(_check(catalog, index, "--shard", "3/2")) == 2
    assert "--shard '3/2': expected I/N" in capsys.readouterr().err


def test_directory_entries_are_annotated_on_their_own_file_and_verdicts_carry_a_pins_digest(
        catalog, index, tmp_path, capsys) -> None:
    repo, commit = _repo(tmp_path / "more", "winny", ["winlib"])
    folder = _directory(tmp_path, {"winny": {"name": "winny", "repo": f"file://{repo}", "sha": commit}})
    assert main(_check(folder, index, "--platform", "linux", "--github")) == 3
    (line,) = capsys.readouterr().out.splitlines()
    assert line.startswith(f"::error file={folder / 'winny.yaml'},title=winny on linux")
    assert f"plugin 'winny' (file://{repo}@{commit}:plugin.yaml) requires winlib" in line
    assert main(_check(folder, index, "--platform", "windows", "--json")) == 0
    (verdict,) = json.loads(capsys.readouterr().out)["verdicts"]
    assert len(verdict["pins_digest"]) == 64 and verdict["pins"] == 2  # winlib, and core's tinyhttp


def test_an_unreadable_declaration_is_that_entrys_failure_named_at_its_repo_and_sha(catalog, index, tmp_path,
                                                                                   capsys) -> None:
    repo, commit = _repo(tmp_path / "more", "broken", [])
    (Path(repo) / "plugin.yaml").write_text("name: broken\npip_dependencies: [unclosed\n")
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qam", "break"],
                   cwd=repo, check=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True,
                            text=True).stdout.strip()
    web_repo, web_commit = _repo(tmp_path / "more", "fine", ["tinyhttp"])
    side_repo, _ = _repo(tmp_path / "more", "sidecar", [])
    (Path(side_repo) / "plugin.yaml").write_text("name: sidecar\n")  # declares nothing
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qam", "none"],
                   cwd=side_repo, check=True)
    side_commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=side_repo, check=True, capture_output=True,
                                 text=True).stdout.strip()
    folder = _directory(tmp_path, {"broken": {"name": "broken", "repo": f"file://{repo}", "sha": commit},
                                   "fine": {"name": "fine", "repo": f"file://{web_repo}", "sha": web_commit},
                                   "sidecar": {"name": "sidecar", "repo": f"file://{side_repo}", "sha": side_commit}})
    assert main(_check(folder, index, "--platform", "linux", "--json")) == 3  # judged: one entry not ok
    out = capsys.readouterr().out
    assert "hermes-pm-catalog-" not in out
    verdicts = {v["entry"]: v for v in json.loads(out)["verdicts"]}
    assert (verdicts["broken"]["verdict"], verdicts["broken"]["kind"]) == ("not judged", "not-judged")
    assert verdicts["broken"]["cause"].startswith(f"declaration not read: file://{repo}@{commit}:plugin.yaml: ")
    assert verdicts["fine"]["kind"] == "ok"
    assert (verdicts["sidecar"]["kind"], verdicts["sidecar"]["cause"]) == (
        "ok", "no declaration at the plugin root (sidecar-only): nothing to check")  # on the table all the same
