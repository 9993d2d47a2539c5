"""The operations: what ``hermes pm …``, ``hermes plugins …``, ``hermes update`` and the host run.

Each is a plain function over a home, typed arguments, frozen :class:`Options` and a
:class:`Reporter` (silent by default); each is one :func:`transaction` and returns its finished,
written receipt (in a :class:`Result`). Nothing here prints or parses a command line: the CLIs
(:mod:`pm.cli`, the host's ``*_cli`` modules) parse into Options, call an operation and render
its receipt.

- :mod:`.options` — Options, Reporter, SILENT, Notices
- :mod:`.transaction` — transaction(): environment home → managed check → lock → gather → receipt
- :mod:`.failures` — failure_of(): one failure kind and outcome per exception type
- :mod:`.receipts` — writing finished receipts
- :mod:`.resolve` — resolve (dry run) and the resolve step of the others
- :mod:`.sync` — sync, sync_from, and the one reuse-or-build-then-select rule
- :mod:`.admit` — enable (admission) and disable
- :mod:`.update` — update and the start-up lazy install
- :mod:`.install` — install and remove
- :mod:`.outdated` — outdated: per pin, the upgrade, the newest release and who holds it back
  (:mod:`.holders`)
- :mod:`.catalog_check` — the catalog's gate: its passes (:mod:`.catalog_judge`) and per-entry
  verdicts (:mod:`.catalog_verdicts`)
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pm.ops.failures import Failure, failure_of
    from pm.ops.options import SILENT, Notices, Options, Reporter
    from pm.ops.transaction import Result, Transaction, transaction

#: Where each public name lives, loaded on first use (PEP 562): writing a receipt
#: (:mod:`.receipts`, which :mod:`pm.cli.shortcut` uses) must not load the transaction and its inputs.
_LAZY = {"Failure": ".failures", "failure_of": ".failures", "SILENT": ".options", "Notices": ".options",
         "Options": ".options", "Reporter": ".options", "Result": ".transaction",
         "Transaction": ".transaction", "transaction": ".transaction"}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_LAZY[name], __name__), name)


__all__ = ["SILENT", "Failure", "Notices", "Options", "Reporter", "Result", "Transaction", "failure_of",
           "transaction"]
