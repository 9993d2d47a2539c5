"""`hermes pm resolve` and `hermes pm why` as commands: failures that are not verdicts, the
exclude-newer cutoff, where settings come from, offline use, origins, receipt retention, and a
candidate that does not exist."""

from __future__ import annotations

import hashlib
import json
import socket
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from pm.cli import main
from pm.testing import LocalIndex, add_plugin, build_packages, index_from_spec, make_home
from pm.testing.receipts import assert_valid_receipt

SPEC = {"alpha": {"1.0": ["beta>=1"], "2.0": ["beta>=2"]}, "beta": {"1.0": [], "2.0": []}}


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    with index_from_spec(tmp_path_factory.mktemp("dists"), SPEC) as served:
        yield served


@pytest.fixture
def home(tmp_path: Path, monkeypatch) -> Path:
    """A home with plugin ``maps`` (alpha) and ``notes`` (beta>=1); core has no requirements."""
    for variable in ("HERMES_PM_INDEX_URL", "UV_INDEX_URL", "PIP_INDEX_URL", "HERMES_HOME"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "no-bundled"))
    home = make_home(tmp_path / "home", config={"plugins": {"enabled": ["maps", "notes"]}})
    add_plugin(home / "plugins", "maps", style="manifest", dependencies=["alpha"])
    add_plugin(home / "plugins", "notes", style="pyproject", dependencies=["beta>=1"])
    (tmp_path / "core.toml").write_text("[project]\nname = 'host'\ndependencies = []\n")
    (tmp_path / "lock.txt").write_text("")
    return home


def core_args(home: Path) -> list[str]:
    return [
        "--home",
        str(home),
        "--core",
        str(home.parent / "core.toml"),
        "--core-lock",
        str(home.parent / "lock.txt"),
    ]


def resolve(capsys, home: Path, *extra: str) -> tuple[int, dict]:
    code = main(["resolve", "--json", *core_args(home), *extra])
    receipt = json.loads(capsys.readouterr().out)
    assert_valid_receipt(receipt)
    assert (
        json.loads((home / "pm/receipts/latest.json").read_text())["outcome"] == receipt["outcome"]
    )
    return code, receipt


def pins(receipt: dict) -> dict[str, str]:
    return {p["name"]: p["version"] for p in receipt["resolution"]["packages"]}


def closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/simple/"


# -- failures are not verdicts ---------------------------------------------------------------------


def test_a_dead_index_fails_with_exit_1_naming_the_url(home, capsys):
    url = closed_port_url()
    code, receipt = resolve(capsys, home, "--index-url", url)
    assert (code, receipt["outcome"], receipt["exit_code"]) == (1, "failed", 1)
    assert receipt["conflict"] is None and receipt["resolution"] is None
    assert receipt["failure"]["url"].startswith(url)
    assert receipt["failure"]["message"] == f"{receipt['failure']['url']}: connection refused"


def test_an_index_answering_503_fails_with_exit_1_naming_the_url(home, tmp_path, capsys):
    files = build_packages(tmp_path / "dists", SPEC)
    with LocalIndex(files, fail_projects={"beta": 503}) as failing:
        code, receipt = resolve(capsys, home, "--index-url", failing.url)
        url = failing.project_url("beta")
    assert (code, receipt["outcome"]) == (1, "failed")
    assert receipt["failure"] == {
        "kind": "index",
        "url": url,
        "message": f"{url}: HTTP 503 Service Unavailable",
    }


def test_a_file_whose_hash_does_not_match_fails_with_exit_1(home, tmp_path, capsys):
    """Without metadata files and byte ranges the resolver reads metadata out of the whole wheel,
    and verifies it (metadata read by range is re-checked at install instead)."""
    files = build_packages(tmp_path / "dists", SPEC)
    bad = "beta-2.0-py3-none-any.whl"
    with LocalIndex(files, metadata_files=False, ranges=False, corrupt_hashes={bad}) as corrupt:
        code, receipt = resolve(capsys, home, "--index-url", corrupt.url)
        url = f"{corrupt.root}/files/{bad}"
    assert (code, receipt["outcome"], receipt["conflict"]) == (1, "failed", None)
    assert receipt["failure"]["url"] == url
    actual = hashlib.sha256((tmp_path / "dists" / bad).read_bytes()).hexdigest()
    advertised = hashlib.sha256(b"corrupt:" + actual.encode()).hexdigest()  # LocalIndex's lie
    assert (
        receipt["failure"]["message"]
        == f"{url}: hash mismatch: expected sha256 {advertised}, got {actual}"
    )


