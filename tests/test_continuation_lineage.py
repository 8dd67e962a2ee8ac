"""Facts about other runs (spec/continuation.yaml `planner.lineage`): the walk up the runs a source continued, as
tool tests on frozen inputs (the frozen Phase 0 spec, the frozen continuation file tests/frozen_spec/phase1/ and the
schema that admits a lineage, tests/frozen_spec/phase1_order/), with the lineage written here. Editing spec/ never
breaks these.

Expected decisions are written by hand from the rule (maka's RuntimeContinuationPlanner.readLineagePrefixes at
f19eede03), or are the reference's own recorded decisions (tests/conformance_sqlite_phase1: databases maka's writers
wrote), never computed by the code under test.
"""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path
from typing import Any

import phase1_archive
import pytest
from frozen_phase1 import edited
from frozen_phase1 import project as frozen_project
from resume_contract_generator.errors import SpecInvalid
from resume_contract_generator.spec.continuation_situations import continuation_table_of
from resume_contract_generator.spec.tables import decoder_of, table_of
from resume_contract_generator.spec.validate import load_spec

from resume_contract.core.continuation import continuation_summary
from resume_contract.core.continuation_planner import decide_from_run

ANCHOR = "  existing_continuation: {field: continuationSource, run: sourceRunId, high_water: sourceRuntimeEventHighWater}\n"
LINEAGE = """  lineage:
    edge: continuationSource
    run: sourceRunId
    high_water: sourceRuntimeEventHighWater
    depth: 64
    after: ledger
    cycle: runtime_lineage_cycle
    too_deep: runtime_lineage_depth_exceeded
    missing: runtime_lineage_missing
    each_run:
      - name: start
        when: size(run.events) > 0 && run.events[0].role == "system" && (edge == null || run.runId == "r5")
        diagnostic: runtime_lineage_start_mismatch
    each_edge:
      - name: identity
        when: >-
          ancestor.events[0].sessionId != child.events[0].sessionId || ancestor.events[0].runId != edge.sourceRunId
          || ancestor.events[0].invocationId != edge.sourceInvocationId || ancestor.events[0].turnId != edge.sourceTurnId
        diagnostic: runtime_identity_mismatch
"""
DIAGNOSTICS = """  runtime_lineage_cycle: {reason: runtime_lineage_cycle, message: the runs this one continued continue one another}
  runtime_lineage_depth_exceeded: {reason: runtime_lineage_depth_exceeded, message: the runs this one continued go too deep}
  runtime_lineage_missing: {reason: runtime_lineage_missing, message: a run this one continued cannot be read}
  runtime_lineage_start_mismatch: {reason: runtime_lineage_missing, message: a run begun by a start continues by no edge}
"""
REASONS = """  runtime_lineage_cycle: Repair the runs' continuation sources, or start a new run.
  runtime_lineage_depth_exceeded: Start a new run.
  runtime_lineage_missing: Restore the continued run, or start a new run.
"""
HOST = {"currentCwd": "/w", "sourceWorkspaceIdentity": "ws", "currentWorkspaceIdentity": "ws", "backgroundOperationsSettled": True, "availableToolNames": []}
IDS = {"invocationId": "i9", "runId": "r9", "turnId": "t9"}


def _text(lineage: str = LINEAGE) -> str:
    return edited((ANCHOR, ANCHOR + lineage), ("\ndiagnostics:\n", "\ndiagnostics:\n" + DIAGNOSTICS), ("\nreasons:\n", "\nreasons:\n" + REASONS))


