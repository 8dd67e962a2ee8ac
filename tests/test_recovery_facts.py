"""Recovery facts and the ledger scan (maka-history step 06; docs/language.md): anomalies that move an operation,
rows the contract diagnoses rather than the reader refusing them, lane conflicts that take a row out of tool
state, absorbing states, and the order of a plan's diagnostics.

A tool test on frozen inputs: the contract is the gallery's step 06 (examples/maka-history, base + patches, never
spec/), and every expectation below is written by hand from the step's text and its rules, not computed by the
code under test. A ledger planned short (in memory, one chunk) and long (past the reader's chunks, where repeated
ids are found from hashes after the walk and the file is walked again) must agree.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest
from gallery_ledgers import plan

ROW = {"sessionId": "s", "invocationId": "i", "runId": "r", "turnId": "t", "ts": 1, "partial": False}
MARKER = {"runtimeProtocol": {"toolBoundary": "t1_after_preflight_v1"}}


@pytest.fixture(scope="module")
def project(gallery_step: Any) -> Path:
    return gallery_step("06-recovery-facts")  # type: ignore[no-any-return]


def user(event_id: str, **more: Any) -> dict[str, Any]:
    return {**ROW, "id": event_id, "role": "user", "author": "user", "content": {"kind": "text", "text": "go"}, **more}


def call(event_id: str, call_id: str, **more: Any) -> dict[str, Any]:
    return {**ROW, "id": event_id, "role": "model", "author": "agent", "content": {"kind": "function_call", "id": call_id, "name": "Bash", "args": {}}, **more}


def result(event_id: str, call_id: str) -> dict[str, Any]:
    return {**ROW, "id": event_id, "role": "tool", "author": "tool", "content": {"kind": "function_response", "id": call_id, "name": "Bash", "result": {}}}


def system(event_id: str, actions: dict[str, Any], call_id: str, operation: str = "op-1") -> dict[str, Any]:
    return {**ROW, "id": event_id, "role": "system", "author": "system", "actions": actions, "refs": {"operationId": operation, "toolCallId": call_id}}


# The hash maka's dispatch carries of its call (`call` below: Bash, no arguments): SHA-256 of the call's tool and
# arguments as JSON with sorted keys, no spaces (read off the reference's SQLite runs, e.g. T_P5).
def _hash(tool: str) -> str:
    return "sha256:" + hashlib.sha256(json.dumps({"toolName": tool, "args": {}}, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


BASH_NO_ARGS = _hash("Bash")


def dispatch(event_id: str, call_id: str, tool: str = "Bash", args_hash: str = BASH_NO_ARGS) -> dict[str, Any]:
    fields = {"operationId": "op-1", "providerToolCallId": call_id, "toolName": tool, "canonicalArgsHash": args_hash}
    return system(event_id, {"toolDispatch": fields}, call_id)


def recovery(event_id: str, call_id: str, kind: str, **payload: Any) -> dict[str, Any]:
    return system(event_id, {"toolRecovery": {"kind": f"maka.tool.{kind}", "version": 1, "payload": payload}}, call_id)


def summary(decided: dict[str, Any]) -> tuple[str, list[tuple[str, str | None]], list[str], list[tuple[str, str]], bool]:
    return (
        decided["disposition"],
        [(d["code"], d.get("eventId")) for d in decided["diagnostics"]],
        [row["id"] for row in decided["replayRuntimeEvents"]],
        [(o["toolCallId"], o["status"]) for o in decided["operations"]],
        decided["requiresVerification"],
    )


def test_a_second_response_corrupts_the_operation_and_stands_with_its_pair(project: Path, tmp_path: Path) -> None:
    decided = plan(project, [user("u"), call("c", "a"), result("r1", "a"), result("r2", "a")], tmp_path)
    # The operation's diagnostic (at the end) before the scan's (at the row); both responses stand with the call.
    assert summary(decided) == (
        "blocked", [("tool_recovery_corruption", "c"), ("tool_ledger_corruption", "r2")], ["u", "c", "r1", "r2"], [("a", "corruption")], False,
    )


def test_a_second_call_of_an_open_operation_is_replayed_with_neither(project: Path, tmp_path: Path) -> None:
    decided = plan(project, [user("u"), call("c1", "a"), call("c2", "a")], tmp_path)
    assert summary(decided) == ("blocked", [("tool_recovery_corruption", "c1"), ("tool_ledger_corruption", "c2")], ["u"], [("a", "corruption")], False)


def test_a_response_naming_no_call_is_diagnosed_twice_and_its_unmatched_result_last(project: Path, tmp_path: Path) -> None:
    decided = plan(project, [user("u"), result("r", "x"), call("c", "a")], tmp_path)
    assert summary(decided) == (
        "blocked", [("pending_tool_result", "c"), ("tool_ledger_corruption", "r"), ("unmatched_tool_result", "r")], ["u"], [("a", "indeterminate")], True,
    )


def test_a_lane_conflict_takes_the_row_out_of_tool_state_and_the_replay(project: Path, tmp_path: Path) -> None:
    rows = [user("u"), call("c", "a", actions={"toolDispatch": {"providerToolCallId": "a"}}), result("r", "a")]
    decided = plan(project, rows, tmp_path)
    # The call is in two lanes: it opens nothing, so its response names no call.
    assert summary(decided) == (
        "blocked", [("semantic_lane_conflict", "c"), ("tool_ledger_corruption", "r"), ("unmatched_tool_result", "r")], ["u"], [], False,
    )


def test_a_parked_decision_parks_the_operation_without_asking_for_verification(project: Path, tmp_path: Path) -> None:
    rows = [
        user("u", actions=MARKER), call("c", "a"), dispatch("d", "a"),
        recovery("k", "a", "reconcile_result", observation="diverged"), recovery("p", "a", "recovery_decision", disposition="parked"),
    ]
    decided = plan(project, rows, tmp_path)
    assert summary(decided) == ("blocked", [("tool_recovery_parked", "c")], ["u", "d", "k", "p"], [("a", "parked")], False)


def test_the_on_call_text_does_not_call_a_parked_call_never_run(project: Path, tmp_path: Path) -> None:
    """A parked operation was dispatched (its tool started): nothing says it had no effect."""
    rows = [user("u", actions=MARKER), call("c", "a"), dispatch("d", "a"), recovery("p", "a", "recovery_decision", disposition="parked")]
    ledger = tmp_path / "runtime-events.jsonl"
    ledger.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "resume_contract", "--root", str(project), "plan", str(ledger)], capture_output=True, text=True, check=False)
    assert done.returncode == 1 and "tool_recovery_parked" in done.stdout, done.stdout + done.stderr
    assert "never ran" not in done.stdout and "had no effect" not in done.stdout, done.stdout


def test_a_completed_decision_after_the_outcome_keeps_it_settled(project: Path, tmp_path: Path) -> None:
    rows = [
        user("u", actions=MARKER), call("c", "a"), dispatch("d", "a"), recovery("k", "a", "reconcile_result", observation="matches"),
        result("r", "a"), recovery("f", "a", "recovery_decision", disposition="completed", outcomeEventId="r"),
    ]
    decided = plan(project, rows, tmp_path)
    assert summary(decided) == ("safe_replay", [], ["u", "c", "d", "k", "r", "f"], [("a", "succeeded")], False)


def test_a_dispatch_naming_no_call_corrupts_the_ledger_and_opens_nothing(project: Path, tmp_path: Path) -> None:
    decided = plan(project, [user("u", actions=MARKER), dispatch("d", "a")], tmp_path)
    assert summary(decided) == ("blocked", [("tool_ledger_corruption", "d"), ("tool_recovery_corruption", "d")], ["u", "d"], [], False)


def test_a_second_response_naming_another_tool_is_not_replayed(project: Path, tmp_path: Path) -> None:
    other = {**result("r2", "a"), "content": {"kind": "function_response", "id": "a", "name": "Write", "result": {}}}
    decided = plan(project, [user("u"), call("c", "a"), result("r1", "a"), other], tmp_path)
    assert summary(decided) == ("blocked", [("tool_recovery_corruption", "c"), ("tool_ledger_corruption", "r2")], ["u", "c", "r1"], [("a", "corruption")], False)


def test_a_dispatch_of_the_call_it_names_dispatches_it(project: Path, tmp_path: Path) -> None:
    decided = plan(project, [user("u", actions=MARKER), call("c", "a"), dispatch("d", "a")], tmp_path)
    assert summary(decided) == ("blocked", [("pending_tool_result", "c")], ["u", "d"], [("a", "indeterminate")], True)


def test_a_dispatch_of_another_tool_corrupts_the_operation_twice_over(project: Path, tmp_path: Path) -> None:
    # maka's identity_conflict and, its hash being of another tool than the call's, its canonical_args_hash_conflict.
    decided = plan(project, [user("u", actions=MARKER), call("c", "a"), dispatch("d", "a", tool="Write", args_hash=_hash("Write"))], tmp_path)
    assert summary(decided) == (
        "blocked", [("tool_recovery_corruption", "c"), ("tool_ledger_corruption", "d"), ("tool_ledger_corruption", "d")], ["u", "d"], [("a", "corruption")], False,
    )
    # Of another tool, with the call's own hash: the identity conflict alone.
    decided = plan(project, [user("u", actions=MARKER), call("c", "a"), dispatch("d", "a", tool="Write")], tmp_path)
    assert summary(decided)[1] == [("tool_recovery_corruption", "c"), ("tool_ledger_corruption", "d")]


def bound(row: dict[str, Any], operation: str = "op-1") -> dict[str, Any]:
    """`row` naming its operation and call in its refs, as maka's T2 writes a dispatched call's response."""
    return {**row, "refs": {"operationId": operation, "toolCallId": row["content"]["id"]}}


@pytest.mark.parametrize("marker", [MARKER, None], ids=["protocol", "no-protocol"])
def test_a_dispatch_after_a_result_naming_no_operation_is_raised_at_both(marker: Any, project: Path, tmp_path: Path) -> None:
    """maka's event_order_conflict at the dispatch, then identity_conflict at the result (not bound to the
    operation the dispatch names): the reference's S_event_order_sql, as JSONL. Every row is replayed."""
    first = user("u", actions=marker) if marker else user("u")
    decided = plan(project, [first, call("c", "a"), result("r", "a"), dispatch("d", "a")], tmp_path)
    assert summary(decided) == (
        "blocked", [("tool_recovery_corruption", "c"), ("tool_ledger_corruption", "d"), ("tool_ledger_corruption", "r")],
        ["u", "c", "r", "d"], [("a", "corruption")], False,
    )


