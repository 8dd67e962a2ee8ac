"""The workspace audit summarizes a run from its walk's verdict (`Walk.verdict`, `Walk.unsettled`), without making
its plan: each summary equals the one made from the run's full plan (`plan_run`), on random ledgers, with and
without an operation store (small chunks), with an expected high-water or none."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_properties import wire_ledgers

from resume_contract.contract import active
from resume_contract.ledger import workspace as workspace_module
from resume_contract.ledger.audit import VERIFY_LISTED, RunSummary, summarize
from resume_contract.ledger.workspace import plan_run, walk_run


def _from_plan(workspace: Path, path: Path) -> RunSummary:
    plan = plan_run(workspace, "s", "r", refuse_live=True)
    never_ran = active().table.never_ran_statuses  # (a call that provably never started is nothing to verify, as the plan's text says)
    unsettled = [o for o in plan.operations if o.response_runtime_event_id is None and o.status not in never_ran][:VERIFY_LISTED]
    return RunSummary(
        "s",
        "r",
        str(path),
        plan.disposition,
        plan.source_runtime_event_high_water,
        plan.rejection_reasons,
        diagnostics=tuple(dict.fromkeys(diagnostic.code for diagnostic in plan.diagnostics)),
        to_verify=tuple(f"{o.tool_name} call {o.tool_call_id}" for o in unsettled),
    )


@settings(max_examples=120, deadline=None)
@given(wire_ledgers(max_size=80), st.sampled_from([150, 1 << 18]))
def test_an_audited_run_is_summarized_as_its_full_plan_says(wires: list[dict], chunk_bytes: int) -> None:
    wires = [{**row, "sessionId": "s", "runId": "r"} for row in wires]
    with tempfile.TemporaryDirectory() as directory, pytest.MonkeyPatch.context() as patch:
        patch.setattr(workspace_module, "CHUNK_BYTES", chunk_bytes)  # 150 bytes: most operations go to a store
        workspace = Path(directory)
        path = workspace / "sessions" / "s" / "runs" / "r" / "runtime-events.jsonl"
        path.parent.mkdir(parents=True)
        path.write_text("".join(json.dumps(row, separators=(",", ":")) + "\n" for row in wires))
        assert summarize((workspace, "s", "r", path)) == _from_plan(workspace, path)


def test_a_verdict_with_an_expected_high_water_is_the_plans(tmp_path: Path) -> None:
    path = tmp_path / "sessions" / "s" / "runs" / "r" / "runtime-events.jsonl"
    path.parent.mkdir(parents=True)
    row = {"id": "e0", "ts": 0, "partial": False, "sessionId": "s", "invocationId": "i", "runId": "r", "turnId": "t",
           "author": "agent", "role": "model", "content": {"kind": "function_call", "id": "c", "name": "n", "args": {}}}
    path.write_text(json.dumps(row) + "\n")
    walk, high_water = walk_run(tmp_path, "s", "r")
    plan = plan_run(tmp_path, "s", "r", 5)
    verdict = walk.verdict(high_water, 5)
    assert high_water == 1
    assert (verdict.disposition, verdict.diagnostics, verdict.rejection_reasons, verdict.requires_verification) == (
        plan.disposition, plan.diagnostics, plan.rejection_reasons, plan.requires_verification
    )
    assert plan.diagnostics[0].detail == {"expectedRuntimeEventHighWater": 5, "actualRuntimeEventHighWater": 1}


def test_a_run_with_snapshots_is_audited_with_the_high_water_of_its_merged_events(tmp_path: Path) -> None:
    # Two committed rows and one snapshot the reference merges after the first: three events, as `read_run` holds them.
    from test_snapshots import row, run_dir, snapshot, streaming

    directory = run_dir(tmp_path, row("u1"), row("u2"))
    snapshot(directory, "a.partial", {"version": 1, "event": streaming("p", "m"), "afterEventId": "u1"}, "hello")
    workspace = tmp_path / "ws"
    summary = summarize((workspace, "s1", "r1", directory / "runtime-events.jsonl"))
    assert (summary.status, summary.high_water) == ("safe_replay", 3)
    assert plan_run(workspace, "s1", "r1").source_runtime_event_high_water == 3


def test_runs_opened_in_their_kept_session_are_summarized_as_runs_opened_alone(tmp_path: Path) -> None:
    # OpenSessions keeps sessions/<S>/runs/ open between runs: a run that is a link, a file, has no ledger or is
    # missing, and a session that is a link, are each said as when every run is opened step by step.
    from resume_contract.ledger.audit import discover
    from resume_contract.ledger.workspace import OpenSessions

    row = {"id": "e0", "ts": 0, "partial": False, "invocationId": "i", "turnId": "t", "author": "user", "role": "user",
           "content": {"kind": "text", "text": "x"}}
    for session in ("s1", "s2"):
        for run in ("r1", "r2"):
            ledger = tmp_path / "sessions" / session / "runs" / run / "runtime-events.jsonl"
            ledger.parent.mkdir(parents=True)
            ledger.write_text(json.dumps({**row, "sessionId": session, "runId": run}) + "\n")
    (tmp_path / "sessions" / "s1" / "runs" / "r3").symlink_to(tmp_path / "sessions" / "s1" / "runs" / "r1")
    (tmp_path / "sessions" / "s1" / "runs" / "r4").write_text("")
    (tmp_path / "sessions" / "s2" / "runs" / "r5").mkdir()
    (tmp_path / "sessions" / "s3").symlink_to(tmp_path / "sessions" / "s2")
    jobs = discover(tmp_path).ledgers + [(tmp_path, "s3", "r1", tmp_path / "sessions" / "s3" / "runs" / "r1" / "runtime-events.jsonl"),
                                         (tmp_path, "s2", "r9", tmp_path / "sessions" / "s2" / "runs" / "r9" / "runtime-events.jsonl")]
    alone = [summarize(job) for job in jobs]
    fds = len(os.listdir("/proc/self/fd"))
    sessions = OpenSessions(tmp_path)
    try:
        kept = [summarize(job, None, None, sessions) for job in jobs]
    finally:
        sessions.close()
    assert kept == alone
    assert len(os.listdir("/proc/self/fd")) == fds
    assert [summary.status for summary in alone] == ["safe_replay", "safe_replay", "unreadable", "unreadable", "safe_replay", "safe_replay",
                                                     "unreadable", "unreadable", "unreadable"]
    assert "symlink" in alone[2].error and "symlink" in alone[7].error
