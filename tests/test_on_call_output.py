"""What an on-call engineer is told: the next step for a corrupt ledger (the exact repair command, or why repair
will not do), what to verify in a blocked plan, and each audited run apart from the others, with what to do.
Names (reasons, diagnostics) are read from the contract, so a renamed reason needs no edit here."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import spec_names as names
from resume_contract_generated.catalog import CANONICAL_LEDGER_ROWS, PREFIX_LENGTHS, REASON_MEANINGS

ROWS = [json.loads(row) for row in CANONICAL_LEDGER_ROWS["ok"]]
USER = ROWS[0]
CALL = ROWS[PREFIX_LENGTHS["after_function_call"] - 1]  # the canonical ledger's call, then its response
RESPONSE = ROWS[PREFIX_LENGTHS["after_function_response"] - 1]


def _ledger(path: Path, rows: list[dict], tail: bytes = b"", run: str | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if run is not None:
        rows = [dict(row, runId=run) for row in rows]
    path.write_bytes(b"".join(msgspec.json.encode(row) + b"\n" for row in rows) + tail)
    return path


def test_a_torn_tail_names_the_exact_repair_command_and_repair_then_succeeds(tmp_path: Path, run_cli) -> None:
    path = _ledger(tmp_path / "run dir" / "runtime-events.jsonl", [USER], tail=b'{"id":"half')
    code, _, err = run_cli("plan", str(path))
    assert code == 3 and f"next step: once no process is writing this run, run `resume-contract repair '{path}'`" in err
    assert run_cli("repair", str(path))[0] == 0 and run_cli("plan", str(path))[0] == 0


def test_repair_of_a_corruption_it_cannot_fix_exits_3_saying_where(tmp_path: Path, run_cli) -> None:
    path = tmp_path / "runtime-events.jsonl"
    path.write_bytes(b"{not json}\n" + msgspec.json.encode(USER) + b"\n")
    before = path.read_bytes()
    code, out, err = run_cli("repair", str(path))
    assert code == 3 and out == f"{path}: no torn tail; nothing changed\n"
    assert f"resume-contract: {path} is still corrupt: {path}:1: byte offset 0: invalid_json" in err
    assert "next step: line 1 is invalid_json: repair cannot fix this" in err
    assert path.read_bytes() == before
    code, _, err = run_cli("plan", str(path))
    assert code == 3 and "next step: line 1 is invalid_json: repair cannot fix this" in err


def test_a_blocked_plan_lists_each_call_to_verify_what_each_reason_means_and_the_next_step(
    tmp_path: Path, run_cli
) -> None:
    path = _ledger(tmp_path / "runtime-events.jsonl", [USER, CALL])
    code, out, _ = run_cli("plan", str(path), "--expected-high-water", "5")
    call = CALL["content"]
    assert code == 1
    assert f"  {names.DANGLING}: {REASON_MEANINGS[names.DANGLING]}\n" in out
    assert f"  {names.OFFSET_MISMATCH}: {REASON_MEANINGS[names.OFFSET_MISMATCH]}\n" in out
    assert "to verify:     1 tool call(s) whose effects may or may not have happened\n" in out
    args = msgspec.json.encode(call["args"]).decode()
    assert f"  {call['name']}  call {call['id']}  args {args}  (committed in event {CALL['id']})\n" in out
    # Expected and actual high-water in the text, not only in the JSON's detail.
    assert (
        f"  {names.HIGH_WATER}: " in out
        and "(expected runtime event high water 5, actual runtime event high water 2)" in out
    )
    assert "next step:     check each call under 'to verify' with read-only inspection; do not run it again\n" in out


def test_a_call_that_never_started_is_listed_apart_with_nothing_to_verify(tmp_path: Path, run_cli) -> None:
    # The packaged contract's tool-boundary protocol (maka-history step 01): a call committed without its dispatch
    # never ran. A person has nothing to inspect; the text must not send them to verify it.
    marked = {**USER, "actions": {"runtimeProtocol": {"toolBoundary": "t1_after_preflight_v1"}}}
    path = _ledger(tmp_path / "runtime-events.jsonl", [marked, CALL])
    code, out, _ = run_cli("plan", str(path))
    call = CALL["content"]
    assert code == 1 and "to verify:" not in out
    assert "never ran:     1 tool call(s) committed but provably never started (not_dispatched)\n" in out
    assert f"  {call['name']}  call {call['id']}  args " in out
    assert "the calls under 'never ran' had no effect: nothing to inspect or undo" in out


def test_a_safe_plan_has_no_next_step(tmp_path: Path, run_cli) -> None:
    path = _ledger(tmp_path / "runtime-events.jsonl", ROWS[: PREFIX_LENGTHS["after_function_response"]])
    code, out, _ = run_cli("plan", str(path))
    assert code == 0 and "next step:" not in out and "to verify:" not in out


def test_the_audit_tells_two_blocked_runs_apart_and_says_what_to_do_for_each_group(tmp_path: Path, run_cli) -> None:
    runs = tmp_path / "sessions" / USER["sessionId"] / "runs"
    _ledger(runs / "pending" / "runtime-events.jsonl", [USER, CALL], run="pending")
    _ledger(runs / "unmatched" / "runtime-events.jsonl", [USER, RESPONSE], run="unmatched")
    _ledger(runs / "torn" / "runtime-events.jsonl", [USER], tail=b'{"id":"x', run="torn")
    code, out, _ = run_cli("plan", "--workspace", str(tmp_path))
    session = USER["sessionId"]
    call = CALL["content"]
    assert code == 3
    lines = out.splitlines()
    assert (
        f"blocked    {session}/pending: {names.DANGLING} ({names.PENDING}); verify {call['name']} call {call['id']}"
        in lines
    )
    unmatched = ", ".join(dict.fromkeys(names.UNMATCHED))
    assert f"blocked    {session}/unmatched: {names.reason_of(names.UNMATCHED[0])} ({unmatched})" in lines
    assert lines[lines.index("what to do:") + 1 :] == [
        f"  blocked (2): do not replay; for each, `resume-contract plan --workspace {tmp_path} --session {session} --run pending` "
        "says why, and lists each call to verify",
        f"  torn (1): once nothing writes them, `resume-contract repair --workspace {tmp_path} --session {session} --run torn` "
        "(each), then plan again",
    ]
    summaries = [
        json.loads(line) for line in run_cli("plan", "--workspace", str(tmp_path), "--json")[1].splitlines()[:-1]
    ]
    by_run = {summary["runId"]: summary for summary in summaries}
    assert by_run["pending"]["diagnostics"] == [names.PENDING] and by_run["pending"]["toVerify"] == [
        f"{call['name']} call {call['id']}"
    ]
    assert by_run["unmatched"]["diagnostics"] == list(names.UNMATCHED) and by_run["torn"]["corruption"] == "torn_row"


def test_every_command_with_json_output_takes_format_json_too(tmp_path: Path, run_cli) -> None:
    from resume_contract.cli.parser import build_parser

    commands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    with_json = sorted(name for name, parser in commands.items() if any("--json" in action.option_strings for action in parser._actions))
    assert {"plan", "verify", "crash", "conform"} <= set(with_json)
    for name in with_json:
        formats = next(action for action in commands[name]._actions if "--format" in action.option_strings)
        assert "json" in formats.choices, name
    path = _ledger(tmp_path / "runtime-events.jsonl", [USER, CALL])
    assert run_cli("plan", str(path), "--format", "json") == run_cli("plan", str(path), "--json")
    assert run_cli("plan", str(path), "--format", "text") == run_cli("plan", str(path))
