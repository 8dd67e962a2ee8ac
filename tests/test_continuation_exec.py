"""The reference continuation executor (ledger/continuation_exec.py): a continuation executed through the real
stores writes exactly the claim, the start event, the run's events, its terminal event and the terminal header,
never the source; each re-validation failure is rejected with the reference's stable code, with nothing written;
a step out of the lifecycle's order is refused by the state machine before it writes."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from statemachine.exceptions import TransitionNotAllowed

from resume_contract.crash.continuation_loop import execute
from resume_contract.crash.continuation_source import HOST, IDS, SESSION_ID, SOURCE_RUN_ID, write_source
from resume_contract.crash.failpoints import Failpoints
from resume_contract.errors import ContinuationRejected
from resume_contract.ledger.continuation_exec import ContinuationExecution, PreparedContinuation, prepare_continuation
from resume_contract.ledger.continuation_run import plan_continuation
from resume_contract.ledger.run_headers import RunHeaderStore

RUNS = Path("sessions") / SESSION_ID / "runs"


def _tree(workspace: Path) -> dict[str, tuple[str, int]]:
    return {
        path.relative_to(workspace).as_posix(): (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns)
        for path in sorted(workspace.rglob("*"))
        if path.is_file()
    }


@pytest.fixture
def prepared(tmp_path: Path) -> tuple[Path, PreparedContinuation]:
    workspace = tmp_path / "ws"
    write_source(workspace)
    planned = prepare_continuation(workspace, SESSION_ID, SOURCE_RUN_ID, HOST, IDS)
    assert isinstance(planned, PreparedContinuation), planned
    return workspace, planned


def test_a_continuation_writes_the_claim_start_run_terminal_and_header_and_never_the_source(prepared) -> None:
    workspace, planned = prepared
    source = workspace / RUNS / SOURCE_RUN_ID
    before = _tree(source)
    assert execute(workspace, planned, HOST, Failpoints({})) == [
        "after_run_created",
        "after_continuation_start_committed",
        "after_terminal_event_committed",
        "after_terminal_header_committed",
    ]
    assert _tree(source) == before
    header = json.loads((workspace / RUNS / "run-2" / "run.json").read_text())
    assert header["status"] == "completed"
    assert (header["parentRunId"], header["parentTurnId"]) == ("run-1", "turn-1")
    assert header["continuationSource"] == {
        "sourceInvocationId": "invocation-1",
        "sourceRunId": "run-1",
        "sourceTurnId": "turn-1",
        "sourceRuntimeEventHighWater": 4,
    }
    rows = [json.loads(line) for line in (workspace / RUNS / "run-2" / "runtime-events.jsonl").read_text().splitlines()]
    start = rows[0]
    assert (start["role"], start["author"], start["partial"]) == ("system", "system", False)
    assert "content" not in start
    assert start["actions"] == {"stateDelta": {"continuationStart": True}}
    assert start["refs"] == header["continuationSource"]
    assert [row.get("actions", {}).get("endInvocation") for row in rows] == [None, None, True]
    assert {(row["invocationId"], row["runId"], row["turnId"]) for row in rows} == {("invocation-2", "run-2", "turn-2")}
    # Planning the source again finds the claim.
    assert plan_continuation(workspace, SESSION_ID, SOURCE_RUN_ID, HOST, IDS).rejection_reasons == ("continuation_already_exists",)


def test_a_step_out_of_the_lifecycles_order_is_refused_before_it_writes(prepared) -> None:
    workspace, planned = prepared
    before = _tree(workspace)
    with ContinuationExecution(workspace, planned, HOST) as execution:
        with pytest.raises(TransitionNotAllowed):
            execution.start()  # the start event before the claim
        with pytest.raises(TransitionNotAllowed):
            execution.seal()
    assert _tree(workspace) == before


def _header(workspace: Path, **changes) -> None:
    store = RunHeaderStore(workspace)
    store.write(SESSION_ID, SOURCE_RUN_ID, {**store.read(SESSION_ID, SOURCE_RUN_ID), **changes})


def _grow(workspace: Path) -> None:
    path = workspace / RUNS / SOURCE_RUN_ID / "runtime-events.jsonl"
    last = json.loads(path.read_text().splitlines()[-1])
    with path.open("a") as ledger:
        ledger.write(json.dumps({**last, "id": "event-5", "ts": last["ts"] + 1, "status": "failed"}, separators=(",", ":")) + "\n")


def _replace_ledger(workspace: Path) -> None:
    path = workspace / RUNS / SOURCE_RUN_ID / "runtime-events.jsonl"
    copy = path.with_name("copy.jsonl")
    copy.write_bytes(path.read_bytes())
    os.replace(copy, path)  # the same bytes in another file (made while the first one still exists)


def _rewrite_in_place(workspace: Path) -> None:
    path = workspace / RUNS / SOURCE_RUN_ID / "runtime-events.jsonl"
    data = path.read_bytes()
    with path.open("r+b") as ledger:  # the same file and length; the user's text differs
        ledger.write(data.replace(b"list the files", b"list the FILES"))


def _other_claim(workspace: Path) -> None:
    RunHeaderStore(workspace).write(SESSION_ID, "run-7", {
        "runId": "run-7",
        "status": "created",
        "continuationSource": {"sourceInvocationId": "invocation-1", "sourceRunId": "run-1", "sourceTurnId": "turn-1", "sourceRuntimeEventHighWater": 4},
    })


def _target_exists(workspace: Path) -> None:
    (workspace / RUNS / "run-2").mkdir()


CHANGES = {
    "source_identity_changed": (lambda ws: _header(ws, invocationId="invocation-9"), {}),
    "source_terminal_changed": (lambda ws: _header(ws, status="cancelled"), {}),
    "source_cwd_changed": (lambda ws: _header(ws, cwd="/elsewhere"), {}),
    "source_high_water_changed": (_grow, {}),
    "source_ledger_identity_changed": (_replace_ledger, {}),
    "source_replay_changed": (_rewrite_in_place, {}),
    "workspace_identity_changed": (None, {"currentWorkspaceIdentity": "workspace-2"}),
    "background_operation_started": (None, {"backgroundOperationsSettled": False}),
    "tool_catalog_changed": (None, {"availableToolNames": ["Bash", "Fetch"]}),
    "workspace_checkpoint_changed": (None, {"workspaceCheckpoint": {"ref": "ckpt-1", "restored": True, "runtimeEventHighWater": 4}}),
    "continuation_claim_conflict": (_other_claim, {}),
    "target_run_conflict": (_target_exists, {}),
}


@pytest.mark.parametrize("code", list(CHANGES))
def test_each_change_since_planning_is_rejected_with_its_code_and_nothing_written(prepared, code: str) -> None:
    workspace, planned = prepared
    change, host_changes = CHANGES[code]
    if change is not None:
        change(workspace)
    before = _tree(workspace)
    with ContinuationExecution(workspace, planned, {**HOST, **host_changes}) as execution:
        with pytest.raises(ContinuationRejected) as rejected:
            execution.revalidate()
    assert rejected.value.code == code
    assert _tree(workspace) == before


def test_a_claim_lost_to_a_header_written_after_revalidation_is_target_run_conflict(prepared) -> None:
    workspace, planned = prepared
    with ContinuationExecution(workspace, planned, HOST) as execution:
        execution.revalidate()
        RunHeaderStore(workspace).write(SESSION_ID, "run-2", {"runId": "run-2", "status": "running"})
        with pytest.raises(ContinuationRejected) as rejected:
            execution.claim()
    assert rejected.value.code == "target_run_conflict"
    assert RunHeaderStore(workspace).read(SESSION_ID, "run-2") == {"runId": "run-2", "status": "running"}
    assert os.path.getsize(workspace / RUNS / "run-2" / "runtime-events.jsonl") == 0  # no event of ours
