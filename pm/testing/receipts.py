"""Receipt validation for tests: every receipt a test produces is checked against the JSON Schema
shipped in the package (``pm/schemas/receipt.schema.json``)."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from pm.records.receipt import SCHEMA_FILE


@lru_cache(maxsize=1)
def _validator() -> Any:
    import jsonschema  # type: ignore[import-untyped]  # a test-only dependency (the `test` extra)

    schema = json.loads(SCHEMA_FILE.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())


def assert_valid_receipt(receipt: dict[str, Any]) -> None:
    errors = sorted(_validator().iter_errors(receipt), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors)