def test_a_corrupt_range_answer_fails_with_exit_1_never_a_conflict(home, tmp_path, capsys):
    """Without metadata files the resolver reads METADATA by range; bytes that are no zip are a
    failure naming the file, not a verdict on the plugins."""
    files = build_packages(tmp_path / "dists", SPEC)
    (tmp_path / "garbage").write_bytes(b"not a zip\n" * 10_000)
    bad = "beta-2.0-py3-none-any.whl"
    with LocalIndex(files, metadata_files=False) as index:
        index.stale_ranges[bad] = tmp_path / "garbage"
        code, receipt = resolve(capsys, home, "--index-url", index.url)
        url = f"{index.root}/files/{bad}"
    assert (code, receipt["outcome"], receipt["conflict"]) == (1, "failed", None)
    assert receipt["failure"]["url"] == url
    assert receipt["failure"]["message"] == (
        f"{url}: not a readable wheel (zip, read by range): no end of central directory record "
        "(not a zip archive, or truncated)")


def test_a_failure_is_told_as_such_on_stderr(home, capsys):
    url = closed_port_url()
    assert main(["resolve", *core_args(home), "--index-url", url]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"error: {url}") and err[0].endswith(": connection refused")
    assert (
        err[1] == "this is a failure to fetch, not a verdict on your plugins: nothing was changed"
    )
    assert err[2].startswith(f"receipt: {home}/pm/receipts/")


def test_why_on_a_dead_index_fails_with_exit_1(home, capsys):
    assert main(["why", "--resolve", "beta", "--json", *core_args(home), "--index-url", closed_port_url()]) == 1
    receipt = json.loads((home / "pm/receipts/latest.json").read_text())
    assert_valid_receipt(receipt)
    assert (receipt["kind"], receipt["outcome"], receipt["exit_code"]) == ("why", "failed", 1)


# -- exclude-newer ---------------------------------------------------------------------------------


def _stamped(home: Path, tmp_path: Path, times: dict[str, str]) -> LocalIndex:
    """An index of beta releases uploaded at ``times``; the home keeps only ``notes`` (beta>=1)."""
    (home / "config.yaml").write_text("plugins: {enabled: [notes]}\n")
    spec = {"beta": {version: {"upload_time": moment} for version, moment in times.items()}}
    return LocalIndex(build_packages(tmp_path / "stamped", spec))


@pytest.mark.parametrize(
    ("cutoff", "expected"),
    [
        ("2024-03-01", "2.0"),  # a bare date is the end of that day: 2.0 (that noon) is kept
        ("2024-02-29", "1.0"),
        ("2024-03-01T11:59:59Z", "1.0"),
        ("2024-06-01T00:00:00Z", "3.0"),
    ],
)
def test_exclude_newer_drops_files_uploaded_after_a_date(home, tmp_path, capsys, cutoff, expected):
    times = {
        "1.0": "2024-01-10T08:00:00Z",
        "2.0": "2024-03-01T12:00:00Z",
        "3.0": "2024-05-31T23:00:00Z",
    }
    with _stamped(home, tmp_path, times) as stamped:
        code, receipt = resolve(capsys, home, "--index-url", stamped.url, "--exclude-newer", cutoff)
    assert code == 0, receipt["conflict"] or receipt["failure"]
    assert pins(receipt)["beta"] == expected


def test_an_unreadable_cutoff_is_a_usage_error(home, index, capsys):
    assert (
        main(["resolve", *core_args(home), "--index-url", index.url, "--exclude-newer", "soon"])
        == 2
    )
    assert capsys.readouterr().err.splitlines()[0] == (
        "error: --exclude-newer: 'soon' is neither a date (2026-01-31), a date-time, nor 'N days'"
    )


def test_exclude_newer_in_days_counts_back_from_now(home, tmp_path, capsys):
    now = datetime.now(UTC)
    times = {v: (now - timedelta(days=days)).isoformat() for v, days in (("1.0", 30), ("2.0", 3))}
    with _stamped(home, tmp_path, times) as stamped:
        assert pins(
            resolve(capsys, home, "--index-url", stamped.url, "--exclude-newer", "7 days")[1]
        ) == {"beta": "1.0"}
        assert pins(
            resolve(capsys, home, "--index-url", stamped.url, "--exclude-newer", "1 day")[1]
        ) == {"beta": "2.0"}


def test_exclude_newer_from_config_and_a_requirement_only_newer_files_meet(home, tmp_path, capsys):
    (home / "plugins/notes/pyproject.toml").write_text(
        "[project]\nname = 'notes'\nversion = '1'\ndependencies = ['beta>=2']\n"
    )
    times = {"1.0": "2024-01-10T08:00:00Z", "2.0": "2024-03-01T12:00:00Z"}
    with _stamped(home, tmp_path, times) as stamped:
        (home / "config.yaml").write_text(
            "plugins: {enabled: [notes]}\npm: {exclude_newer: '2024-02-01'}\n"
        )
        code, receipt = resolve(capsys, home, "--index-url", stamped.url)
    assert (code, receipt["outcome"]) == (3, "conflict")
    assert receipt["conflict"]["findings"][0]["kind"] == "excluded-newer"


