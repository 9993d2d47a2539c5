"""pm.records.receipt: an operation fills a Draft; finish() builds the Receipt once, an immutable value,
without running a program; writing is pm.ops.receipts'."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path
from typing import Any

import pytest

import pm.ops.receipts
from pm.records.receipt import OUTCOMES, SCHEMA_VERSION, Draft
from pm.testing.receipts import assert_valid_receipt

TOOL = {"name": "hermes-pm", "version": "0", "uv": "0.5.0"}


def test_finish_builds_the_receipt_without_writing(tmp_path: Path) -> None:
    draft = Draft("resolve", tmp_path, candidate="a")
    draft.step("hermes pm sync", "build it")
    draft.step("hermes pm sync", "the same command is listed once")
    receipt = draft.finish("conflict", 3, TOOL)
    assert not (tmp_path / "pm").exists() and receipt.path is None
    assert (receipt.exit_code, receipt.outcome, receipt.finished) == (3, "conflict", True)
    data = receipt.written
    assert data["schema"] == SCHEMA_VERSION and data["next_steps"] == [{"command": "hermes pm sync", "why": "build it"}]
    assert data["tool"] == TOOL
    assert receipt.as_written() == data | {"receipt_path": None}
    assert_valid_receipt(data)
    assert "conflict" in OUTCOMES


def test_a_receipt_is_an_immutable_value(tmp_path: Path) -> None:
    draft = Draft("scan", tmp_path)
    draft.record(message="done")
    receipt = draft.finish("ok", 0, TOOL)
    draft.warnings.append("later")  # the draft goes on; the receipt built from it does not
    assert receipt.warnings == [] and receipt.extra == {"message": "done"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        receipt.path = tmp_path  # type: ignore[misc]
    with pytest.raises(TypeError):
        receipt.data["outcome"] = "failed"  # type: ignore[index]
    receipt.written["outcome"] = "failed"  # a copy
    assert receipt.outcome == "ok"


def test_each_field_is_recorded_once(tmp_path: Path) -> None:
    draft = Draft("sync", tmp_path)
    draft.record(frozen={"from": "pylock.toml"})
    draft.record(frozen={"local_files": []})  # a mapping completed with new keys
    draft.record(message="a")
    draft.record(message="a")  # the same value again: no change
    with pytest.raises(AssertionError, match="recorded twice"):
        draft.record(message="b")
    with pytest.raises(AssertionError, match="recorded twice"):
        draft.record(frozen={"from": "other.toml"})
    with pytest.raises(AssertionError, match="is a receipt section"):
        draft.record(warnings=[])
    assert draft.finish("ok", 0, TOOL).extra == {"frozen": {"from": "pylock.toml", "local_files": []},
                                                 "message": "a"}


def test_tool_facts_are_asked_once_per_process_and_finishing_runs_no_program(monkeypatch: Any,
                                                                            tmp_path: Path) -> None:
    first = pm.ops.receipts.tool_facts()
    ran: list[object] = []
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: ran.append(a))
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: ran.append(a))
    assert pm.ops.receipts.tool_facts() == first
    Draft("scan", tmp_path).finish("ok", 0, first).as_written()
    assert ran == []
