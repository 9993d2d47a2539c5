"""`hermes pm sync --from FILE`: resolve on one machine, build on another — exactly the recorded
files, no resolver, no index; refused when the home's inputs changed since FILE was made."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path

from pm.env import generations
from pm.testing import LocalIndex, add_plugin

from .conftest import PINS
from .helpers import edit, installed, latest, pins_of, pm


def _resolved_on(home: Path, capsys) -> Path:
    """Sync ``home`` (resolving on the index) and return a copy of the receipt that records it."""
    result = pm(capsys, home, "sync", "--json")
    assert result.code == 0, result.err
    copy = home.parent / f"{home.name}-receipt.json"
    shutil.copy(result.data["receipt_path"], copy)
    return copy


def test_receipt_from_another_home_builds_the_same_generation_with_the_index_offline(
        new_home: Callable[[str], Path], index: LocalIndex, wheels: Path, capsys) -> None:
    """The air-gapped path: the resolver home and the builder home share nothing but the receipt
    and a folder of wheels; the builder never reaches an index."""
    receipt_file = _resolved_on(new_home("resolver"), capsys)
    builder = new_home("builder")
    index.stop()  # from here on, any request to the index fails

    result = pm(capsys, builder, "sync", "--from", str(receipt_file), "--find-links", str(wheels), "--json")

    assert result.code == 0, result.data.get("failure")
    built = generations.selected(builder)
    assert pins_of(built) == PINS and installed(built) == PINS
    receipt = result.data
    assert receipt["outcome"] == "ok" and receipt["message"] == f"built and selected generation {built.id}"
    assert receipt["frozen"] == {"from": str(receipt_file), "kind": "receipt", "inputs": "match",
                                 "fingerprint": json.loads(receipt_file.read_text())["inputs"]["fingerprint"],
                                 "local_files": sorted(f"{n}-{v}-py3-none-any.whl" for n, v in PINS.items())}
    assert built.fingerprint == receipt["inputs"]["fingerprint"]  # a plain sync (same flags) has nothing to do
    assert {p["file"]["url"] for p in receipt["resolution"]["packages"]} == {
        (wheels / f"{n}-{v}-py3-none-any.whl").as_uri() for n, v in PINS.items()}
    again = pm(capsys, builder, "sync", "--find-links", str(wheels), "--json")
    assert again.data["message"] == "already in sync", again.data


def test_a_frozen_sync_without_find_links_fetches_the_recorded_urls(home: Path, index: LocalIndex, capsys) -> None:
    receipt_file = _resolved_on(home, capsys)
    other = home.parent / "other"
    shutil.copytree(home / "plugins", other / "plugins")
    shutil.copy(home / "config.yaml", other / "config.yaml")
    index.reset_log()
    result = pm(capsys, other, "sync", "--from", str(receipt_file), "--json")
    assert result.code == 0, result.data.get("failure")
    assert pins_of(generations.selected(other)) == PINS
    assert not [path for _, path in index.requests if path.startswith("/simple")], "no index metadata was read"


def test_changed_declaration_is_refused_naming_the_plugin(home: Path, capsys) -> None:
    receipt_file = _resolved_on(home, capsys)
    selected = generations.read_state(home)["selected"]
    notes = home / "plugins" / "notes" / "pyproject.toml"
    before = json.loads(receipt_file.read_text())["inputs"]["plugins"]
    old_sha = next(p["declaration"]["sha256"] for p in before if p["name"] == "notes")
    edit(notes, '"beta>=1"', '"beta>=1", "epsilon"')
    new_sha = hashlib.sha256(notes.read_bytes()).hexdigest()

    result = pm(capsys, home, "sync", "--from", str(receipt_file))

    assert result.code == 1
    label = str(receipt_file)
    change = (f"plugin 'notes': its declaration changed since {label} was made ({notes}: "
              f"sha256 {old_sha[:12]}… then, {new_sha[:12]}… now)")
    receipt = latest(home)
    assert result.err.splitlines()[:4] == [
        f"refused: the inputs of this home changed since {label} was made:",
        f"  - {change}",
        "nothing was built",
        f"  hermes pm sync --from {label} --ignore-inputs --home {home}",
    ]
    assert receipt["outcome"] == "refused" and receipt["exit_code"] == 1
    assert receipt["failure"]["kind"] == "inputs-changed" and receipt["failure"]["differences"] == [change]
    assert [s["command"] for s in receipt["next_steps"]] == [
        f"hermes pm sync --from {label} --ignore-inputs --home {home}", f"hermes pm sync --home {home}"]
    assert generations.read_state(home)["selected"] == selected and generations.all_ids(home) == [selected]


def test_added_and_removed_members_are_named(home: Path, capsys) -> None:
    receipt_file = _resolved_on(home, capsys)
    add_plugin(home / "plugins", "extra", style="manifest", dependencies=["epsilon"])
    (home / "config.yaml").write_text("plugins:\n  enabled: [notes, extra]\n")
    result = pm(capsys, home, "sync", "--from", str(receipt_file), "--json")
    assert result.code == 1
    label = str(receipt_file)
    assert result.data["failure"]["differences"] == [
        f"plugin 'extra' is a member now but was not when {label} was made",
        (f"plugin 'search' was a member when {label} was made but is not now "
         "(not-enabled: not in plugins.enabled)"),
    ]


def test_ignore_inputs_builds_the_file_and_a_plain_sync_then_resolves_anew(home: Path, capsys) -> None:
    receipt_file = _resolved_on(home, capsys)
    edit(home / "plugins" / "notes" / "pyproject.toml", '"beta>=1"', '"beta>=1", "epsilon"')
    before = generations.all_ids(home)
    refused = pm(capsys, home, "sync", "--from", str(receipt_file), "--ignore-inputs", "--json")
    assert (refused.code, refused.data["outcome"]) == (1, "refused")
    assert refused.data["failure"]["kind"] == "unmet-requirements"
    notes = home / "plugins" / "notes" / "pyproject.toml"
    assert refused.data["failure"]["unmet"] == [f"plugin 'notes' ({notes}) requires epsilon, but {receipt_file} "
                                                "pins no epsilon"]
    assert [s["command"] for s in refused.data["next_steps"]][-1].endswith(f"--ignore-inputs --allow-unmet --home {home}")
    assert generations.all_ids(home) == before
    result = pm(capsys, home, "sync", "--from", str(receipt_file), "--ignore-inputs", "--allow-unmet", "--json")
    assert result.code == 0, result.data.get("failure")
    built = generations.selected(home)
    assert pins_of(built) == PINS and result.data["frozen"]["inputs"] == "changed"
    assert result.data["warnings"][-2].startswith(
        "built although the inputs changed (--ignore-inputs): plugin 'notes': its declaration changed")
    assert result.data["warnings"][-1] == ("built although its pins break this home's requirements (--allow-unmet): "
                                           f"plugin 'notes' ({notes}) requires epsilon, but {receipt_file} pins no "
                                           "epsilon")
    assert built.fingerprint != result.data["inputs"]["fingerprint"]
    resolved = pm(capsys, home, "sync", "--json")
    assert resolved.code == 0 and pins_of(generations.selected(home)) == PINS | {"epsilon": "1.0"}


def test_pylock_export_round_trips_through_a_frozen_sync(new_home, index: LocalIndex, wheels: Path,
                                                         capsys) -> None:
    resolver = new_home("resolver")
    lock = resolver.parent / "pylock.toml"
    assert pm(capsys, resolver, "export", "--format", "pylock", "-o", str(lock)).code == 0
    builder = new_home("builder")
    index.stop()
    result = pm(capsys, builder, "sync", "--from", str(lock), "--find-links", str(wheels), "--json")
    assert result.code == 0, result.data.get("failure")
    assert installed(generations.selected(builder)) == PINS
    assert result.data["frozen"]["kind"] == "pylock" and result.data["frozen"]["inputs"] == "match"
    origins = {p["name"]: [o.get("plugin", "core") for o in p["required_by"]]
               for p in result.data["resolution"]["packages"]}
    assert origins == {"alpha": ["core", "notes"], "beta": ["notes"], "delta": ["search"], "gamma": ["search"]}


def test_a_changed_declaration_is_refused_from_a_pylock_too(home: Path, capsys) -> None:
    lock = home.parent / "pylock.toml"
    assert pm(capsys, home, "export", "--format", "pylock", "-o", str(lock)).code == 0
    (home / "config.yaml").write_text("plugins:\n  enabled: [notes]\n")
    result = pm(capsys, home, "sync", "--from", str(lock), "--json")
    assert result.code == 1 and result.data["outcome"] == "refused"
    assert result.data["failure"]["differences"] == [
        (f"plugin 'search' was a member when {lock} was made but is not now "
         "(not-enabled: not in plugins.enabled)")]


def test_a_find_links_file_with_other_bytes_is_refused(home: Path, wheels: Path, tmp_path: Path, capsys) -> None:
    receipt_file = _resolved_on(home, capsys)
    selected = generations.read_state(home)["selected"]
    folder = tmp_path / "tampered"
    shutil.copytree(wheels, folder)
    (folder / "delta-1.0-py3-none-any.whl").write_bytes((wheels / "gamma-1.0-py3-none-any.whl").read_bytes())
    result = pm(capsys, home, "sync", "--from", str(receipt_file), "--find-links", str(folder), "--json")
    assert result.code == 1 and result.data["outcome"] == "refused"
    recorded = next(p["file"]["sha256"] for p in json.loads(receipt_file.read_text())["resolution"]["packages"]
                    if p["name"] == "delta")
    found = hashlib.sha256((folder / "delta-1.0-py3-none-any.whl").read_bytes()).hexdigest()
    assert result.data["failure"]["kind"] == "file-mismatch"
    assert result.data["failure"]["message"] == (
        f"refused: {folder / 'delta-1.0-py3-none-any.whl'} does not match the sha256 recorded for it "
        f"(recorded {recorded}, the file has {found}); nothing was built")
    assert generations.read_state(home)["selected"] == selected and generations.all_ids(home) == [selected]


def test_offline_without_the_files_fails_before_building(home: Path, capsys) -> None:
    receipt_file = _resolved_on(home, capsys)
    result = pm(capsys, home, "sync", "--from", str(receipt_file), "--offline", "--ignore-inputs", "--json")
    assert result.code == 1 and result.data["outcome"] == "failed"
    assert result.data["failure"]["message"] == (
        f"--offline: 4 file(s) of {receipt_file} are in no --find-links folder: alpha-1.0-py3-none-any.whl, "
        "beta-1.0-py3-none-any.whl, delta-1.0-py3-none-any.whl, gamma-1.0-py3-none-any.whl")


def test_a_noop_sync_receipt_is_a_frozen_file_but_a_failed_one_is_not(home: Path, capsys) -> None:
    _resolved_on(home, capsys)
    noop = pm(capsys, home, "sync", "--json").data
    again = pm(capsys, home, "sync", "--from", noop["receipt_path"], "--json")
    assert again.code == 0 and again.data["message"] == "already in sync"
    assert pm(capsys, home, "resolve", "--with", "no-such-plugin").code == 1
    failed = str(home / "pm" / "receipts" / "latest.json")
    result = pm(capsys, home, "sync", "--from", failed, "--json")
    assert result.code == 1
    assert result.data["failure"]["message"] == (
        f"{failed}: resolution: is null: this receipt (kind 'resolve', outcome 'failed') records no "
        "resolution; use one from a resolve or a sync that resolved, or `hermes pm export --format pylock "
        "--selected`")