"""Issue 25: each error class carries its receipt ``kind`` (kebab-case, never a class name),
``outcome`` and exit code; the schema's enum of failure kinds is the one those classes give
(scripts/dev/failure_kinds.py writes it), and the kinds the schema's descriptions name are the
ones its enums allow."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType

import pytest

from pm.base.errors import PmError
from pm.ops import failure_of
from pm.records.receipt import OUTCOMES, SCHEMA_FILE

ROOT = Path(__file__).resolve().parents[2]
KEBAB = re.compile(r"[a-z]+(-[a-z]+)*")


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("failure_kinds", ROOT / "scripts" / "dev" / "failure_kinds.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SCRIPT = _script()
CLASSES = SCRIPT.error_classes()
SCHEMA = json.loads(SCHEMA_FILE.read_text())
FAILURE_KINDS = SCHEMA["properties"]["failure"]["oneOf"][1]["properties"]["kind"]["enum"]


def test_the_walk_finds_every_error_class_pm_defines() -> None:
    names = {cls.__name__ for cls in CLASSES}
    assert {"PmError", "UsageError", "ConfigError", "LockTimeout", "MetadataMismatch", "UvError", "BadName",
            "StoreError", "ConfigEditError", "InputsChanged", "RemovalRefused", "NoSuchProfile"} <= names
    assert len(CLASSES) >= 32


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
def test_every_error_class_carries_a_kebab_case_kind_in_the_schema(cls: type[PmError]) -> None:
    assert KEBAB.fullmatch(cls.kind), cls.kind
    assert cls.kind in FAILURE_KINDS
    assert cls.outcome in OUTCOMES and cls.outcome != "ok"
    assert cls.exit_code in (1, 2, 3)


def test_failure_of_reports_the_class_kind_outcome_and_exit_code() -> None:
    for cls in CLASSES:
        if cls.__name__ in ("Managed", "MissingProjects", "InputsChanged", "UnmetRequirements"):
            continue  # their sections need their data: tests/pm/ops/test_failures.py builds them
        error = cls.__new__(cls)  # the class's facts, without its constructor's data
        Exception.__init__(error, "message")
        failure = failure_of(error)
        assert (failure.kind, failure.outcome, failure.exit_code) == (cls.kind, cls.outcome, cls.exit_code)


def test_the_schema_enum_is_the_one_the_classes_give() -> None:
    assert FAILURE_KINDS == SCRIPT.kinds()
    assert SCRIPT.main(["--check"]) == 0


def _listed(description: str) -> set[str]:
    """The words a description lists (``a, b (why), c or d.``), parentheticals dropped."""
    body = re.sub(r"\([^)]*\)", "", description).split(":", 1)[-1].rstrip(". ")
    return {word.strip() for word in re.split(r",| or ", body) if word.strip()}


def test_the_kinds_the_schema_describes_are_the_ones_it_allows() -> None:
    operation = SCHEMA["properties"]["kind"]
    assert _listed(operation["description"]) == set(operation["enum"])
    outcome = SCHEMA["properties"]["outcome"]
    assert _listed(outcome["description"]) == set(outcome["enum"]) == set(OUTCOMES)
    assert "e.g." not in json.dumps(SCHEMA["properties"]["failure"])