def test_a_dispatch_after_a_result_bound_to_its_operation_is_raised_at_the_dispatch_alone(project: Path, tmp_path: Path) -> None:
    decided = plan(project, [user("u", actions=MARKER), call("c", "a"), bound(result("r", "a")), dispatch("d", "a")], tmp_path)
    assert summary(decided)[:2] == ("blocked", [("tool_recovery_corruption", "c"), ("tool_ledger_corruption", "d")])
    # Bound to another operation: the result is not the dispatch's.
    decided = plan(project, [user("u", actions=MARKER), call("c", "a"), bound(result("r", "a"), "op-2"), dispatch("d", "a")], tmp_path)
    assert summary(decided)[1] == [("tool_recovery_corruption", "c"), ("tool_ledger_corruption", "d"), ("tool_ledger_corruption", "r")]


def test_a_check_raised_at_the_response_is_not_judged_before_there_is_one(project: Path, tmp_path: Path) -> None:
    """The T1/T2 order: the dispatch comes before the result, which names no operation, and nothing is raised."""
    decided = plan(project, [user("u", actions=MARKER), call("c", "a"), dispatch("d", "a"), result("r", "a")], tmp_path)
    assert summary(decided) == ("safe_replay", [], ["u", "c", "d", "r"], [("a", "succeeded")], False)


