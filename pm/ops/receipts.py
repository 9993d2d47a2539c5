"""Writing finished receipts: atomically, to ``<home>/pm/receipts/<stamp>-<kind>-<pid>.json`` and
``latest.json``, keeping the last :data:`KEEP`. The one place receipts reach the disk; and the
tool facts every receipt carries."""

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
    """Write a finished ``receipt``; returns it with its path. A write failure becomes a warning in
    the receipt (the operation's exit code stands), never a lost result. Nothing is written when
    the home does not exist (a mistyped ``--home`` never creates one)."""
    if not receipt.home.is_dir():
        return receipt
    try:
        return receipt.with_path(write_data(receipt.home, receipt.written))
    except StoreError as exc:  # pm.cli._output.NOT_WRITTEN: the CLI tells it
        return receipt.with_path(None, f"receipt not written: {exc}")


def tool_facts() -> dict[str, Any]:
    """The receipt's ``tool`` section: pm's version and the version of the uv pm drives (asked
    once per process, :func:`pm.base.uv.uv_version`)."""
    from pm import __version__
    from pm.base.uv import uv_version  # loaded when an operation finishes, not to write a receipt

    return {"name": "hermes-pm", "version": __version__, "uv": uv_version()}


def write_to(folder: Path, receipt: Receipt) -> Path:
    """Write a finished ``receipt`` into ``folder`` (made when missing), not into a home: no
    ``latest.json``, nothing pruned (``catalog check --receipts DIR``: a gate run never becomes a
    home's latest receipt)."""
    data = receipt.written
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{_stamp(data)}-{data['kind']}-{os.getpid()}.json"
    encoded = (json.dumps(data, separators=(",", ":"), default=str) + "\n").encode()
    return Store(folder).write_bytes(path, encoded, mode=0o600)


def _stamp(data: dict[str, Any]) -> str:
    return str(data["started_at"]).replace(":", "").replace("-", "").replace(".", "")


def write_data(home: Path, data: dict[str, Any]) -> Path:
    folder = home / "pm" / "receipts"
    store = Store.for_home(home)
    path = folder / f"{_stamp(data)}-{data['kind']}-{os.getpid()}.json"
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