@pytest.fixture(scope="module")
def spec(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return load_spec(frozen_project(tmp_path_factory.mktemp("lineage"), _text()))


# -- the walk, on runs held in memory ----------------------------------------------------------------------------


def _event(run: str, number: int, **fields: Any) -> bytes:
    wire = {"id": f"{run}-e{number}", "sessionId": "s", "invocationId": f"i-{run}", "runId": run, "turnId": f"t-{run}", "ts": number, "partial": False}
    return json.dumps(wire | {"role": "user", "author": "user", "content": {"kind": "text", "text": "go"}} | fields).encode()


def _header(run: str, source: str | None = None, high_water: int = 1, **fields: Any) -> dict[str, Any]:
    header: dict[str, Any] = {"runId": run, "sessionId": "s", "invocationId": f"i-{run}", "turnId": f"t-{run}", "status": "completed", "cwd": "/w"}
    if source is not None:
        edge = {"sourceInvocationId": f"i-{source}", "sourceRunId": source, "sourceTurnId": f"t-{source}", "sourceRuntimeEventHighWater": high_water}
        header["continuationSource"] = edge
    return header | fields


def _terminal(run: str, number: int) -> bytes:
    return _event(run, number, role="system", author="system", status="completed", content=None, actions={"endInvocation": True})


def _decide(spec: Any, runs: dict[str, tuple[dict[str, Any] | None, list[bytes] | None]], source: str = "r1", table: Any = None) -> dict[str, Any]:
    decoder = decoder_of(spec)

    def events_of(rows: list[bytes] | None) -> list[Any] | None:
        return None if rows is None else [decoder.decode_row(json.dumps({k: v for k, v in json.loads(row).items() if v is not None}).encode()) for row in rows]

    def read_run(run: str) -> Any:
        return (runs[run][0], events_of(runs[run][1])) if run in runs else None

    header, rows = runs[source]
    others = {run: found[0] for run, found in runs.items() if run != source and found[0] is not None}
    plan = decide_from_run(header, events_of(rows), others, HOST, IDS, table_of(spec), table or continuation_table_of(spec), read_run=read_run)
    return continuation_summary(plan)


def _run(run: str, source: str | None = None, high_water: int = 1, events: int = 1) -> tuple[dict[str, Any], list[bytes]]:
    return _header(run, source, high_water), [_event(run, 1), *[_terminal(run, number) for number in range(2, events + 1)]]


def test_a_root_and_a_chain_whose_edges_hold_continue(spec: Any) -> None:
    assert _decide(spec, {"r1": _run("r1", events=2)})["disposition"] == "continue"
    chain = {"r1": _run("r1", "r2", events=2), "r2": _run("r2", "r3", events=1), "r3": _run("r3")}
    assert _decide(spec, chain)["disposition"] == "continue"


def test_a_lone_surrogate_in_a_row_is_read_as_json_allows_it(spec: Any) -> None:
    # `"\ud800"` escapes a lone surrogate: valid JSON (the reader accepts it), no UTF-8; found by an attack on the walk
    # (an ancestor's prefix holding one was a traceback, and so was the source's)
    text = {"content": {"kind": "text", "text": "\ud800"}}
    ancestor = [_event("r2", 1, **text)]
    assert _decide(spec, {"r1": _run("r1", "r2", events=2), "r2": (_header("r2"), ancestor)})["disposition"] == "continue"
    assert _decide(spec, {"r1": (_header("r1"), [_event("r1", 1, **text), _terminal("r1", 2)])})["disposition"] == "continue"


def test_a_run_met_twice_is_a_cycle(spec: Any) -> None:
    summary = _decide(spec, {"r1": _run("r1", "r2", events=2), "r2": _run("r2", "r1")})
    assert (summary["rejection_reasons"], [d["code"] for d in summary["diagnostics"]]) == (["runtime_lineage_cycle"], ["runtime_lineage_cycle"])
    assert _decide(spec, {"r1": _run("r1", "r1", events=2)})["rejection_reasons"] == ["runtime_lineage_cycle"]  # itself


def test_depth_bounds_the_runs_read_the_source_included(spec: Any) -> None:
    table = continuation_table_of(spec)
    three = dataclasses.replace(table, lineage={**table.lineage, "depth": 3})
    chain = {"r1": _run("r1", "r2", events=2), "r2": _run("r2", "r3"), "r3": _run("r3")}
    assert _decide(spec, chain, table=three)["disposition"] == "continue"  # three runs
    chain["r3"] = _run("r3", "r4")
    chain["r4"] = _run("r4")
    assert _decide(spec, chain, table=three)["rejection_reasons"] == ["runtime_lineage_depth_exceeded"]  # a fourth
    chain["r3"] = _run("r3", "r1")
    assert _decide(spec, chain, table=three)["rejection_reasons"] == ["runtime_lineage_cycle"]  # met before the bound


@pytest.mark.parametrize(
    ("runs", "why"),
    [
        ({"r1": _run("r1", "r2", events=2)}, "no such run"),
        ({"r1": _run("r1", "r2", high_water=2, events=2), "r2": _run("r2", events=1)}, "fewer events than the high-water"),
        ({"r1": _run("r1", "r2", events=2), "r2": (None, [_event("r2", 1)])}, "a header that cannot be read"),
        ({"r1": _run("r1", "r2", events=2), "r2": (_header("r2"), None)}, "a ledger that cannot be read"),
        ({"r1": _run("r1", "r2", high_water=0, events=2), "r2": _run("r2")}, "a high-water of 0"),
        ({"r1": (_header("r1", continuationSource="r2"), [_event("r1", 1), _terminal("r1", 2)]), "r2": _run("r2")}, "an edge that is no object"),
    ],
)
def test_a_continued_run_that_cannot_be_read_to_its_high_water_is_missing(spec: Any, runs: Any, why: str) -> None:
    assert _decide(spec, runs)["rejection_reasons"] == ["runtime_lineage_missing"], why


def test_each_edge_check_reads_the_edge_and_both_runs_and_the_first_failure_decides_alone(spec: Any) -> None:
    header, rows = _run("r1", "r2", events=2)
    header["continuationSource"]["sourceTurnId"] = "t-other"
    assert _decide(spec, {"r1": (header, rows), "r2": _run("r2")})["rejection_reasons"] == ["runtime_identity_mismatch"]
    # the nearer edge fails first: its run is missing, so the cycle above it is never reached
    assert _decide(spec, {"r1": _run("r1", "r2", high_water=5, events=2), "r2": _run("r2", "r1")})["rejection_reasons"] == ["runtime_lineage_missing"]


def test_each_run_check_reads_each_run_and_its_edge_before_the_edge_is_followed(spec: Any) -> None:
    begun = [_event("r1", 1, role="system", author="system", content=None, actions={"note": 1}), _terminal("r1", 2)]
    assert _decide(spec, {"r1": (_header("r1"), begun)})["diagnostics"] == [
        {"code": "runtime_lineage_start_mismatch"}
    ]  # at the source, a root (its edge null)
    ancestor = [_event("r2", 1, role="system", author="system", content=None, actions={"note": 1})]
    summary = _decide(spec, {"r1": _run("r1", "r2", events=2), "r2": (_header("r2"), ancestor)})
    assert [d["code"] for d in summary["diagnostics"]] == ["runtime_lineage_start_mismatch"]  # at an ancestor
    # before its edge is followed: r5's edge names a run that is not there, and the run check decides
    begun = [_event("r5", 1, role="system", author="system", content=None, actions={"note": 1}), _terminal("r5", 2)]
    summary = _decide(spec, {"r5": (_header("r5", "r6"), begun)}, source="r5")
    assert [d["code"] for d in summary["diagnostics"]] == ["runtime_lineage_start_mismatch"]


def test_the_walk_stands_after_its_gate(spec: Any) -> None:
    # an unreadable source header parks by its gate, before any walk
    assert _decide(spec, {"r1": (None, [_event("r1", 1)]), "r2": _run("r2")})["rejection_reasons"] == ["source_run_unreadable"]
    # a continuation of the source (the already_continued gate, after the walk) parks only once the walk holds
    runs = {"r1": _run("r1", "r2", high_water=5, events=2), "r2": _run("r2"), "r7": (_header("r7", "r1", high_water=2), None)}
    assert _decide(spec, runs)["rejection_reasons"] == ["runtime_lineage_missing"]
    runs["r1"] = _run("r1", "r2", events=2)
    assert _decide(spec, runs)["rejection_reasons"] == ["continuation_already_exists"]


# -- the spec ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("    after: ledger\n", "    after: ledgers\n", "'ledgers' names no gate; the lineage is walked after one of [source_run, ledger, already_continued]"),
        ("    cycle: runtime_lineage_cycle\n", "    cycle: lineage_loop\n", "undeclared diagnostic 'lineage_loop'"),
        ("        diagnostic: runtime_identity_mismatch\n", "        diagnostic: lineage_identity\n", "undeclared diagnostic 'lineage_identity'"),
        ("ancestor.events[0].sessionId != child", "parent.events[0].sessionId != child", "parent"),
        ("    depth: 64\n", "    depth: 0\n", "0 is less than the minimum of 1"),
    ],
)
def test_a_lineage_that_could_not_be_walked_is_refused_at_its_line(old: str, new: str, message: str, tmp_path: Path) -> None:
    text = _text(LINEAGE.replace(old, new))
    with pytest.raises(SpecInvalid) as invalid:
        load_spec(frozen_project(tmp_path, text))
    errors = [error for error in invalid.value.errors if message in error.message]
    assert errors, invalid.value
    lines = text.splitlines()
    first = lines.index("  lineage:") + 1
    assert all(error.mark.file == "spec/continuation.yaml" and first <= error.mark.line <= first + LINEAGE.count("\n") for error in errors), errors