def test_a_long_ledger_raises_at_the_response_as_a_short_one(project: Path, tmp_path: Path) -> None:
    """Past the reader's chunks (the operation settled long before its dispatch, stored and walked again)."""
    filler = [item for n in range(10000) for item in (call(f"fc{n}", f"f{n}"), result(f"fr{n}", f"f{n}"))]
    rows = [user("u"), call("c", "a"), result("r", "a"), *filler, dispatch("d", "a")]
    assert sum(len(json.dumps(row)) + 1 for row in rows) > 16 * (1 << 18)  # (CHUNKS_AT_HAND * CHUNK_BYTES)
    decided = plan(project, rows, tmp_path)
    assert summary(decided)[1] == [("tool_recovery_corruption", "c"), ("tool_ledger_corruption", "d"), ("tool_ledger_corruption", "r")]


@pytest.mark.parametrize("args_hash", ["sha256:" + "0" * 64, BASH_NO_ARGS.upper(), None])
def test_a_dispatch_whose_hash_is_not_its_calls_corrupts_the_operation(args_hash: Any, project: Path, tmp_path: Path) -> None:
    rows = [user("u", actions=MARKER), call("c", "a"), dispatch("d", "a", args_hash=args_hash), result("r", "a")]
    decided = plan(project, rows, tmp_path)
    # Corrupt for good: the response after it settles nothing (it is diagnosed, and not replayed; nor is the call).
    assert summary(decided) == (
        "blocked", [("tool_recovery_corruption", "c"), ("tool_ledger_corruption", "d"), ("tool_ledger_corruption", "r")],
        ["u", "d"], [("a", "corruption")], False,
    )


