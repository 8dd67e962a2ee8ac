"""Conformance with the reference implementation: every ledger it wrote is read, and planned as it requires.

The cases are ledgers and workspace runs written by the reference TypeScript RuntimeEventStore, with the
plans its buildResumePlanFromRuntimeEvents returned (tests/conformance/reference, a copy of the shared
conformance set; see its README). They are planned with the contract the reference then had: the gallery's base
(examples/maka-history/base: maka's Phase 0 before the steps of its history; the packaged contract is later).
Per case, as that README says:

1. every row is read (exit 3 only where the case names a documented reader strictness);
2. never safe_replay where the reference is blocked;
3. blocked where the reference is safe_replay only for a documented anomaly the case names, and then only with
   the diagnostic that anomaly is in our contract (STRICTER below);
4. `runtimeEvents` JSON-equal to the reference's (numbers as IEEE doubles, strings exact);
5. where both are safe_replay, `replayRuntimeEvents` JSON-equal to the reference's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from spec_names import Names
from trees import assert_same_tree

from resume_contract.contract import load_generated

HERE = Path(__file__).parent / "conformance" / "reference"
SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "conformance"
MANIFEST = json.loads((HERE / "manifest.json").read_text(encoding="utf-8"))
CASES = {case["name"]: case for case in MANIFEST["cases"]}

STRICTER_KINDS = ("duplicate_call", "duplicate_response", "after_terminal", "response_before_call", "name_mismatch")


@pytest.fixture(scope="module")
def base(gallery_step: Any) -> Path:
    return gallery_step("base")  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def stricter(base: Path) -> dict[str, tuple[str, ...]]:
    """The manifest's documented anomalies -> the diagnostics the base contract raises for each."""
    names = Names(load_generated(base).table)
    return {
        "duplicate_call": names.CALL_AGAIN,
        "duplicate_response": names.ANSWER_AGAIN,
        "after_terminal": (names.AFTER_TERMINAL,),
        "response_before_call": names.UNMATCHED,
        "name_mismatch": names.MISNAMED,
    }
# The manifest's reader strictness kinds -> our corruption kind (spec/decisions.yaml).
STRICT = {
    "torn_tail": "torn_row",
    "blank_line": "invalid_json",
    "duplicate_event_id": "duplicate_event_id",
    "invalid_utf8": "invalid_utf8",
    "schema_violation": "invalid_event",
    "duplicate_json_key": "duplicate_key",
}


def _numbers_as_doubles(text: str) -> Any:
    return json.loads(text, parse_int=float)


def json_equal(a: Any, b: Any) -> bool:
    """Equal as JSON values: numbers as IEEE doubles, booleans never numbers, strings code point for code point."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, float) and isinstance(b, float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[key], b[key]) for key in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _plan_args(case: dict[str, Any]) -> list[str]:
    if case["kind"] == "workspace-merged":
        args = ["plan", "--json", "--workspace", str(HERE / case["ledger"]), "--session", case["session"], "--run", case["run"]]
    elif case["kind"] == "workspace-plain":
        ledger = HERE / case["ledger"] / "sessions" / case["session"] / "runs" / case["run"] / "runtime-events.jsonl"
        args = ["plan", "--json", str(ledger)]
    else:
        args = ["plan", "--json", str(HERE / case["ledger"])]
    if case["expected_high_water"] is not None:
        args += ["--expected-high-water", str(case["expected_high_water"])]
    return args


def test_the_manifest_documents_the_kinds_this_test_maps() -> None:
    assert set(MANIFEST["strict_kinds"]) == set(STRICT)
    assert set(MANIFEST["stricter_kinds"]) == set(STRICTER_KINDS)
    assert len(CASES) == len(MANIFEST["cases"]) >= 37


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/conformance is not beside this checkout")
def test_the_copy_is_the_shared_conformance_set() -> None:
    assert_same_tree(SHARED, HERE)


@pytest.mark.parametrize("name", sorted(CASES))
def test_conforms_to_the_reference(name: str, run_cli, base: Path, stricter: dict[str, tuple[str, ...]]) -> None:
    case = CASES[name]
    reference = json.loads((HERE / case["ref"]).read_text(encoding="utf-8"))
    code, out, err = run_cli("--root", str(base), *_plan_args(case))

    # 1. Every row is read.
    if code == 3:
        assert case["strict_ok"] or case["must_refuse"] or reference["rc"] not in (0, 1), err
        assert any(f": {STRICT[kind]}: " in err for kind in case["strict_ok"]) or case["must_refuse"], err
        return
    assert not case["must_refuse"], f"{name} must be refused as corrupt (exit 3), got {code}"
    assert code in (0, 1), err
    ours = _numbers_as_doubles(out)
    theirs = _numbers_as_doubles(json.dumps(reference["plan"]))
    assert (code == 0) == (ours["disposition"] == "safe_replay")

    # 2. Never safe_replay where the reference is blocked.
    if theirs["disposition"] == "blocked":
        assert ours["disposition"] == "blocked", name
    # 3. Stricter only for a documented anomaly, raised as our contract names it.
    if theirs["disposition"] == "safe_replay" and ours["disposition"] == "blocked":
        allowed = {code for kind in case["stricter_ok"] for code in stricter[kind]}
        raised = {diagnostic["code"] for diagnostic in ours["diagnostics"]}
        assert allowed and raised <= allowed, f"{name}: blocked by {sorted(raised)}; the case documents {case['stricter_ok']}"

    # 4. runtimeEvents: the rows as written, in order.
    assert ours["sourceRuntimeEventHighWater"] == theirs["sourceRuntimeEventHighWater"]
    assert len(ours["runtimeEvents"]) == len(theirs["runtimeEvents"])
    for index, (mine, reference_row) in enumerate(zip(ours["runtimeEvents"], theirs["runtimeEvents"])):
        assert json_equal(mine, reference_row), f"{name}: runtimeEvents[{index}]\nours:   {mine}\ntheirs: {reference_row}"
    # 5. Where both replay, the same rows.
    if ours["disposition"] == theirs["disposition"] == "safe_replay":
        assert json_equal(ours["replayRuntimeEvents"], theirs["replayRuntimeEvents"]), name


def test_json_equal_can_tell_values_apart() -> None:
    assert json_equal(_numbers_as_doubles("[1e+21, 5e-324, -0]"), _numbers_as_doubles("[1000000000000000000000, 5e-324, 0]"))
    assert not json_equal(_numbers_as_doubles('{"a": true}'), _numbers_as_doubles('{"a": 1}'))
    assert not json_equal(_numbers_as_doubles('{"a": null}'), _numbers_as_doubles("{}"))
    assert not json_equal(json.loads('"\\ud83d"'), json.loads('"\\ud83e"'))
    assert not json_equal(_numbers_as_doubles("[1, 2]"), _numbers_as_doubles("[2, 1]"))


def test_the_workspace_audit_reads_runs_with_their_snapshots(run_cli) -> None:
    # The merged read counts the open stream's snapshot (2 events); the JSONL alone holds 1.
    case = CASES["ws_snap_text_open.merged"]
    code, out, err = run_cli("plan", "--json", "--workspace", str(HERE / case["ledger"]), "--jobs", "1")
    run, summary = (json.loads(text) for text in out.splitlines())
    assert (code, err) == (0, "")
    assert (run["sessionId"], run["runId"], run["status"], run["highWater"]) == ("s1", "r1", "safe_replay", 2)
    assert summary["summary"]["total"] == 1
