"""Attack (issue 39, promise 3): one crashed run continued twice by executors racing for real.

Two or three real processes each prepare a continuation of the same source (the reference executor's path:
`prepare_continuation`, then `ContinuationExecution.revalidate()` and `claim()`), wait at a barrier, and are let
go at once. Whatever runs concurrently, exactly one of them may claim the source at its high-water; every loser
is rejected `continuation_claim_conflict` (or `target_run_conflict`, only when it shares the winner's run id),
never a raw error, and the workspace holds exactly one run continuing the source. Hundreds of rounds, counted:
on 557b96c (a claim keyed by the new run) some rounds have two winners.

The cheaper, deterministic properties of the claim (taken before anything else of the new run is written, named
by the source and its high-water, its content naming the claiming run, a symlink never followed) follow.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from resume_contract.crash.continuation_source import HOST, IDS, SESSION_ID, SOURCE_RUN_ID, write_source
from resume_contract.errors import ContinuationRejected, EscapesWorkspace
from resume_contract.ledger.continuation_exec import ContinuationExecution, PreparedContinuation, prepare_continuation
from resume_contract.ledger.run_headers import RunHeaderStore

RUNS = Path("sessions") / SESSION_ID / "runs"
CLAIMS = Path("sessions") / SESSION_ID / "claims"
CLAIM = CLAIMS / f"{SOURCE_RUN_ID}@4"  # the source's high-water is 4 (continuation_source.EVENTS)

ROUNDS = {2: 150, 3: 120}
SHARED_ROUNDS = 60  # three processes, two of which share one run id


def _worker(connection: Any, barrier: Any) -> None:
    """One racing executor, kept for every round: prepare, wait at the barrier, revalidate and claim."""
    while True:
        task = connection.recv()
        if task is None:
            return
        workspace, ids = task
        prepared: PreparedContinuation | None = None
        outcome: tuple[str, str | None, str]
        try:
            planned = prepare_continuation(workspace, SESSION_ID, SOURCE_RUN_ID, HOST, ids)
            if isinstance(planned, PreparedContinuation):
                prepared = planned
        except Exception as error:  # reported, and the barrier still reached: the others are not left waiting
            outcome = ("error", None, f"prepare: {type(error).__name__}: {error}")
        try:
            barrier.wait(timeout=60)
        except threading.BrokenBarrierError:
            connection.send(("error", None, "the barrier broke"))
            continue
        if prepared is None:
            connection.send(outcome if "outcome" in locals() else ("error", None, "prepare: a park plan"))
            continue
        run_id = prepared.continuation["runId"]
        try:
            with ContinuationExecution(workspace, prepared, HOST) as execution:
                execution.revalidate()
                execution.claim()
                execution.start()  # the winner's run goes on: its continuation-start event
            outcome = ("won", run_id, "")
        except ContinuationRejected as rejected:
            outcome = ("rejected", run_id, rejected.code)
        except Exception as error:
            outcome = ("error", run_id, f"{type(error).__name__}: {error}")
        connection.send(outcome)


class _Racers:
    """`count` forked processes and a barrier of that many: each round, all are released at once."""

    def __init__(self, count: int) -> None:
        context = multiprocessing.get_context("fork")
        self.barrier = context.Barrier(count)
        self.connections = []
        self.processes = []
        for _ in range(count):
            parent, child = context.Pipe()
            process = context.Process(target=_worker, args=(child, self.barrier), daemon=True)
            process.start()
            self.connections.append(parent)
            self.processes.append(process)

    def race(self, workspace: Path, ids: list[dict[str, str] | None]) -> list[tuple[str, str | None, str]]:
        for connection, own in zip(self.connections, ids):
            connection.send((str(workspace), own))
        results = []
        for connection in self.connections:
            if not connection.poll(120):
                raise AssertionError("a racing executor did not answer")
            results.append(connection.recv())
        return results

    def close(self) -> None:
        for connection in self.connections:
            connection.send(None)
        for process in self.processes:
            process.join(10)
            if process.is_alive():
                process.kill()


def _continuations(workspace: Path) -> list[str]:
    """The runs whose header continues the source at its high-water."""
    found = []
    for run_id in RunHeaderStore(workspace).runs(SESSION_ID):
        header = RunHeaderStore(workspace).read_or_none(SESSION_ID, run_id) or {}
        source = header.get("continuationSource")
        if isinstance(source, dict) and source.get("sourceRunId") == SOURCE_RUN_ID and source.get("sourceRuntimeEventHighWater") == 4:
            found.append(run_id)
    return found


def _ids(round_number: int, index: int) -> dict[str, str]:
    return {"invocationId": f"invocation-r{round_number}-{index}", "runId": f"run-r{round_number}-{index}", "turnId": f"turn-r{round_number}-{index}"}


def _rounds(tmp_path: Path, processes: int, rounds: int, *, shared: bool) -> None:
    base = tmp_path / "source"
    write_source(base)
    racers = _Racers(processes)
    tally: Counter[str] = Counter()
    bad: list[str] = []
    try:
        for number in range(rounds):
            workspace = tmp_path / f"round-{number}"
            shutil.copytree(base, workspace)
            if shared:  # two share a run id (the second and third), as two executors handed the same ids would
                ids: list[dict[str, str] | None] = [_ids(number, 0), _ids(number, 1), _ids(number, 1)]
            else:
                ids = [None] * processes  # the default: each executor's own fresh ids
            results = racers.race(workspace, ids)
            winners = [run_id for outcome, run_id, _ in results if outcome == "won"]
            continuing = _continuations(workspace)
            tally["rounds"] += 1
            tally[f"{len(winners)} winner(s)"] += 1
            problems = []
            if len(winners) != 1:
                problems.append(f"{len(winners)} winners")
            if len(continuing) != 1:
                problems.append(f"{len(continuing)} runs continue the source: {continuing}")
            for outcome, run_id, detail in results:
                if outcome == "error":
                    tally["raw errors"] += 1
                    problems.append(f"a raw error: {detail}")
                elif outcome == "rejected":
                    allowed = {"continuation_claim_conflict"} | ({"target_run_conflict"} if run_id in winners else set())
                    if detail not in allowed:
                        tally[f"rejected {detail}"] += 1
                        problems.append(f"{run_id} rejected {detail}, expected one of {sorted(allowed)}")
            if problems:
                bad.append(f"round {number}: " + "; ".join(problems))
            shutil.rmtree(workspace)
    finally:
        racers.close()
    print(f"\n{processes} processes{' (two sharing a run id)' if shared else ''}: {dict(tally)}")
    assert not bad, f"{len(bad)} of {rounds} rounds went wrong ({dict(tally)}):\n" + "\n".join(bad[:20])


@pytest.mark.slow
@pytest.mark.parametrize("processes", sorted(ROUNDS))
def test_racing_executors_with_fresh_ids_continue_a_source_exactly_once(tmp_path: Path, processes: int) -> None:
    _rounds(tmp_path, processes, ROUNDS[processes], shared=False)


@pytest.mark.slow
def test_racing_executors_two_of_which_share_a_run_id_continue_a_source_exactly_once(tmp_path: Path) -> None:
    _rounds(tmp_path, 3, SHARED_ROUNDS, shared=True)


# -- the claim, deterministically ------------------------------------------------------------------------------


@pytest.fixture
def prepared(tmp_path: Path) -> tuple[Path, PreparedContinuation]:
    workspace = tmp_path / "ws"
    write_source(workspace)
    planned = prepare_continuation(workspace, SESSION_ID, SOURCE_RUN_ID, HOST, IDS)
    assert isinstance(planned, PreparedContinuation), planned
    return workspace, planned


def _files(workspace: Path) -> set[str]:
    return {path.relative_to(workspace).as_posix() for path in workspace.rglob("*")}


def test_the_claim_is_a_file_keyed_by_the_source_and_its_high_water_naming_the_claiming_run(prepared) -> None:
    workspace, planned = prepared
    with ContinuationExecution(workspace, planned, HOST) as execution:
        execution.revalidate()
        execution.claim()
    claim = json.loads((workspace / CLAIM).read_text())
    assert claim["runId"] == "run-2"
    assert (claim["sourceRunId"], claim["sourceRuntimeEventHighWater"], claim["sessionId"]) == (SOURCE_RUN_ID, 4, SESSION_ID)
    assert os.listdir(workspace / CLAIMS) == [CLAIM.name]  # no temporary file left beside it


def test_a_claim_taken_after_revalidation_loses_with_nothing_written_for_the_new_run(prepared) -> None:
    workspace, planned = prepared
    other = {**IDS, "runId": "run-9", "invocationId": "invocation-9", "turnId": "turn-9"}
    rival = prepare_continuation(workspace, SESSION_ID, SOURCE_RUN_ID, HOST, other)
    assert isinstance(rival, PreparedContinuation)
    with ContinuationExecution(workspace, planned, HOST) as execution, ContinuationExecution(workspace, rival, HOST) as racer:
        execution.revalidate()
        racer.revalidate()
        racer.claim()  # the rival claims first; its run exists from here
        before = _files(workspace)
        with pytest.raises(ContinuationRejected) as rejected:
            execution.claim()
    assert rejected.value.code == "continuation_claim_conflict"
    assert "run-9" in str(rejected.value)
    assert _files(workspace) == before
    assert not (workspace / RUNS / "run-2").exists()  # nothing, not even the directory, of the loser's run


def test_a_claim_whose_run_was_never_created_still_stops_a_second_continuation(prepared) -> None:
    workspace, planned = prepared
    (workspace / CLAIMS).mkdir()
    (workspace / CLAIM).write_text(json.dumps({"runId": "run-dead", "sessionId": SESSION_ID}))
    before = _files(workspace)
    with ContinuationExecution(workspace, planned, HOST) as execution:
        with pytest.raises(ContinuationRejected) as rejected:
            execution.revalidate()
    assert rejected.value.code == "continuation_claim_conflict"
    assert "run-dead" in str(rejected.value)
    assert _files(workspace) == before


def test_a_claim_naming_the_same_run_id_is_target_run_conflict(prepared) -> None:
    workspace, planned = prepared
    with ContinuationExecution(workspace, planned, HOST) as first:
        first.revalidate()
        first.claim()
    with ContinuationExecution(workspace, planned, HOST) as second:
        with pytest.raises(ContinuationRejected) as rejected:
            second.claim()  # (past re-validation: the claim itself decides)
    assert rejected.value.code == "target_run_conflict"


def test_an_unreadable_claim_is_a_claim(prepared) -> None:
    workspace, planned = prepared
    (workspace / CLAIMS).mkdir()
    (workspace / CLAIM).write_text("{torn")
    with ContinuationExecution(workspace, planned, HOST) as execution:
        with pytest.raises(ContinuationRejected) as rejected:
            execution.revalidate()
        with pytest.raises(ContinuationRejected) as lost:
            execution.claim()
    assert rejected.value.code == lost.value.code == "continuation_claim_conflict"
    assert not (workspace / RUNS / "run-2").exists()


def test_a_symlinked_claims_directory_is_never_followed(prepared, tmp_path: Path) -> None:
    workspace, planned = prepared
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / CLAIMS).symlink_to(outside, target_is_directory=True)
    with ContinuationExecution(workspace, planned, HOST) as execution:
        with pytest.raises(ContinuationRejected) as rejected:
            execution.revalidate()
        with pytest.raises(EscapesWorkspace):
            execution.claim()
    assert rejected.value.code == "continuation_claim_conflict"
    assert os.listdir(outside) == []
    assert not (workspace / RUNS / "run-2").exists()


def test_a_symlinked_claim_is_never_followed(prepared, tmp_path: Path) -> None:
    workspace, planned = prepared
    target = tmp_path / "elsewhere.json"
    target.write_text(json.dumps({"runId": "run-2"}))
    (workspace / CLAIMS).mkdir()
    (workspace / CLAIM).symlink_to(target)
    with ContinuationExecution(workspace, planned, HOST) as execution:
        with pytest.raises(ContinuationRejected) as rejected:
            execution.claim()
    assert rejected.value.code == "continuation_claim_conflict"  # a link there is a claim, never read through
    assert target.read_text() == json.dumps({"runId": "run-2"})