@pytest.mark.parametrize("disposition", ["banana", None, 5])
def test_a_decision_that_neither_parks_nor_completes_is_a_lane_conflict(disposition: Any, project: Path, tmp_path: Path) -> None:
    rows = [user("u", actions=MARKER), call("c", "a"), dispatch("d", "a"), result("r", "a"), recovery("f", "a", "recovery_decision", disposition=disposition)]
    decided = plan(project, rows, tmp_path)
    assert summary(decided) == ("blocked", [("semantic_lane_conflict", "f")], ["u", "c", "d", "r"], [("a", "succeeded")], False)


def test_a_repeated_event_id_is_a_diagnostic_and_the_row_takes_no_part(project: Path, tmp_path: Path) -> None:
    # The second r1 would corrupt the operation if it were walked: it is not, and (a result pairing with nothing) is
    # not replayed; a text row repeating an id would be.
    decided = plan(project, [user("u"), call("c", "a"), result("r1", "a"), result("r1", "a"), user("u")], tmp_path)
    assert summary(decided) == ("blocked", [("duplicate_event_id", "r1"), ("duplicate_event_id", "u")], ["u", "c", "r1", "u"], [("a", "succeeded")], False)


def test_a_row_of_another_run_is_a_diagnostic(project: Path, tmp_path: Path) -> None:
    decided = plan(project, [user("u"), call("c", "a", runId="other"), result("r", "a")], tmp_path)
    assert summary(decided) == (
        "blocked", [("tool_ledger_corruption", "c"), ("tool_ledger_corruption", "r"), ("unmatched_tool_result", "r")], ["u"], [], False,
    )


