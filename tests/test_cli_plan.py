"""`resume-contract plan` and `repair` as an operator uses them: exit codes, corrupt ledgers, the audit."""

from __future__ import annotations

import json
import os
from pathlib import Path

import msgspec
import pytest
import spec_names as names
from resume_contract_generated.catalog import CANONICAL_LEDGER_ROWS, PREFIX_LENGTHS
from resume_contract_generated.runtime_event import RuntimeEvent

from resume_contract.ledger.store import RuntimeEventStore
from resume_contract.project.locate import contract_for
from resume_contract.system.open_files import VISIBLE


def _write(workspace: Path, session: str, run: str, prefix: str, outcome: str = "ok") -> Path:
    with RuntimeEventStore(workspace) as store:
        for row in CANONICAL_LEDGER_ROWS[outcome][: PREFIX_LENGTHS[prefix]]:
            event = msgspec.json.decode(row, type=RuntimeEvent)
            store.append(msgspec.structs.replace(event, session_id=session, run_id=run))
        return store.path(session, run)


def test_safe_replay_exits_0_and_blocked_exits_1(tmp_path: Path, run_cli) -> None:
    safe = _write(tmp_path, "s", "safe", "after_function_response")
    blocked = _write(tmp_path, "s", "blocked", "after_function_call")
    code, out, err = run_cli("plan", str(safe))
    assert (code, err) == (0, "") and "disposition:   safe_replay" in out
    code, out, _ = run_cli("plan", "--workspace", str(tmp_path), "--session", "s", "--run", "blocked")
    assert code == 1 and "disposition:   blocked" in out and f"reasons:       {names.DANGLING}" in out
    code, out, _ = run_cli("plan", str(blocked), "--json")
    plan = json.loads(out)
    assert code == 1
    # The reference ResumePlan's keys, in its order; terminalRuntimeEventId is ours (null: no terminal fact), and so
    # is the contract that decided, last.
    assert list(plan) == [
        "disposition",
        "operations",
        "diagnostics",
        "rejectionReasons",
        "requiresVerification",
        "sourceRuntimeEventHighWater",
        "directive",
        "terminalRuntimeEventId",
        "runtimeEvents",
        "replayRuntimeEvents",
        "contract",
    ]
    assert plan["contract"] == contract_for(None).identity.as_json() and len(plan["contract"]["specSha256"]) == 64
    assert plan["terminalRuntimeEventId"] is None
    assert [json.dumps(row, separators=(",", ":")) for row in plan["runtimeEvents"]] == blocked.read_text().splitlines()
    assert plan["operations"][0]["status"] == "indeterminate" and "directive" in plan


def test_expected_high_water_mismatch_is_blocked(tmp_path: Path, run_cli) -> None:
    safe = _write(tmp_path, "s", "r", "after_function_response")
    code, out, _ = run_cli("plan", str(safe), "--expected-high-water", "2", "--json")
    assert code == 1 and json.loads(out)["rejectionReasons"] == [names.OFFSET_MISMATCH]
    assert run_cli("plan", str(safe), "--expected-high-water", "3")[0] == 0


def test_a_corrupt_ledger_exits_3_names_line_and_offset_and_never_says_safe_replay(tmp_path: Path, run_cli) -> None:
    path = _write(tmp_path, "s", "r", "after_function_response")
    committed = path.stat().st_size
    with path.open("ab") as handle:
        handle.write(b'{"id":"torn"')
    code, out, err = run_cli("plan", str(path), "--json")
    document = json.loads(out)  # (--json: a document for every outcome, a corrupt ledger's too)
    assert code == 3 and document["outcome"] == "corrupt" and document["proceeds"] is False
    assert document["corruption"] == {"kind": "torn_row", "file": str(path), "line": 4, "byteOffset": committed, "detail": "the last 12 bytes have no terminating newline"}
    assert document["nextStep"].startswith("once no process is writing this run, run `resume-contract repair")
    assert err == (
        f"resume-contract: corrupt ledger, no plan: {path}:4: byte offset {committed}: torn_row: the last 12 bytes have no terminating newline\n"
        f"next step: once no process is writing this run, run `resume-contract repair {path}` (it moves the torn bytes to a file beside "
        "the ledger and keeps every committed row), then plan again\n"
    )
    assert "safe_replay" not in out + err


