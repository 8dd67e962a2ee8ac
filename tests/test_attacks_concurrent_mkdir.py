"""Attack (issue 39): many runs of a NEW session writing their first events at once.

The promise: creating a run's directories is idempotent under concurrency, so no append is ever lost to a racing
`mkdir` (on 557b96c, the loser of the race for `sessions/`, `<S>/` or `runs/` got `FileExistsError` and its append
was lost). Still, nothing is ever followed: a symlink or a file that takes a directory's name is refused.

The race is run for real: PROCESSES processes, released together by a gate, each append the first
events of RUNS distinct runs of one new session in a fresh workspace; ROUNDS rounds, each in a fresh workspace.
Every ledger is then read back, and every append must have been acknowledged and be there.
"""

from __future__ import annotations

import json
import mmap
import multiprocessing
import os
import select
import sys
from pathlib import Path

import pytest

from resume_contract.errors import EscapesWorkspace
from resume_contract.ledger.containment import open_directory

PROCESSES = 8
RUNS = 20
ROUNDS = 30
SESSION = "s-new"
EVENTS_PER_RUN = 2  # the first two events of each run: a user's text and the agent's first call


def _wire(run_id: str, index: int) -> dict:
    wire = {"id": f"{run_id}-e{index}", "ts": 1, "partial": False, "sessionId": SESSION, "invocationId": "i1", "runId": run_id, "turnId": "t1"}
    if index == 0:
        return {**wire, "author": "user", "role": "user", "content": {"kind": "text", "text": "hello"}}
    call = {"kind": "function_call", "id": f"c{index}", "name": "write_file", "args": {"n": index}}
    return {**wire, "author": "agent", "role": "model", "content": call}


def _writer(worker: int, workspaces: list[str], ready: int, gates: mmap.mmap, results: str) -> None:
    """One process: for each round, say it is ready and wait at the gate (a byte of memory shared with the parent,
    watched without sleeping, so that the processes on a CPU when it opens all leave it at once), then append the
    first events of its RUNS runs."""
    from resume_contract.contract import event_from_wire
    from resume_contract.ledger.store import RuntimeEventStore

    with RuntimeEventStore(Path(results, f"warm-{worker}")) as warm:  # every lazy import done before the first gate
        warm.append(event_from_wire(_wire("warm", 0)))
    for round_index, workspace in enumerate(workspaces):
        acknowledged: list[list[str]] = []
        failed: list[list[str]] = []
        events = [[event_from_wire(_wire(f"w{worker}-r{run}", index)) for run in range(RUNS)] for index in range(EVENTS_PER_RUN)]
        os.write(ready, b"r")
        while gates[round_index] == 0:  # the gate opens when the parent sets its byte
            pass
        store = RuntimeEventStore(workspace)
        try:
            for batch in events:
                for event in batch:
                    run_id = event.run_id
                    try:
                        if store.append(event):
                            acknowledged.append([run_id, event.id])
                        else:
                            failed.append([run_id, event.id, "an exact retry of an event never appended"])
                    except Exception as error:  # a lost append: counted, the next one tried
                        failed.append([run_id, event.id, f"{type(error).__name__}: {error}"])
        finally:
            store.close()
        Path(results, f"{round_index}-{worker}.json").write_text(json.dumps({"acknowledged": acknowledged, "failed": failed}))