# -- through the command, on workspaces: run.json files, and maka's runtime.sqlite ---------------------------------


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from resume_contract.cli import main

    root = frozen_project(tmp_path_factory.mktemp("project"), _text())
    assert main(["--root", str(root), "generate"], out=io.StringIO(), err=io.StringIO()) == 0
    return root


def _jsonl_workspace(root: Path, runs: dict[str, tuple[dict[str, Any] | None, list[bytes] | None]]) -> Path:
    for run, (header, rows) in runs.items():
        directory = root / "sessions" / "s" / "runs" / run
        directory.mkdir(parents=True)
        if header is not None:
            (directory / "run.json").write_text(json.dumps(header), encoding="utf-8")
        if rows is not None:
            (directory / "runtime-events.jsonl").write_bytes(b"".join(json.dumps({k: v for k, v in json.loads(row).items() if v is not None}).encode() + b"\n" for row in rows))
    return root


def _plan(run_cli: Any, project: Path, workspace: Path, host: dict[str, Any], session: str, run: str, tmp_path: Path) -> tuple[int, dict[str, Any], str]:
    (tmp_path / "host.json").write_text(json.dumps(host), encoding="utf-8")
    code, out, err = run_cli("--root", str(project), "continue-plan", "--workspace", str(workspace), "--session", session, "--run", run, "--host", str(tmp_path / "host.json"), "--ids", "i9,r9,t9", "--json")
    return code, json.loads(out) if out.startswith("{") else {}, err