def test_continue_plan_refuses_a_ledger_whose_first_row_is_another_runs(project: Path, tmp_path: Path) -> None:
    """The continuation judges rows by the first one's run: a ledger of another run's rows is not this run's."""
    ledger = tmp_path / "sessions" / "s" / "runs" / "r" / "runtime-events.jsonl"
    ledger.parent.mkdir(parents=True)
    rows = [user("u", runId="x"), call("c", "a", runId="x"), result("r", "a") | {"runId": "x"}]
    ledger.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps({"ledgerReadable": True, "terminalRepairSucceeded": True, "sourceCwd": "/w", "currentCwd": "/w", "sourceWorkspaceIdentity": "w", "currentWorkspaceIdentity": "w", "backgroundOperationsSettled": True, "availableToolNames": ["Bash"], "continuationIdentity": {"invocationId": "i2", "runId": "r2", "turnId": "t2"}}), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "resume_contract", "--root", str(project), "continue-plan", str(ledger), "--facts", str(facts), "--json"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 3 and "foreign_row" in done.stderr and done.stdout == "", (done.returncode, done.stdout, done.stderr)


def test_a_long_ledger_is_planned_as_a_short_one(project: Path, tmp_path: Path) -> None:
    """Past CHUNKS_AT_HAND chunks: ids are kept as hashes, a repeat is found after the walk, and the file is
    walked again with the repeated rows flagged; operations go to the store and come back in order."""
    filler = [item for n in range(10000) for item in (call(f"fc{n}", f"f{n}"), result(f"fr{n}", f"f{n}"))]
    rows = [user("u"), call("c", "a"), result("r1", "a"), *filler, result("r1", "a"), call("x", "b", runId="other"), call("c2", "a")]
    assert sum(len(json.dumps(row)) + 1 for row in rows) > 16 * (1 << 18)  # (CHUNKS_AT_HAND * CHUNK_BYTES)
    decided = plan(project, rows, tmp_path)
    disposition, diagnostics, replay, operations, verification = summary(decided)
    assert (disposition, verification) == ("blocked", False)
    assert diagnostics == [("tool_recovery_corruption", "c"), ("duplicate_event_id", "r1"), ("tool_ledger_corruption", "x"), ("tool_ledger_corruption", "c2")]
    assert replay == ["u", "c", "r1", *(row["id"] for row in filler), "c2"]  # (the second call stands with the pair)
    assert operations[0] == ("a", "corruption") and len(operations) == 10001


def test_without_the_scan_the_reader_refuses_a_repeated_id(gallery_step: Any, tmp_path: Path) -> None:
    ledger = tmp_path / "runtime-events.jsonl"
    ledger.write_text("".join(json.dumps(row) + "\n" for row in [user("u"), user("u")]), encoding="utf-8")
    root = gallery_step("05-permission-closers")
    done = subprocess.run([sys.executable, "-m", "resume_contract", "--root", str(root), "plan", str(ledger), "--json"], capture_output=True, text=True, check=False)
    assert done.returncode == 3 and "duplicate_event_id" in done.stderr and json.loads(done.stdout)["corruption"]["kind"] == "duplicate_event_id", done.stderr


def _generate_with(project: Path, tmp_path: Path, old: str, new: str) -> subprocess.CompletedProcess[str]:
    copy = tmp_path / "project"
    shutil.copytree(project / "spec", copy / "spec")
    spec = copy / "spec" / "projector.yaml"
    source = spec.read_text(encoding="utf-8")
    assert source.count(old) == 1
    spec.write_text(source.replace(old, new), encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "resume_contract", "--root", str(copy), "generate"], capture_output=True, text=True, check=False)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("    at_end: tool_recovery_parked\n", "", "spec/projector.yaml:48:3: absorbing state 'parked' is a dead end diagnosed at the end: it needs at_end"),
        (
            "  - {from: [indeterminate, dispatched], on: recovery_parked, to: parked}\n",
            "  - {from: [indeterminate, dispatched], on: recovery_parked, to: parked}\n  - {from: parked, on: tool_dispatch, to: dispatched}\n",
            "absorbing state 'parked' is left only by an anomaly: a plain transition cannot move it to 'dispatched'",
        ),
        ("  last: [unmatched_tool_result]\n", "  last: [no_such_code]\n", "unknown diagnostic 'no_such_code'"),
        ("  duplicate_id: duplicate_event_id\n", "  duplicate_id: duplicate_id\n", "unknown diagnostic 'duplicate_id'"),
        ("          at: response\n", "          at: result\n", "spec/projector.yaml:99:15: unknown value 'result'; allowed values are [row, response]"),
        (
            "  - {from: absent, on: function_call, to: indeterminate}\n",
            "  - {from: absent, on: function_call, to: indeterminate, anomaly: protocol_marker_invalid}\n",
            "an anomaly creates no operation: from 'absent' a rule raising one cannot also move to 'indeterminate'",
        ),
    ],
)
def test_the_new_constructs_are_checked_at_generate(project: Path, tmp_path: Path, old: str, new: str, message: str) -> None:
    done = _generate_with(project, tmp_path, old, new)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert not (tmp_path / "project" / "generated").exists()