def test_repair_makes_the_ledger_plannable_again(tmp_path: Path, run_cli) -> None:
    path = _write(tmp_path, "s", "r", "after_function_response")
    with path.open("ab") as handle:
        handle.write(b'{"id":"torn"')
    code, out, _ = run_cli("repair", "--workspace", str(tmp_path), "--session", "s", "--run", "r")
    assert code == 0 and "moved 12 torn bytes to" in out
    assert run_cli("plan", str(path))[0] == 0
    code, out, _ = run_cli("repair", str(path))
    assert code == 0 and out.endswith("no torn tail; nothing changed\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["plan"], "give a LEDGER file, or --workspace DIR with --session S and --run R"),
        (["plan", "--workspace", "WS", "--session", "..", "--run", "r"], "invalid session id '..'"),
        (["plan", "--workspace", "WS", "--session", "s"], "give a LEDGER file, or --workspace DIR"),
        (["plan", "x.jsonl", "--workspace", "WS"], "not both"),
        (["plan", "--workspace", "WS", "--expected-high-water", "3"], "applies to one run"),
        (["plan", "WS"], "not a file"),
    ],
)
def test_usage_errors_exit_2(tmp_path: Path, run_cli, args: list[str], message: str) -> None:
    (tmp_path / "WS").mkdir()
    args = [str(tmp_path / "WS") if arg == "WS" else arg for arg in args]
    code, out, err = run_cli(*args)
    assert (code, out) == (2, "")
    assert message in err


def test_a_missing_ledger_is_an_error_never_an_empty_safe_prefix(tmp_path: Path, run_cli, snapshot) -> None:
    _write(tmp_path, "s", "r", "after_function_response")
    (tmp_path / "dangling.jsonl").symlink_to(tmp_path / "gone.jsonl")
    before = snapshot(tmp_path)
    cases = [
        (("plan", str(tmp_path / "none.jsonl")), "none.jsonl: no such ledger"),
        (("plan", str(tmp_path / "dangling.jsonl")), "dangling.jsonl: a symlink to a file that does not exist"),
        (("plan", "--workspace", str(tmp_path / "nowhere"), "--session", "s", "--run", "r"), "nowhere: no such workspace directory"),
        (("plan", "--workspace", str(tmp_path), "--session", "typo", "--run", "r"), "no session 'typo'"),
        (("plan", "--workspace", str(tmp_path), "--session", "s", "--run", "typo"), "session 's' has no run 'typo'"),
        (("repair", "--workspace", str(tmp_path), "--session", "s", "--run", "typo"), "session 's' has no run 'typo'"),
    ]
    for args, message in cases:
        code, out, err = run_cli(*args)
        assert (code, out) == (2, ""), args
        assert message in err, (args, err)
    assert snapshot(tmp_path) == before


def test_only_an_existing_empty_ledger_is_the_empty_prefix(tmp_path: Path, run_cli) -> None:
    empty = tmp_path / "runtime-events.jsonl"
    empty.write_bytes(b"")
    code, out, _ = run_cli("plan", str(empty))
    assert code == 0 and "high-water:    0 committed events" in out


def test_the_workspace_audit_counts_safe_blocked_and_corrupt_runs(tmp_path: Path, run_cli) -> None:
    for index in range(6):
        _write(tmp_path, "s1", f"safe-{index}", "after_terminal_event", "error")
    _write(tmp_path, "s2", "blocked", "after_function_call")
    corrupt = _write(tmp_path, "s2", "corrupt", "after_function_call")
    with corrupt.open("ab") as handle:
        handle.write(b"{")
    bad_dir = tmp_path / "sessions" / "bad id" / "runs" / "r"
    bad_dir.mkdir(parents=True)
    (bad_dir / "runtime-events.jsonl").write_text("")

    code, out, err = run_cli("plan", "--workspace", str(tmp_path), "--jobs", "2")
    call = json.loads(CANONICAL_LEDGER_ROWS["ok"][PREFIX_LENGTHS["after_function_call"] - 1])["content"]
    assert code == 3
    assert out.splitlines() == [
        f"blocked    s2/blocked: {names.DANGLING} ({names.PENDING}); verify {call['name']} call {call['id']}",
        f"corrupt    s2/corrupt: {corrupt}:3: byte offset {corrupt.stat().st_size - 1}: torn_row: the last 1 bytes have no terminating newline",
        "8 runs: 6 safe_replay, 1 blocked, 1 corrupt, 0 live, 0 unreadable, 1 skipped",
        "what to do:",
        f"  blocked (1): do not replay; for each, `resume-contract plan --workspace {tmp_path} --session s2 --run blocked` says why, and lists each call to verify",
        f"  torn (1): once nothing writes them, `resume-contract repair --workspace {tmp_path} --session s2 --run corrupt` (each), then plan again",
    ]
    assert "skipped" in err and "invalid session id 'bad id'" in err

    code, out, _ = run_cli("plan", "--workspace", str(tmp_path), "--json", "--jobs", "1")
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 3
    assert [line["status"] for line in lines[:-1]] == ["safe_replay"] * 6 + ["blocked", "corrupt"]
    counts = {"safe_replay": 6, "blocked": 1, "corrupt": 1, "live": 0, "unreadable": 0, "total": 8, "skipped": 1}
    assert lines[-1] == {"summary": {**counts, "contract": contract_for(None).identity.as_json()}}