def _race(tmp_path: Path) -> dict:
    """Run every round; return what was attempted, acknowledged, failed, and acknowledged but not read back."""
    from resume_contract.errors import LedgerMissing
    from resume_contract.ledger.store import RuntimeEventStore

    workspaces = [str(tmp_path / f"ws{round_index}") for round_index in range(ROUNDS)]  # fresh: not even created yet
    results = tmp_path / "results"
    results.mkdir()
    context = multiprocessing.get_context("fork")
    ready_r, ready_w = os.pipe()
    gates = mmap.mmap(-1, len(workspaces))  # shared with the forked writers
    processes = [context.Process(target=_writer, args=(worker, workspaces, ready_w, gates, str(results))) for worker in range(PROCESSES)]
    try:
        for process in processes:
            process.start()
        for round_index in range(len(workspaces)):
            arrived = 0
            while arrived < PROCESSES:  # every process at the gate
                if select.select([ready_r], [], [], 1.0)[0]:
                    arrived += len(os.read(ready_r, PROCESSES - arrived))
                else:
                    assert all(process.exitcode is None for process in processes), "a writer process died before the gate"
            gates[round_index] = 1  # open the gate: all at once
    finally:
        gates[:] = b"\x01" * len(workspaces)  # (on a failure, no writer is left waiting)
        for process in processes:
            process.join(timeout=300)
        os.close(ready_r)
        os.close(ready_w)
    assert all(process.exitcode == 0 for process in processes), [process.exitcode for process in processes]
    acknowledged = failed = missing = 0
    causes: dict[str, int] = {}
    for round_index, workspace in enumerate(workspaces):
        reader = RuntimeEventStore(workspace)
        for worker in range(PROCESSES):
            outcome = json.loads((results / f"{round_index}-{worker}.json").read_text())
            failed += len(outcome["failed"])
            for _, _, cause in outcome["failed"]:
                causes[cause.split(":")[0]] = causes.get(cause.split(":")[0], 0) + 1
            by_run: dict[str, set[str]] = {}
            for run_id, event_id in outcome["acknowledged"]:
                by_run.setdefault(run_id, set()).add(event_id)
                acknowledged += 1
            for run_id, event_ids in by_run.items():
                try:
                    held = {event.id for event in reader.read(SESSION, run_id).events}
                except LedgerMissing:
                    held = set()
                missing += len(event_ids - held)
    attempted = ROUNDS * PROCESSES * RUNS * EVENTS_PER_RUN
    return {"attempted": attempted, "acknowledged": acknowledged, "failed": failed, "missing": missing, "causes": causes}


@pytest.mark.slow  # (about 6-11 s: 9,600 appends)
@pytest.mark.skipif(sys.platform != "linux", reason="forks writer processes (Linux)")
def test_runs_of_a_new_session_writing_their_first_events_at_once_lose_no_append(tmp_path: Path) -> None:
    measured = _race(tmp_path)
    print(f"concurrent first appends: {json.dumps(measured)}")  # the counts, for the record (pytest -s)
    lost = measured["failed"] + measured["missing"]
    assert lost == 0, f"{lost} of {measured['attempted']} appends lost to racing mkdirs: {measured}"
    assert measured["acknowledged"] == measured["attempted"]


# -- idempotent, but never through a link or over a file --------------------------------------------------------
_real_mkdir = os.mkdir


def _racing_mkdir(monkeypatch, make) -> None:
    """Make the directory-creating mkdir lose a race: `make(fd, name)` puts something at the name first."""
    real_mkdir = os.mkdir

    def mkdir_after_another(path, mode=0o777, *, dir_fd=None):
        if dir_fd is not None:
            make(dir_fd, path)
        return real_mkdir(path, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "mkdir", mkdir_after_another)


def test_a_directory_another_writer_made_first_is_used(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "ws").mkdir()
    _racing_mkdir(monkeypatch, lambda fd, name: _real_mkdir(name, dir_fd=fd))  # every step: another made it first
    fd = open_directory(tmp_path / "ws", ("sessions", "s1", "runs", "r1"), create=True)
    os.close(fd)
    assert (tmp_path / "ws" / "sessions" / "s1" / "runs" / "r1").is_dir()


def test_a_symlink_that_wins_the_race_for_a_name_is_refused_not_followed(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "elsewhere").mkdir()
    _racing_mkdir(monkeypatch, lambda fd, name: os.symlink(tmp_path / "elsewhere", name, dir_fd=fd) if name == "s1" else None)
    with pytest.raises(EscapesWorkspace, match="a symlink inside the workspace"):
        open_directory(tmp_path / "ws", ("sessions", "s1", "runs"), create=True)
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_a_file_that_wins_the_race_for_a_name_is_refused(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "ws").mkdir()
    _racing_mkdir(monkeypatch, lambda fd, name: os.close(os.open(name, os.O_CREAT | os.O_WRONLY, dir_fd=fd)) if name == "runs" else None)
    with pytest.raises(NotADirectoryError):
        open_directory(tmp_path / "ws", ("sessions", "s1", "runs", "r1"), create=True)
