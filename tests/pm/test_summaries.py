"""What sync and check print, rendered from their receipts (pm.cli._summaries): the same text for
an answer found now and one given by the shortcut."""

from __future__ import annotations

from pm.cli import _summaries


def test_a_sync_that_built_says_so_and_that_processes_must_restart() -> None:
    data = {"message": "built and selected generation g2",
            "generation": {"id": "g2", "path": "/h/pm/generations/g2", "restart_required": True}}
    assert _summaries.synced(data) == ["built and selected generation g2 (/h/pm/generations/g2)",
                                       "running hermes processes keep their generation until they restart"]


def test_a_no_op_sync_names_the_generation_only() -> None:
    data = {"message": "already in sync", "generation": {"id": "g1", "path": "/g1", "restart_required": False}}
    assert _summaries.synced(data) == ["already in sync: generation g1 (/g1)"]


def test_readiness_is_a_table_of_origins() -> None:
    data = {"generation": {"id": "g1"}, "readiness": {
        "ready": False, "problems": ["inputs changed"],
        "plugins": [{"name": "core", "ready": True, "detail": "2 requirements satisfied"},
                    {"name": "maps", "ready": False, "detail": "requires alpha>=2; installed: alpha 1.0"}]}}
    assert _summaries.readiness(data) == "\n".join([
        "not ready: generation g1",
        "  inputs changed",
        "ORIGIN  VERDICT    REASON",
        "core    ready      2 requirements satisfied",
        "maps    NOT READY  requires alpha>=2; installed: alpha 1.0"])


def test_no_generation_is_one_line() -> None:
    data = {"generation": None, "readiness": {"ready": False, "plugins": [],
                                              "problems": ["no generation is selected; run `hermes pm sync`"]}}
    assert _summaries.readiness(data) == "not ready: no generation is selected; run `hermes pm sync`"