def test_an_all_safe_workspace_exits_0(tmp_path: Path, run_cli) -> None:
    _write(tmp_path, "s", "r", "before_function_call")
    code, out, _ = run_cli("plan", "--workspace", str(tmp_path))
    assert (code, out) == (0, "1 runs: 1 safe_replay, 0 blocked, 0 corrupt, 0 live, 0 unreadable, 0 skipped\n")


def test_a_directory_that_is_not_a_workspace_is_no_all_clear(tmp_path: Path, run_cli) -> None:
    # One level too high or too low, a workspace path is a directory without sessions/: not "0 runs", exit 0.
    _write(tmp_path / "ws", "s", "r", "before_function_call")
    for wrong in (tmp_path, tmp_path / "ws" / "sessions"):
        code, out, err = run_cli("plan", "--workspace", str(wrong))
        assert (code, out) == (2, "") and f"{wrong}: no sessions/ directory, so not a workspace" in err
    (tmp_path / "empty" / "sessions").mkdir(parents=True)  # a workspace no run has written to yet
    assert run_cli("plan", "--workspace", str(tmp_path / "empty"))[:2] == (0, "0 runs: 0 safe_replay, 0 blocked, 0 corrupt, 0 live, 0 unreadable, 0 skipped\n")


def test_a_ledger_with_a_live_writer_is_not_planned_and_not_touched(tmp_path: Path, run_cli) -> None:
    path = _write(tmp_path, "s", "done", "after_function_response")
    with RuntimeEventStore(tmp_path) as live:
        event = msgspec.json.decode(CANONICAL_LEDGER_ROWS["ok"][0], type=RuntimeEvent)
        live.append(msgspec.structs.replace(event, run_id="running"))
        running = live.path("canonical-session", "running")
        before = (running.read_bytes(), running.stat().st_mtime_ns)
        code, out, err = run_cli("plan", str(running))
        assert (code, out) == (2, "")
        # Named where the system shows open files (this process holds it), else by the writer's lock.
        assert (f"open for writing by process {os.getpid()} (" if VISIBLE else "a live process is writing this ledger") in err
        code, out, _ = run_cli("plan", "--workspace", str(tmp_path), "--json")
        statuses = {line["runId"]: line["status"] for line in map(json.loads, out.splitlines()[:-1])}
        assert statuses == {"done": "safe_replay", "running": "live"}
        assert code == 2
        # The check released its lock at once: the writer can still append.
        assert live.append(msgspec.structs.replace(event, id="again", run_id="running")) is True
        assert running.read_bytes().startswith(before[0])
    assert run_cli("plan", str(path))[0] == 0


def test_the_text_plan_of_a_long_run_lists_only_what_needs_attention(tmp_path: Path, run_cli, events) -> None:
    ledger = []
    for number in range(60):
        ledger.append(events.call(f"c{number}", f"k{number}"))
        if number % 2 == 0:
            ledger.append(events.response(f"r{number}", f"k{number}"))
    path = tmp_path / "runtime-events.jsonl"
    path.write_bytes(b"".join(msgspec.json.encode(event) + b"\n" for event in ledger))
    code, out, _ = run_cli("plan", str(path))
    assert code == 1
    assert "operations:    60 (30 indeterminate, 30 succeeded)\n" in out
    assert "to verify:     30 tool call(s) whose effects may or may not have happened\n" in out
    assert "  write_file  call k1  args " in out and "(committed in event c1)\n" in out
    assert "  ... and 10 more (--json lists them all)\n" in out
    assert "diagnostics:   30\n" in out and "  ... and 10 more (--json lists them all)\n" in out
    assert len(out.splitlines()) < 60
