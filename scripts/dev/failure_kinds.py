#!/usr/bin/env python3
"""Write the receipt schema's enum of failure kinds from pm's exception classes.

Every :class:`pm.base.errors.PmError` subclass carries its receipt ``kind``; this script imports every
module of pm, collects the kinds of all the subclasses (plus :data:`pm.ops.failures.OTHER_KINDS`,
the kinds no class carries) and writes them, sorted, as the ``enum`` of ``failure.kind`` in
``pm/schemas/receipt.schema.json``. ``--check`` only compares, and exits 1 when the schema differs
(tests/pm/test_failure_kinds.py runs the same comparison).

    python3 scripts/dev/failure_kinds.py [--check]
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "pm" / "schemas" / "receipt.schema.json"
#: The one line of the schema that holds failure.kind, and its enum.
_LINE = re.compile(r'^(\s*"kind": \{"description": "What failed.*"enum": )(\[[^\]]*\])(.*)$', re.M)


def error_classes() -> list[type]:
    """Every PmError subclass pm defines (each module imported once), the base included."""
    sys.path.insert(0, str(ROOT))
    import pm
    from pm.base.errors import PmError

    for module in pkgutil.walk_packages(pm.__path__, "pm."):
        if module.name != "pm.__main__":
            importlib.import_module(module.name)
    found, todo = [PmError], [PmError]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub.__module__.startswith("pm.") and sub not in found:
                found.append(sub)
                todo.append(sub)
    return found


def kinds() -> list[str]:
    from pm.ops.failures import OTHER_KINDS

    return sorted({cls.kind for cls in error_classes()} | set(OTHER_KINDS))


def in_schema(text: str) -> list[str]:
    match = _LINE.search(text)
    if match is None:
        raise SystemExit(f"{SCHEMA}: no failure.kind line with an enum")
    return list(json.loads(match.group(2)))


def main(argv: list[str]) -> int:
    text = SCHEMA.read_text(encoding="utf-8")
    wanted = kinds()
    if in_schema(text) == wanted:
        return 0
    if "--check" in argv:
        print(f"{SCHEMA}: failure.kind enum is {in_schema(text)}, the exception classes say {wanted}; "
              "run scripts/dev/failure_kinds.py", file=sys.stderr)
        return 1
    SCHEMA.write_text(_LINE.sub(lambda m: m.group(1) + json.dumps(wanted) + m.group(3), text, count=1), encoding="utf-8")
    print(f"{SCHEMA}: failure.kind enum written ({len(wanted)} kinds)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
