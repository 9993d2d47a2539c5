"""pm.ops.transaction and pm.ops.receipts: every operation is one transaction that ends in one
written receipt; the operations are plain functions (called here without any CLI)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pm.base.errors import EXIT_OK
from pm.base.store import Store
from pm.env import generations
from pm.inputs.settings import Flags
from pm.ops import SILENT, Notices, Options
from pm.ops.admit import disable, enable
from pm.ops.check import check
from pm.ops.gc import gc, rollback
from pm.ops.install import install, remove
from pm.ops.receipts import KEEP, write
from pm.ops.resolve import UnknownPlugin, resolve
from pm.ops.sync import sync
from pm.ops.transaction import Transaction, transaction
from pm.records.receipt import Draft
from pm.testing.receipts import assert_valid_receipt

from .conftest import plugin

TOOL = {"name": "hermes-pm", "version": "0", "uv": None}


@pytest.fixture
def home(env: Path) -> Path:
    home = env / "home"
    plugin(home / "plugins", "a", ["sharedlib==1.*"])
    plugin(home / "plugins", "b", ["sharedlib>=2"])
    (home / "config.yaml").write_text("plugins:\n  enabled:\n    - a\n")
    return home


def test_the_operations_run_without_a_cli_and_say_nothing(home: Path, env: Path, capsys) -> None:
    told: list[str] = []
    synced = sync(home, Options(), Notices(told.append))
    assert (synced.code, synced.receipt.kind, synced.receipt.outcome) == (EXIT_OK, "sync", "ok")
    assert synced.receipt.path is not None and synced.receipt.path.parent == home / "pm/receipts"
    assert resolve(home, candidate="b").code == 3
    assert enable(home, "b").code == 3
    assert disable(home, "a").code == EXIT_OK and enable(home, "b").code == EXIT_OK
    source = plugin(env / "elsewhere", "fresh", [])
    assert install(home, str(source)).receipt.extra["installed"] == "fresh"
    assert remove(home, "fresh").receipt.extra["removed"] == str(home / "plugins/fresh")
    assert capsys.readouterr() == ("", "") and told == []


def test_check_gc_and_rollback_are_operations_too(home: Path) -> None:
    assert check(home).code == 4 and check(home).readiness is not None  # nothing built yet
    first = sync(home).receipt.generation
    assert check(home).code == EXIT_OK
    assert (checked := check(home, candidate="b")).code == 4 and checked.dry_run is not None
    assert checked.dry_run.outcome == "conflict" and checked.candidate["would_resolve"] is False
    assert disable(home, "a").code == EXIT_OK
    assert rollback(home).receipt.generation["id"] == first["id"]
    collected = gc(home).receipt
    assert collected.outcome == "ok" and collected.extra["kept"][first["id"]] == "selected"
    assert sorted(collected.extra["kept"].values()) == ["previous", "selected"]


def test_a_profile_operates_on_its_primarys_environment(home: Path) -> None:
    work = home / "profiles" / "work"
    work.mkdir(parents=True)
    (work / "config.yaml").write_text("plugins:\n  enabled: []\n")
    done = sync(work)
    assert done.code == EXIT_OK and done.receipt.home == home
    assert generations.selected(home) is not None and not (work / "pm").exists()


def test_a_failure_before_the_work_skips_it_and_is_the_receipt(home: Path, monkeypatch) -> None:
    monkeypatch.setenv("HERMES_PM_MANAGED", "nix")
    ran: list[Transaction] = []
    txn = transaction(home, "sync", ran.append, command="sync")
    assert ran == [] and txn.inputs is None
    assert (txn.receipt.outcome, txn.receipt.failure["kind"], txn.receipt.extra["managed"]["name"]) == (
        "refused", "managed", "nix")
    assert_valid_receipt(json.loads(txn.receipt.path.read_text()))


def test_a_failure_in_the_work_is_recorded_not_raised(home: Path) -> None:
    def work(txn: Transaction) -> None:
        raise UnknownPlugin("zzz", txn.home, None)

    txn = transaction(home, "resolve", work, Options(flags=Flags()), SILENT, lock=False)
    assert txn.inputs is not None  # gathered before the work
    assert (txn.receipt.exit_code, txn.receipt.failure["kind"]) == (1, "unknown-plugin")
    assert txn.receipt.failure["message"] == f"no plugin named 'zzz' in {home} or its profiles (see `hermes plugins list`)"


def test_a_bug_is_not_swallowed(home: Path) -> None:
    def work(txn: Transaction) -> None:
        raise KeyError("a bug")

    with pytest.raises(KeyError):
        transaction(home, "resolve", work, lock=False)


def test_receipts_are_written_atomically_and_pruned(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    for n in range(KEEP + 3):
        write(Draft("scan", home, started_at=f"2026-01-01T00:00:{n:02d}.000000Z").finish("ok", 0, TOOL))
    folder = home / "pm/receipts"
    assert len([p for p in folder.glob("*.json") if p.name != "latest.json"]) == KEEP
    assert json.loads((folder / "latest.json").read_text())["started_at"] == f"2026-01-01T00:00:{KEEP + 2:02d}.000000Z"


def test_no_receipt_is_written_for_a_home_that_does_not_exist(tmp_path: Path) -> None:
    receipt = Draft("scan", tmp_path / "typo").finish("failed", 1, TOOL)
    assert write(receipt).path is None and not (tmp_path / "typo").exists()


def test_an_unwritable_receipts_folder_is_a_warning_in_the_receipt(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "pm").mkdir(parents=True)
    (home / "pm" / "receipts").write_text("a file where the folder should be")
    receipt = Draft("scan", home).finish("ok", 0, TOOL)
    written = write(receipt)
    assert written.path is None and written.written["warnings"][-1].startswith("receipt not written: ")
    assert receipt.warnings == []  # the finished value itself is unchanged


def test_an_unfinished_operation_has_no_receipt_and_a_receipt_is_built_once(tmp_path: Path) -> None:
    txn = Transaction(tmp_path, Options(), SILENT, Draft("scan", tmp_path), Store.for_home(tmp_path))
    with pytest.raises(AssertionError):
        txn.receipt  # noqa: B018 - the property asserts
    txn.finish("ok", 0, "done")
    with pytest.raises(AssertionError, match="built once"):
        txn.finish("ok", 0)