# -- where settings come from ----------------------------------------------------------------------


@pytest.fixture
def two_indexes(tmp_path):
    """``(old, new)``: the same package, 1.0 on one index and 2.0 on the other."""
    old = LocalIndex(build_packages(tmp_path / "old", {"beta": {"1.0": []}})).start()
    new = LocalIndex(build_packages(tmp_path / "new", {"beta": {"2.0": []}})).start()
    yield old, new
    old.stop()
    new.stop()


def _only_notes(home: Path, config_url: str | None) -> None:
    pm = f"\npm: {{index_url: '{config_url}'}}" if config_url else ""
    (home / "config.yaml").write_text("plugins: {enabled: [notes]}" + pm + "\n")


def test_a_flag_beats_the_environment_which_beats_config(home, two_indexes, capsys, monkeypatch):
    old, new = two_indexes
    _only_notes(home, config_url=new.url)
    monkeypatch.setenv("HERMES_PM_INDEX_URL", new.url)
    code, receipt = resolve(capsys, home, "--index-url", old.url)
    assert (code, pins(receipt), receipt["inputs"]["index"]["urls"]) == (
        0,
        {"beta": "1.0"},
        [old.url],
    )

    monkeypatch.setenv("HERMES_PM_INDEX_URL", old.url)
    code, receipt = resolve(capsys, home)
    assert (code, pins(receipt), receipt["inputs"]["index"]["urls"]) == (
        0,
        {"beta": "1.0"},
        [old.url],
    )


def test_config_beats_uv_and_pip_settings(home, two_indexes, capsys, monkeypatch):
    old, new = two_indexes
    _only_notes(home, config_url=old.url)
    monkeypatch.setenv("UV_INDEX_URL", new.url)
    monkeypatch.setenv("PIP_INDEX_URL", new.url)
    assert pins(resolve(capsys, home)[1]) == {"beta": "1.0"}
    _only_notes(home, config_url=None)
    assert pins(resolve(capsys, home)[1]) == {"beta": "2.0"}


# -- offline ---------------------------------------------------------------------------------------


def test_offline_after_a_warm_run_resolves_the_same_pins(home, index, capsys):
    code, warm = resolve(capsys, home, "--index-url", index.url)
    assert code == 0
    requests = len(index.requests)
    code, offline = resolve(capsys, home, "--index-url", index.url, "--offline")
    assert (code, pins(offline)) == (0, pins(warm)) == (0, {"alpha": "2.0", "beta": "2.0"})
    assert offline["inputs"]["index"]["offline"] is True
    assert len(index.requests) == requests, "offline touched the index"


def test_offline_without_a_cache_fails_with_exit_1(home, index, capsys):
    code, receipt = resolve(capsys, home, "--index-url", index.url, "--offline")
    assert (code, receipt["outcome"], receipt["conflict"]) == (1, "failed", None)
    url = receipt["failure"]["url"]
    assert url in (index.project_url("alpha"), index.project_url("beta"))
    assert receipt["failure"]["message"] == f"{url}: not in the cache and --offline was given"


# -- why -------------------------------------------------------------------------------------------


def test_why_names_the_origins_and_the_version(home, index, capsys):
    assert main(["why", "--resolve", "Beta", *core_args(home), "--index-url", index.url]) == 0
    plugins = home / "plugins"
    assert capsys.readouterr().out == (
        "beta 2.0\n"
        f"  plugin 'notes' ({plugins}/notes/pyproject.toml) requires beta>=1\n"
        "  alpha 2.0 requires beta>=2\n"
        f"  (pulled in by: plugin 'maps' ({plugins}/maps/plugin.yaml))\n"  # notes is named above: once
    )


def test_why_answers_from_the_selected_generation_without_the_index(home, index, capsys):
    assert main(["why", "beta", "--home", str(home)]) == 1
    assert "no generation is selected" in capsys.readouterr().err
    assert main(["sync", *core_args(home), "--index-url", index.url]) == 0
    capsys.readouterr()
    receipts = sorted((home / "pm/receipts").iterdir())
    assert main(["why", "Beta", *core_args(home), "--index-url", closed_port_url()]) == 0
    assert capsys.readouterr().out == (
        "beta 2.0\n"
        "  plugin 'notes' requires beta>=1\n"
        "  alpha 2.0 requires beta>=2\n"
        "  (pulled in by: plugin 'maps')\n"
    )
    assert sorted((home / "pm/receipts").iterdir()) == receipts  # a read: no resolution, no receipt
    assert main(["why", "gamma", "--home", str(home)]) == 1
    assert "gamma is not in generation" in capsys.readouterr().err


