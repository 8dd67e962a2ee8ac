"""Attacks on `recover` (issue 39): a symlink where a run directory belongs, holding an interrupted run, is refused,
counted, named and makes the command exit 1 (on 557b96c it was passed over, exit 0, never named); a claim whose run
was never created (the claimer died between the claim and creating its run) is reported, named and counted, and
left standing: the source is never continued twice."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import pytest

from resume_contract.cli import main
from resume_contract.crash.continuation_source import HOST, IDS, SESSION_ID, SOURCE_RUN_ID, write_source
from resume_contract.errors import ContinuationRejected
from resume_contract.ledger.continuation_exec import ContinuationExecution, PreparedContinuation, prepare_continuation
from resume_contract.ledger.recovery import recover
from resume_contract.ledger.run_headers import claim_source
from resume_contract.ledger.store import RuntimeEventStore

RUNS = Path("sessions") / SESSION_ID / "runs"
CLAIM = Path("sessions") / SESSION_ID / "claims" / f"{SOURCE_RUN_ID}@4"


def _tree(root: Path) -> dict[str, tuple[str, int]]:
    return {p.relative_to(root).as_posix(): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns) for p in sorted(root.rglob("*")) if p.is_file()}


def _recover(workspace: Path, *extra: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["recover", "--workspace", str(workspace), *extra], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def _claimed(workspace: Path) -> None:
    """An executor claimed (in the workspace's own way, as far as its run's header) and stopped: `run-2` interrupted."""
    planned = prepare_continuation(workspace, SESSION_ID, SOURCE_RUN_ID, HOST, IDS)
    assert isinstance(planned, PreparedContinuation)
    with ContinuationExecution(workspace, planned, HOST) as execution:
        execution.revalidate()
        execution.claim()


def test_a_symlinked_run_directory_holding_an_interrupted_run_is_refused_named_and_exits_1(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write_source(outside)
    _claimed(outside)  # outside's run-2: claimed, interrupted (its header `created`)
    workspace = tmp_path / "ws"
    write_source(workspace)
    (workspace / RUNS / "run-2").symlink_to(outside / RUNS / "run-2", target_is_directory=True)
    before = _tree(outside)
    report = recover(workspace)
    assert [(run.run_id, run.outcome) for run in report.runs] == [("run-2", "refused")]
    assert "symlink" in report.runs[0].message
    code, out, _ = _recover(workspace)
    assert code == 1
    assert "1 refused" in out
    assert f"{SESSION_ID}/run-2: refused" in out and "symlink" in out
    code, out, _ = _recover(workspace, "--format", "json")
    assert code == 1
    assert [(run["runId"], run["outcome"]) for run in json.loads(out)["runs"]] == [("run-2", "refused")]
    assert _tree(outside) == before  # never followed: the interrupted run out there is untouched


def test_a_claim_whose_run_was_never_created_is_reported_and_stands(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    write_source(workspace)
    # The claimer's first write, and its last: it died before its run was created.
    claim_source(workspace, SESSION_ID, SOURCE_RUN_ID, 4, {"sessionId": SESSION_ID, "runId": "run-dead"})
    before = _tree(workspace)
    report = recover(workspace)
    assert report.runs == []
    assert [(claim.source_run_id, claim.high_water, claim.run_id, claim.outcome) for claim in report.claims] == [
        (SOURCE_RUN_ID, 4, "run-dead", "claim_without_run")
    ]
    code, out, _ = _recover(workspace)
    assert code == 0  # nothing to recover: the claim is reported, not an error
    assert "1 claim(s) to look at" in out
    assert f"{SESSION_ID}/claims/{SOURCE_RUN_ID}@4: claim without run" in out and "'run-dead'" in out
    code, out, _ = _recover(workspace, "--format", "json")
    assert code == 0
    assert [(claim["runId"], claim["outcome"], claim["sourceRuntimeEventHighWater"]) for claim in json.loads(out)["claims"]] == [
        ("run-dead", "claim_without_run", 4)
    ]
    assert _tree(workspace) == before  # never deleted, nothing written
    # The claim stands: the source is not continued a second time.
    planned = prepare_continuation(workspace, SESSION_ID, SOURCE_RUN_ID, HOST, IDS)
    assert isinstance(planned, PreparedContinuation)
    with ContinuationExecution(workspace, planned, HOST) as execution:
        with pytest.raises(ContinuationRejected) as rejected:
            execution.revalidate()
    assert rejected.value.code == "continuation_claim_conflict"


def test_a_claimer_that_died_after_locking_its_ledger_but_before_its_header_is_a_claim_without_a_run(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    write_source(workspace)
    claim_source(workspace, SESSION_ID, SOURCE_RUN_ID, 4, {"sessionId": SESSION_ID, "runId": "run-2"})
    with RuntimeEventStore(workspace) as store:
        store.hold(SESSION_ID, "run-2")  # its empty ledger, and no run.json
    report = recover(workspace)
    assert [(claim.run_id, claim.outcome) for claim in report.claims] == [("run-2", "claim_without_run")]
    assert _recover(workspace)[0] == 0


def test_a_claim_whose_run_exists_is_not_reported(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    write_source(workspace)
    _claimed(workspace)
    report = recover(workspace)
    assert [(run.run_id, run.outcome) for run in report.runs] == [("run-2", "recovered")]
    assert report.claims == []


def test_a_claim_that_cannot_be_read_is_refused_and_exits_1(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    write_source(workspace)
    (workspace / CLAIM).parent.mkdir()
    (workspace / CLAIM).write_text("{torn")
    before = _tree(workspace)
    code, out, _ = _recover(workspace)
    assert code == 1
    assert f"{SESSION_ID}/claims/{SOURCE_RUN_ID}@4: refused" in out
    assert _tree(workspace) == before


def test_a_symlinked_claims_directory_is_refused_and_never_followed(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    write_source(workspace)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / f"{SOURCE_RUN_ID}@4").write_text(json.dumps({"runId": "run-dead"}))
    (workspace / CLAIM).parent.symlink_to(outside, target_is_directory=True)
    code, out, _ = _recover(workspace)
    assert code == 1
    assert "symlink" in out and "run-dead" not in out