def test_a_workspace_of_run_files_is_walked(project: Path, run_cli: Any, tmp_path: Path) -> None:
    held = _jsonl_workspace(tmp_path / "held", {"r1": _run("r1", "r2", events=2), "r2": _run("r2", "r3"), "r3": _run("r3")})
    code, plan, err = _plan(run_cli, project, held, HOST, "s", "r1", tmp_path)
    assert (code, plan.get("disposition")) == (0, "continue"), err
    short = _jsonl_workspace(tmp_path / "short", {"r1": _run("r1", "r2", high_water=2, events=2), "r2": _run("r2")})
    code, plan, err = _plan(run_cli, project, short, HOST, "s", "r1", tmp_path)
    assert (code, plan.get("rejectionReasons")) == (1, ["runtime_lineage_missing"]), err
    hostile = _jsonl_workspace(tmp_path / "hostile", {"r1": (_header("r1", "../r2"), [_event("r1", 1), _terminal("r1", 2)])})
    code, plan, err = _plan(run_cli, project, hostile, HOST, "s", "r1", tmp_path)
    assert (code, plan.get("rejectionReasons")) == (1, ["runtime_lineage_missing"]), err  # a name that is no run id is no run


@pytest.mark.parametrize("name", ["lineage_cycle", "lineage_missing_ancestor", "lineage_identity_mismatch", "lineage_depth_exceeded"])
def test_a_runtime_sqlite_workspace_is_walked_as_the_reference_decided(name: str, project: Path, run_cli: Any, tmp_path: Path) -> None:
    expected = phase1_archive.expected()[name]
    args, expect = expected["args"], expected["expect"]
    workspace = tmp_path / "ws"
    for member, data in phase1_archive.members().items():
        if member.startswith(f"{name}/ws/"):
            (workspace / member.removeprefix(f"{name}/ws/")).parent.mkdir(parents=True, exist_ok=True)
            (workspace / member.removeprefix(f"{name}/ws/")).write_bytes(data)
    host = {key: args[key] for key in ("currentCwd", "sourceWorkspaceIdentity", "currentWorkspaceIdentity", "backgroundOperationsSettled", "availableToolNames") if key in args}
    code, plan, err = _plan(run_cli, project, workspace, host, args["sessionId"], args["sourceRunId"], tmp_path)
    assert (code, plan.get("rejectionReasons"), [d["code"] for d in plan.get("diagnostics", [])]) == (expect["exit"], expect["rejectionReasons"], expect["diagnostics"]), err