def test_why_json_lists_origins_and_declarations(home, index, capsys):
    assert main(["why", "--resolve", "beta", "--json", *core_args(home), "--index-url", index.url]) == 0
    answer = json.loads(capsys.readouterr().out)
    plugins = home / "plugins"
    maps = {"kind": "plugin", "plugin": "maps", "file": f"{plugins}/maps/plugin.yaml"}
    notes = {"kind": "plugin", "plugin": "notes", "file": f"{plugins}/notes/pyproject.toml"}
    assert answer == {
        "package": "beta",
        "version": "2.0",
        "required_by": [maps, notes],
        "parents": [
            f"plugin 'notes' ({plugins}/notes/pyproject.toml) requires beta>=1",
            "alpha 2.0 requires beta>=2",
        ],
        "declared": [{"requirement": "beta>=1", "origin": notes}],
    }


def test_why_a_package_outside_the_resolution_exits_1(home, index, capsys):
    assert main(["why", "--resolve", "gamma", *core_args(home), "--index-url", index.url]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines()[-1] == f"error: gamma is not part of the resolution of {home}"


# -- receipts and candidates -----------------------------------------------------------------------


def test_receipts_are_kept_to_the_last_50(home, index, capsys):
    folder = home / "pm" / "receipts"
    folder.mkdir(parents=True)
    old = [folder / f"20200101T0000{i:02d}000000Z-resolve-1.json" for i in range(55)]
    for path in old:
        path.write_text("{}")
    code, receipt = resolve(capsys, home, "--index-url", index.url)
    assert code == 0
    kept = sorted(p.name for p in folder.glob("*.json") if p.name != "latest.json")
    assert len(kept) == 50
    assert kept[:-1] == [p.name for p in old[-49:]], "the oldest go first"
    newest = json.loads((folder / kept[-1]).read_text())
    assert newest == json.loads((folder / "latest.json").read_text())
    assert (newest["kind"], newest["outcome"]) == ("resolve", "ok")


def test_with_an_unknown_plugin_exits_1_with_a_clear_message(home, index, capsys):
    code = main(["resolve", *core_args(home), "--index-url", index.url, "--with", "nope"])
    err = capsys.readouterr().err.splitlines()
    assert code == 1
    assert err[0] == f"error: no plugin named 'nope' in {home} or its profiles; did you mean 'notes'?"
    receipt = json.loads((home / "pm/receipts/latest.json").read_text())
    assert_valid_receipt(receipt)
    assert (receipt["outcome"], receipt["candidate"]) == ("failed", "nope")


def test_resolve_warns_like_sync_about_the_inputs(capsys, home: Path, index: LocalIndex) -> None:
    """The dry run was quieter than sync: an enabled name with no plugin, or an enabled plugin with
    an invalid requirement, gave exit 0 and no word on stderr (issue 24, item 5)."""
    (home / "config.yaml").write_text("plugins:\n  enabled: [maps, notes, ghost, broken]\n")
    add_plugin(home / "plugins", "broken", style="manifest", dependencies=["not a requirement!!"])
    code = main(["resolve", *core_args(home), "--index-url", index.url])
    err = capsys.readouterr().err.splitlines()
    assert code == 0
    warnings = [line for line in err if line.startswith("warning: ")]
    assert warnings[0] == f"warning: {home / 'config.yaml'}: plugins.enabled names 'ghost', but no plugin root has that name"
    assert warnings[1].startswith("warning: plugin 'broken' is enabled but invalid, so it is left out of the "
                                  f"environment: {home / 'plugins' / 'broken' / 'plugin.yaml'}:6: pip_dependencies[0]: ")
    assert len(warnings) == 2 and err[-1].startswith("receipt: ")


def test_resolve_and_sync_warn_when_an_enabled_plugin_sits_out_for_its_requires_python(home, index, capsys):
    """Item 5's last case: a Requires-Python that excludes the target left an enabled plugin out in
    silence, in resolve and in sync alike."""
    (home / "config.yaml").write_text("plugins:\n  enabled: [maps, future]\n")
    root = home / "plugins" / "future"
    root.mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'future'\nversion = '1'\nrequires-python = '>=3.99'\n"
                                         "dependencies = []\n")
    for command in ("resolve", "sync"):
        assert main([command, *core_args(home), "--index-url", index.url]) == 0
        warnings = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning: ")]
        assert warnings == ["warning: plugin 'future' is enabled but sits out, so it is left out of the environment: "
                            f"requires-python '>=3.99' excludes the target Python {sys.version.split()[0]}"], command