@pytest.mark.slow  # runs every vector or explores: CI runs it, the edit loop (-m 'not slow') does not
def test_diff_of_the_step_with_itself_finds_nothing(project: Path, tmp_path: Path) -> None:
    """A rule that moves and raises is compared as what it is: nothing changed, nothing reported."""
    shutil.copytree(project / "spec", tmp_path / "copy" / "spec")
    done = subprocess.run(
        [sys.executable, "-m", "resume_contract", "--root", str(project), "diff", str(tmp_path / "copy" / "spec"), str(project / "spec")], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0 and "0 changes" in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize(
    ("args", "seen"),
    [(msgspec.Raw(b'{"b":1,"a":[1.0]}'), {"b": 1, "a": [1.0]}), ({"k": msgspec.Raw(b"[1]")}, {"k": [1]}), ([msgspec.Raw(b'"x"')], ["x"]), (msgspec.UNSET, None)],
    ids=["raw", "object of raws", "array of raws", "absent"],
)
def test_an_against_call_check_reads_the_calls_arguments_as_json_whatever_the_model_holds(args: Any, seen: Any, events: Any) -> None:
    """A contract's arguments may be typed an object or an array, or be optional: the check reads them as JSON (or
    null), never failing on the model's Python shape."""
    from resume_contract.core.run_facts import RunView
    from resume_contract.core.table import ActionKind
    from resume_contract.core.walk_actions import against_call
    from resume_contract.core.walk_reads import OpenOperation

    read: list[Any] = []
    action = ActionKind("dispatch", None, lambda row, first, fact: True, lambda row, first, fact: "a", (("code", lambda row, call, response, first, fact: read.append(call) or True, "row"),), "corrupt")
    operation = OpenOperation("waiting", "write", args, 0, "e1")
    assert against_call(action, events.text("e2"), operation, "a", RunView(None, {}, {})) == [("code", "e2")]  # type: ignore[arg-type]
    assert read == [{"id": "a", "name": "write", "args": seen}]


def test_the_explorers_write_results_a_response_check_finds_its_operations_and_not(project: Path) -> None:
    """`diff` and `verify` explore a result holding what the step's check reads of it (`response.refs`): as the
    well-formed dispatch probe names its operation, and otherwise; the walk reads the two apart (walk_reads.reading),
    so neither is merged away with a plain result."""
    from resume_contract.contract import load_generated
    from resume_contract.core.explore import letters_of, projector_view

    contract = load_generated(project)
    letters = {letter.name: letter for letter in letters_of(contract.table, contract.model)}
    results = [name for name in letters if name.endswith(" function_response(a)") and name.startswith("refs ")]
    assert sorted(results) == ['refs {"operationId": "explore-operationId", "toolCallId": "a"} function_response(a)', 'refs {"toolCallId": "a"} function_response(a)']
    view = projector_view(contract.table, contract.model)
    assert len({view(letters[name]) for name in [*results, "function_response(a)"]}) == 3
