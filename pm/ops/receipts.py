"""Writing finished receipts: atomically, to ``<home>/pm/receipts/<stamp>-<kind>-<pid>.json`` and
``latest.json``, keeping the last :data:`KEEP`. The one place receipts reach the disk."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pm.base.store import Store, StoreError

if TYPE_CHECKING:
    from pm.records.receipt import Receipt

KEEP = 50


def write(receipt: Receipt) -> Receipt:
    """Write a finished ``receipt``; its path goes to ``receipt.path``. A write failure becomes a
    warning in the receipt (the operation's exit code stands), never a lost result. Nothing is
    written when the home does not exist (a mistyped ``--home`` never creates one)."""
    data = receipt.written
    assert data is not None, "finish() the receipt first"
    if not receipt.home.is_dir():
        return receipt
    try:
        receipt.path = write_data(receipt.home, data)
    except StoreError as exc:
        receipt.warnings.append(f"receipt not written: {exc}")  # pm.cli._output.NOT_WRITTEN: the CLI tells it
        data["warnings"].append(receipt.warnings[-1])
        receipt.path = None
    return receipt


def write_data(home: Path, data: dict[str, Any]) -> Path:
    folder = home / "pm" / "receipts"
    store = Store.for_home(home)
    stamp = data["started_at"].replace(":", "").replace("-", "").replace(".", "")
    path = folder / f"{stamp}-{data['kind']}-{os.getpid()}.json"
    # Serialised once, compactly: a 200-plugin receipt is large and indent= takes Python's slow
    # encoder path; `jq .` or `python -m json.tool` pretty-print it for people.
    encoded = (json.dumps(data, separators=(",", ":"), default=str) + "\n").encode()
    # 0600: a receipt names index URLs (their passwords redacted) and the user's paths
    store.write_bytes(path, encoded, mode=0o600)
    store.write_bytes(folder / "latest.json", encoded, mode=0o600)
    _prune(store, folder)
    return path


def _prune(store: Store, folder: Path) -> None:
    receipts = sorted(p for p in folder.glob("*.json") if p.name != "latest.json")
    for old in receipts[:-KEEP]:
        store.unlink(old)
