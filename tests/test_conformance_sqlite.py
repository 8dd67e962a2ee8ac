"""The reference's SQLite store: every database its own writers wrote is read, and planned as it planned it.

tests/conformance_sqlite/reference is a copy of ../shared/conformance-sqlite (see its README): per case, a
workspace `WS/runtime.sqlite` and `expected.json`, what the reference's read-only reader and planner returned for
the case's run (`check`) and for every other run of the database (`runs`). Per run, as that README says: the exit
code, disposition, rejection reasons, diagnostic codes, operations (call id, status), verification, high-water and
replay ids must be the reference's; a database the reference refuses to open is refused (exit 2 or 3).

Reading never changes the database: its bytes are the same afterwards and no `-wal`/`-shm` file is left beside it.

tests/conformance_sqlite/node holds more such workspaces (tools/node_sqlite_cases.py: rows after the terminal event,
arguments only maka's canonicalizeMainlineV1 hashes right), each on a shared database, planned by maka's own code.

CONTRACT_GAP: the runs whose decision needs what the packaged contract does not say yet (it is maka's as of
maka-history.md step 08; the reference wrote these at its HEAD). The store reads them exactly (their rows, order
and high-water are checked here too). Each is a strict xfail: it fails the suite the day it passes. (None of the
shared set: the last, S_event_order_sql, decides as the reference since a dispatch is checked against the result
already settling its operation, `against_call` ... `at: response`.)
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from trees import assert_same_tree

from resume_contract import plan_run
from resume_contract.errors import LedgerCorruption, StoreError

HERE = Path(__file__).parent / "conformance_sqlite" / "reference"
# What the shared set has none of, planned by maka's own code (tools/node_sqlite_cases.py): rows after the terminal
# event, dispatches of arguments only canonicalizeMainlineV1 hashes right (required/enum arrays, __proto__ keys,
# array-index keys), each on one of the shared databases.
NODE = Path(__file__).parent / "conformance_sqlite" / "node"
SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "conformance-sqlite"
FOLDERS = {path.name: path for base in (HERE, NODE) for path in sorted(base.iterdir()) if (path / "expected.json").is_file()}
CASES = sorted(FOLDERS)

# (case, session, run) -> why the packaged contract decides it otherwise than the reference: a strict xfail. None
# today; the gallery's steps name theirs in examples/maka-history/manifest.json.
CONTRACT_GAP: dict[tuple[str, str, str], str] = {
    (case, "session-1", "run-1"): (
        "a result bound to an operation its dispatch corrupted (the hash) raises nothing in maka's ledger scan; the "
        "packaged contract's corruption state raises tool_ledger_corruption for every later fact"
    )
    for case in ("H_required_enum_sorted_hash", "H_enum_mixed_sorted_hash")
}


def _expected(case: str) -> dict[str, Any]:
    return json.loads((FOLDERS[case] / "expected.json").read_text(encoding="utf-8"))


def _runs() -> list[Any]:
    params = []
    for case in CASES:
        expected = _expected(case)
        listed = [(expected["session"], expected["run"], expected["expectedHighWater"], expected)]
        listed += [(run["session"], run["run"], None, run) for run in expected.get("runs", []) if (run["session"], run["run"]) != listed[0][:2]]
        for session, run, high_water, _want in listed:
            gap = CONTRACT_GAP.get((case, session, run))
            marks = [pytest.mark.xfail(strict=True, reason=gap)] if gap else []
            params.append(pytest.param(case, session, run, high_water, id=f"{case}:{session}/{run}", marks=marks))
    return params


def _workspace(case: str, tmp_path: Path) -> Path:
    shutil.copytree(FOLDERS[case] / "WS", tmp_path / "WS")
    return tmp_path / "WS"


def _want(case: str, session: str, run: str) -> dict[str, Any]:
    expected = _expected(case)
    if (expected["session"], expected["run"]) == (session, run):
        return expected
    return next(item for item in expected["runs"] if (item["session"], item["run"]) == (session, run))


def _digest(directory: Path) -> dict[str, str]:
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in sorted(directory.iterdir())}


def _got(plan: Any) -> dict[str, Any]:
    return {
        "exit": 0 if plan.disposition == "safe_replay" else 1,
        "disposition": plan.disposition,
        "rejectionReasons": list(plan.rejection_reasons),
        "diagnostics": [diagnostic.code for diagnostic in plan.diagnostics],
        "operations": [{"toolCallId": operation.tool_call_id, "status": operation.status} for operation in plan.operations],
        "requiresVerification": plan.requires_verification,
        "sourceRuntimeEventHighWater": plan.source_runtime_event_high_water,
        "replayRuntimeEventIds": list(plan.replay_event_ids),
    }


@pytest.mark.parametrize(("case", "session", "run", "high_water"), _runs())
def test_plan_run_decides_as_the_reference(case: str, session: str, run: str, high_water: int | None, tmp_path: Path) -> None:
    workspace = _workspace(case, tmp_path)
    before = _digest(workspace)
    want = _want(case, session, run)
    outcome = want["reference"]["outcome"]
    try:
        got = _got(plan_run(workspace, session, run, high_water))
    except LedgerCorruption as error:
        got = {"exit": 3, "error": str(error)}
    except StoreError as error:
        got = {"exit": 2, "error": str(error)}
    assert _digest(workspace) == before, "reading changed the workspace"
    if outcome == "open_refused":
        assert got["exit"] in want["check"].get("acceptExit", [2, 3]), got
    elif outcome == "read_error":
        assert got["exit"] == 3, got
    else:
        assert got == {key: want["check"][key] for key in got}, json.dumps(want["check"])


@pytest.mark.parametrize("case", CASES)
def test_the_cli_plans_the_case_as_its_argv_says(case: str, run_cli: Any, tmp_path: Path) -> None:
    expected = _expected(case)
    workspace = _workspace(case, tmp_path)
    argv = [str(workspace) if arg == "WS" else arg for arg in expected["argv"]]
    if expected["expectedHighWater"] is not None and "--expected-high-water" not in argv:
        argv += ["--expected-high-water", str(expected["expectedHighWater"])]
    code, out, err = run_cli(*argv)
    assert _digest(workspace) == _digest(FOLDERS[case] / "WS"), "the plan changed the workspace"  # a -wal or -shm the writer left is kept as it is
    outcome = expected["reference"]["outcome"]
    if outcome == "open_refused":
        assert code in (2, 3) and "schema" in err and out == "", (code, err)
        return
    if (case, expected["session"], expected["run"]) in CONTRACT_GAP:
        pytest.skip(CONTRACT_GAP[(case, expected["session"], expected["run"])])  # (its decision: test_plan_run_decides_as_the_reference)
    if outcome == "read_error":
        assert code == 3 and "corrupt ledger, no plan" in err and json.loads(out)["outcome"] == "corrupt", (code, out, err)
        return
    assert code == expected["exit"], err
    plan = json.loads(out)
    check = expected["check"]
    assert plan["disposition"] == check["disposition"]
    assert plan["rejectionReasons"] == check["rejectionReasons"]
    assert [item["code"] for item in plan["diagnostics"]] == check["diagnostics"]
    assert [{"toolCallId": item["toolCallId"], "status": item["status"]} for item in plan["operations"]] == check["operations"]
    assert plan["requiresVerification"] == check["requiresVerification"]
    assert plan["sourceRuntimeEventHighWater"] == check["sourceRuntimeEventHighWater"]
    assert [event["id"] for event in plan["replayRuntimeEvents"]] == check["replayRuntimeEventIds"]
    assert [event["id"] for event in plan["runtimeEvents"]] == [event["id"] for event in expected["reference"]["plan"]["runtimeEvents"]]


@pytest.mark.parametrize("case", [case for case in CASES if len(_expected(case).get("runs", [])) > 1])
def test_the_audit_gives_one_line_per_run_with_the_reference_decision(case: str, run_cli: Any, tmp_path: Path) -> None:
    expected = _expected(case)
    workspace = _workspace(case, tmp_path)
    code, out, err = run_cli("plan", "--workspace", str(workspace), "--format", "json")
    lines = [json.loads(line) for line in out.splitlines()]
    runs, summary = lines[:-1], lines[-1]["summary"]
    assert [(line["sessionId"], line["runId"]) for line in runs] == [(run["session"], run["run"]) for run in expected["runs"]]
    for line, run in zip(runs, expected["runs"]):
        if (case, run["session"], run["run"]) in CONTRACT_GAP:
            continue
        want = {0: "safe_replay", 1: "blocked", 3: "corrupt"}[run["exit"]]
        assert line["status"] == want, (line, run["check"])
        if run["exit"] in (0, 1):
            assert list(line.get("rejectionReasons", [])) == run["check"]["rejectionReasons"]
            assert line["highWater"] == run["check"]["sourceRuntimeEventHighWater"]
    assert summary["total"] == len(expected["runs"])
    assert code == (3 if summary["corrupt"] else 1 if summary["blocked"] else 0), err


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/conformance-sqlite is not beside this checkout")
def test_the_copy_is_the_shared_set() -> None:
    assert_same_tree(SHARED, HERE)
