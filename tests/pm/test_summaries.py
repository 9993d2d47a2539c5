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


def test_a_refusal_is_worded_once_for_the_cli_and_the_dashboard(capsys) -> None:  # type: ignore[no-untyped-def]
    """pm.ops.messages writes the sentences; the CLI paints and prints them (the dashboard shows them)."""
    from pm.ops.messages import failure_said, refusal_lead

    conflict = {"plugins": ["charts", "journal"], "message": "Plugin 'charts' cannot live with plugin(s) 'journal'."}
    assert refusal_lead(conflict, "charts") == "plugin 'charts' cannot be added"
    assert refusal_lead(conflict, None) == "the selected plugins cannot live together in one environment"
    _summaries.tell_refusal(conflict, "charts", [])
    assert capsys.readouterr().err.splitlines() == ["conflict: plugin 'charts' cannot be added",
                                                    f"  {conflict['message']}"]
    assert failure_said("refused", {"message": "refused: managed home"}) == ("refused", "managed home")
    assert failure_said("failed", {"message": "index down"}) == ("error", "index down")
    assert failure_said("failed", None) == ("error", "")
