"""pm.records.receipt: a receipt is a value — finish() stamps it; writing is pm.ops.receipts'."""

from __future__ import annotations

from pathlib import Path

from pm.records.receipt import OUTCOMES, SCHEMA_VERSION, Receipt
from pm.testing.receipts import assert_valid_receipt


def test_finish_stamps_without_writing(tmp_path: Path) -> None:
    receipt = Receipt("resolve", tmp_path, candidate="a")
    receipt.step("hermes pm sync", "build it")
    receipt.step("hermes pm sync", "the same command is listed once")
    data = receipt.finish("conflict", 3)
    assert not (tmp_path / "pm").exists() and receipt.path is None
    assert (receipt.exit_code, receipt.outcome, receipt.finished) == (3, "conflict", True)
    assert data["schema"] == SCHEMA_VERSION and data["next_steps"] == [{"command": "hermes pm sync", "why": "build it"}]
    assert receipt.as_written() == data | {"receipt_path": None}
    assert_valid_receipt(data)
    assert "conflict" in OUTCOMES
