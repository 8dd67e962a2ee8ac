"""Startup recovery (ledger/recovery.py, `resume-contract recover`): from each crash boundary of
spec/lifecycle.yaml it leaves exactly one terminal event and a terminal header as the spec says, never
writes the source, is idempotent, refuses a live run, stays in the workspace, and finishes a recovery that was
itself killed between its two writes. Expectations are read from spec/lifecycle.yaml."""

from __future__ import annotations

import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from conftest import REPO

from resume_contract.cli import main
from resume_contract.crash.continuation_loop import scripted_run
from resume_contract.crash.continuation_source import HOST, IDS, SESSION_ID, SOURCE_RUN_ID, write_source
from resume_contract.errors import EscapesWorkspace
from resume_contract.ledger.continuation_exec import ContinuationExecution, PreparedContinuation, prepare_continuation
from resume_contract.ledger.recovery import recover

SPEC = yaml.safe_load((REPO / "spec" / "lifecycle.yaml").read_text(encoding="utf-8"))
BOUNDARIES = {boundary["id"]: boundary for boundary in SPEC["boundaries"]}
EXECUTOR = [transition["name"] for transition in SPEC["lifecycle"]["transitions"] if transition["by"] == "executor"]
RUN = Path("sessions") / SESSION_ID / "runs"


def _tree(root: Path) -> dict[str, tuple[str, int]]:
    return {p.relative_to(root).as_posix(): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns) for p in sorted(root.rglob("*")) if p.is_file()}


def _execute_until(workspace: Path, after: str) -> None:
    """The reference executor's steps, in process, up to and including the transition `after`."""
    planned = prepare_continuation(workspace, SESSION_ID, SOURCE_RUN_ID, HOST, IDS)
    assert isinstance(planned, PreparedContinuation)
    with ContinuationExecution(workspace, planned, HOST) as execution:
        execution.revalidate()
        for name in EXECUTOR[: EXECUTOR.index(after) + 1]:
            if name == "run":
                execution.run(scripted_run(execution)[0])
            elif name == "end":
                execution.end(scripted_run(execution)[1])
            else:
                getattr(execution, name)()


def _rows(workspace: Path) -> list[dict]:
    path = workspace / RUN / "run-2" / "runtime-events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _terminal(rows: list[dict]) -> list[dict]:
    return [row for row in rows if (row.get("actions") or {}).get("endInvocation") is True]


@pytest.mark.parametrize("boundary", list(BOUNDARIES))
def test_recovery_from_each_boundary_leaves_what_the_spec_says_and_is_idempotent(tmp_path: Path, boundary: str) -> None:
    workspace = tmp_path / "ws"
    write_source(workspace)
    _execute_until(workspace, BOUNDARIES[boundary]["after"])
    source = _tree(workspace / RUN / SOURCE_RUN_ID)
    first = recover(workspace)
    leaves = BOUNDARIES[boundary]["recovery"]
    assert [run.steps for run in first.runs] == ([leaves["takes"]] if leaves["takes"] else [])
    terminal = _terminal(_rows(workspace))
    assert [row["status"] for row in terminal] == [leaves["terminal_event"]]
    header = json.loads((workspace / RUN / "run-2" / "run.json").read_text())
    assert (header["status"], header.get("failureClass")) == (leaves["header"], leaves.get("failure_class"))
    after_first = _tree(workspace)
    second = recover(workspace)
    assert second.runs == [] and _tree(workspace) == after_first  # idempotent: nothing left to do
    assert _tree(workspace / RUN / SOURCE_RUN_ID) == source  # the source, never written


def test_a_recovered_terminal_event_is_the_reference_shape(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    write_source(workspace)
    _execute_until(workspace, "claim")
    recover(workspace)
    (row,) = _terminal(_rows(workspace))
    assert (row["role"], row["author"], row["status"], row["partial"]) == ("system", "system", "failed", False)
    assert row["actions"] == {"endInvocation": True, "stateDelta": {"failureClass": "app_restarted"}}


_HOLDER = textwrap.dedent(
    """
    import sys, time
    from resume_contract.ledger.store import RuntimeEventStore
    store = RuntimeEventStore(sys.argv[1])
    store.hold(sys.argv[2], sys.argv[3])
    print("holding", flush=True)
    time.sleep(60)
    """
)


def test_a_live_run_is_refused_and_left_untouched(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    write_source(workspace)
    _execute_until(workspace, "start")
    before = _tree(workspace)
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(workspace), SESSION_ID, "run-2"], stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"holding"
        report = recover(workspace)
        assert [(run.run_id, run.outcome) for run in report.runs] == [("run-2", "live")]
        assert _tree(workspace) == before
        out = io.StringIO()
        assert main(["recover", "--workspace", str(workspace)], out=out, err=io.StringIO()) == 2
        assert "run-2: live, not touched" in out.getvalue()
    finally:
        holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()
    assert recover(workspace).runs[0].outcome == "recovered"  # once the writer is gone


_KILLED_MID_RECOVERY = textwrap.dedent(
    """
    import os, signal, sys
    from resume_contract.ledger import recovery

    def killed(*args, **kwargs):  # the recovered terminal event is committed; the header is next
        os.kill(os.getpid(), signal.SIGKILL)

    recovery._seal = killed
    recovery.recover(sys.argv[1])
    """
)


def test_a_recovery_killed_between_its_writes_is_finished_by_the_next(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    write_source(workspace)
    _execute_until(workspace, "start")
    child = subprocess.run([sys.executable, "-c", _KILLED_MID_RECOVERY, str(workspace)], capture_output=True, timeout=60)
    assert child.returncode == -signal.SIGKILL, child.stderr
    assert [row["status"] for row in _terminal(_rows(workspace))] == ["failed"]
    assert json.loads((workspace / RUN / "run-2" / "run.json").read_text())["status"] == "created"
    report = recover(workspace)
    assert [run.steps for run in report.runs] == [["recover_seal"]]  # no second terminal event
    assert len(_terminal(_rows(workspace))) == 1
    header = json.loads((workspace / RUN / "run-2" / "run.json").read_text())
    assert (header["status"], header["failureClass"]) == ("failed", "app_restarted")


def test_the_source_of_a_continuation_is_never_written_even_when_its_header_is_not_terminal(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    write_source(workspace)
    _execute_until(workspace, "seal")
    header_path = workspace / RUN / SOURCE_RUN_ID / "run.json"
    header_path.write_text(json.dumps({**json.loads(header_path.read_text()), "status": "running"}))
    before = _tree(workspace)
    report = recover(workspace)
    assert [(run.run_id, run.outcome) for run in report.runs] == [(SOURCE_RUN_ID, "refused")]
    assert _tree(workspace) == before


def test_recovery_stays_in_the_workspace(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write_source(outside)
    _execute_until(outside, "claim")
    workspace = tmp_path / "ws"
    (workspace / "sessions").mkdir(parents=True)
    (workspace / "sessions" / SESSION_ID).symlink_to(outside / "sessions" / SESSION_ID, target_is_directory=True)
    before = _tree(outside)
    with pytest.raises(EscapesWorkspace):
        recover(workspace)
    assert _tree(outside) == before
    err = io.StringIO()
    assert main(["recover", "--workspace", str(workspace)], out=io.StringIO(), err=err) == 2
    assert "symlink" in err.getvalue()


def test_the_command_reports_each_run_in_text_and_json(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    write_source(workspace)
    _execute_until(workspace, "claim")
    out = io.StringIO()
    assert main(["recover", "--workspace", str(workspace), "--session", SESSION_ID, "--format", "json"], out=out, err=io.StringIO()) == 0
    report = json.loads(out.getvalue())
    assert [(run["runId"], run["state"], run["steps"], run["headerStatus"]) for run in report["runs"]] == [
        ("run-2", "claimed", ["recover_end", "recover_seal"], "failed")
    ]
    out = io.StringIO()
    assert main(["recover", "--workspace", str(workspace)], out=out, err=io.StringIO()) == 0
    assert "0 interrupted" in out.getvalue()
    err = io.StringIO()
    assert main(["recover", "--workspace", str(tmp_path / "nowhere")], out=io.StringIO(), err=err) == 2
    assert "no such workspace" in err.getvalue()
    assert not os.path.exists(tmp_path / "nowhere")


def test_a_torn_ledger_is_never_recovered_over(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    write_source(workspace)
    _execute_until(workspace, "start")
    with (workspace / RUN / "run-2" / "runtime-events.jsonl").open("ab") as ledger:
        ledger.write(b'{"partial":fal')  # a row cut short by a crash
    before = _tree(workspace)
    err = io.StringIO()
    assert main(["recover", "--workspace", str(workspace)], out=io.StringIO(), err=err) == 3
    assert "torn_row" in err.getvalue() and "resume-contract repair" in err.getvalue()
    assert _tree(workspace) == before


# A header is evidence too: recovery writes its recovered terminal event with the header's ids, so a header that
# names another run, lacks an id, holds one of another type, or is no JSON at all is refused and nothing is written.
_BAD_HEADERS = {
    "names another run": lambda header: {**header, "sessionId": "session-2", "runId": "victim"},
    "names another run of the session": lambda header: {**header, "runId": SOURCE_RUN_ID},
    "has no runId": lambda header: {key: value for key, value in header.items() if key != "runId"},
    "holds a number for an id": lambda header: {**header, "invocationId": 7},
    "holds a traversing id": lambda header: {**header, "sessionId": ".."},
}


@pytest.mark.parametrize("change", list(_BAD_HEADERS))
def test_an_interrupted_run_whose_header_is_not_its_own_is_refused_and_nothing_is_written(tmp_path: Path, change: str) -> None:
    workspace = tmp_path / "ws"
    write_source(workspace)
    _execute_until(workspace, "start")
    header_path = workspace / RUN / "run-2" / "run.json"
    header_path.write_text(json.dumps(_BAD_HEADERS[change](json.loads(header_path.read_text()))))
    before = _tree(workspace)
    report = recover(workspace)
    assert [(run.run_id, run.outcome) for run in report.runs] == [("run-2", "refused")]
    assert str(header_path) in report.runs[0].message
    assert _tree(workspace) == before
    out, err = io.StringIO(), io.StringIO()
    assert main(["recover", "--workspace", str(workspace)], out=out, err=err) == 1
    assert "run-2: refused, not touched" in out.getvalue() and err.getvalue() == ""
    assert _tree(workspace) == before


@pytest.mark.parametrize("text", ["{bad", '"running"', ""])
def test_an_unreadable_header_is_reported_not_passed_over(tmp_path: Path, text: str) -> None:
    # Its status cannot be read, so the run may be an interrupted one: the command must not say all is well.
    workspace = tmp_path / "ws"
    write_source(workspace)
    _execute_until(workspace, "start")
    (workspace / RUN / "run-2" / "run.json").write_text(text)
    before = _tree(workspace)
    out = io.StringIO()
    assert main(["recover", "--workspace", str(workspace)], out=out, err=io.StringIO()) == 1
    assert "run-2: refused, not touched" in out.getvalue() and "run.json" in out.getvalue()
    assert _tree(workspace) == before


def test_a_bad_header_beside_an_interrupted_run_leaves_that_run_recovered_and_both_reported(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    write_source(workspace)
    _execute_until(workspace, "start")
    other = workspace / RUN / "run-3"
    other.mkdir()
    (other / "run.json").write_text(json.dumps({"status": "running", "sessionId": SESSION_ID, "runId": "run-9", "invocationId": "i", "turnId": "t"}))
    report = recover(workspace)
    assert [(run.run_id, run.outcome) for run in report.runs] == [("run-2", "recovered"), ("run-3", "refused")]
    assert len(_terminal(_rows(workspace))) == 1
    assert not (workspace / RUN / "run-9").exists() and not (other / "runtime-events.jsonl").exists()


def test_a_corrupt_run_is_left_alone_and_the_others_are_still_recovered(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    write_source(workspace)
    _execute_until(workspace, "start")
    torn = workspace / RUN / "run-0"  # sorted before run-2: its corruption must not stop run-2's recovery
    torn.mkdir()
    header = json.loads((workspace / RUN / "run-2" / "run.json").read_text())
    (torn / "run.json").write_text(json.dumps({**header, "runId": "run-0", "status": "running"}))
    (torn / "runtime-events.jsonl").write_bytes(b'{"partial":fal')
    before = (torn / "runtime-events.jsonl").read_bytes(), (torn / "run.json").read_bytes()
    out, err = io.StringIO(), io.StringIO()
    assert main(["recover", "--workspace", str(workspace), "--format", "json"], out=out, err=err) == 3
    assert [(run["runId"], run["outcome"]) for run in json.loads(out.getvalue())["runs"]] == [("run-0", "corrupt"), ("run-2", "recovered")]
    assert "corrupt ledger, not recovered" in err.getvalue() and "resume-contract repair" in err.getvalue()
    assert ((torn / "runtime-events.jsonl").read_bytes(), (torn / "run.json").read_bytes()) == before
    assert len(_terminal(_rows(workspace))) == 1


def test_a_session_directory_with_an_invalid_id_is_reported_and_the_others_recovered(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    write_source(workspace)
    _execute_until(workspace, "start")
    (workspace / "sessions" / "a b" / "runs" / "r1").mkdir(parents=True)  # sorted first
    report = recover(workspace)
    assert [(run.session_id, run.run_id, run.outcome) for run in report.runs] == [("a b", "", "refused"), (SESSION_ID, "run-2", "recovered")]
    assert "not a valid session id" in report.runs[0].message


def test_the_text_counts_a_session_it_cannot_read_apart_from_the_interrupted_runs(tmp_path: Path) -> None:
    # One interrupted run (recovered) and one session whose id no store can address: 1 interrupted, not 2.
    workspace = tmp_path / "ws"
    write_source(workspace)
    _execute_until(workspace, "start")
    (workspace / "sessions" / "a b" / "runs" / "r1").mkdir(parents=True)
    out, err = io.StringIO(), io.StringIO()
    assert main(["recover", "--workspace", str(workspace)], out=out, err=err) == 1  # the session is refused
    first = out.getvalue().splitlines()[0]
    assert first.endswith("1 interrupted; 1 recovered, 0 live, 0 refused; 1 session(s) not read"), first
