"""Property-based tests: long random ledgers with many interleaved calls obey every invariant."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import msgspec
from hypothesis import example, given, settings
from hypothesis import strategies as st
from resume_contract_generated import catalog
from resume_contract_generated.projector_table import TABLE
from resume_contract_generated.runtime_event import RuntimeEvent

from resume_contract.contract import build_resume_plan, event_from_wire
from resume_contract.core.invariants import packaged_oracle, replay_problem, replayed_indexes
from resume_contract.core.plan_json import plan_json
from resume_contract.ledger.file_plan import plan_ledger
from resume_contract.proof.reference import build_resume_plan_with_machine

# The packaged oracle, in the edition of maka's contract the live spec names (spec/invariants.yaml packaged_oracle).
decide = packaged_oracle(getattr(catalog, "PACKAGED_ORACLE", "tool-boundary"))

CALL_IDS = [f"call-{n}" for n in range(12)]
TOOLS = ["read", "write", "delete"]


@st.composite
def wire_ledgers(draw, max_size: int = 250) -> list[dict]:
    kinds = draw(st.lists(st.sampled_from(["text", "call", "call", "response", "response", "error", "terminal"]), max_size=max_size))
    rows = []
    for index, kind in enumerate(kinds):
        call_id = draw(st.sampled_from(CALL_IDS))
        tool = draw(st.sampled_from(TOOLS))
        partial = draw(st.integers(min_value=0, max_value=9)) == 0
        row = {"id": f"e{index}", "ts": index, "partial": partial, "sessionId": "s", "invocationId": "i", "runId": "r", "turnId": "t"}
        if kind == "text":
            row.update(author="user", role="user", content={"kind": "text", "text": "t"})
        elif kind == "terminal":
            status = draw(st.sampled_from(["completed", "failed", "aborted", "cancelled"]))
            row.update(author="agent", role="model", status=status, content={"kind": "text", "text": "done"})
        elif kind == "call":
            row.update(author="agent", role="model", content={"kind": "function_call", "id": call_id, "name": tool, "args": {"n": index}})
        else:
            content = {"kind": "function_response", "id": call_id, "name": tool, "result": {"n": index}}
            if kind == "error":
                content["isError"] = True
            row.update(author="tool", role="tool", content=content)
        rows.append(row)
    return rows


def ledgers(max_size: int = 250):
    return wire_ledgers(max_size).map(lambda rows: (rows, [event_from_wire(row) for row in rows]))


@given(ledgers(), st.one_of(st.none(), st.integers(min_value=0, max_value=300)))
def test_random_ledgers_obey_the_invariants(ledger: tuple[list[dict], list[RuntimeEvent]], expected_high_water: int | None) -> None:
    rows, events = ledger
    snapshot = list(events)
    plan = build_resume_plan(events, expected_high_water)
    assert events == snapshot
    assert build_resume_plan(events, expected_high_water) == plan
    assert msgspec.json.encode(build_resume_plan(list(events), expected_high_water)) == msgspec.json.encode(plan)
    assert plan.source_runtime_event_high_water == len(events)
    if plan.disposition == "safe_replay":
        assert not plan.rejection_reasons and not plan.requires_verification
        assert all(op.status != "indeterminate" for op in plan.operations)
    assert replay_problem(events, replayed_indexes(plan.runtime_events, plan), TABLE) is None
    oracle = decide(rows, expected_high_water)
    assert plan.disposition == oracle.disposition
    assert tuple((op.tool_call_id, op.status) for op in plan.operations) == oracle.statuses
    assert plan.replay_event_ids == oracle.replay_ids
    assert oracle.required_reasons <= set(plan.rejection_reasons)


@given(ledgers(max_size=40))
def test_the_python_statemachine_class_agrees_step_by_step(ledger: tuple[list[dict], list[RuntimeEvent]]) -> None:
    _, events = ledger
    # Not memoized: every transition is taken by a fresh ToolOperationMachine.
    assert build_resume_plan_with_machine(events) == build_resume_plan(events)


@settings(max_examples=150, deadline=None)
@given(wire_ledgers(max_size=60), st.sampled_from([1, 150, 600, 1 << 22]), st.one_of(st.none(), st.integers(0, 70)))
def test_streaming_plans_equal_the_in_memory_oracle_and_statemachine_plans(wires: list[dict], chunk_bytes: int, expected: int | None) -> None:
    # The file is read in chunks of `chunk_bytes` (1: every row its own chunk) and walked chunk by chunk.
    data = b"".join(json.dumps(wire, separators=(",", ":")).encode() + b"\n" for wire in wires)
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "ledger.jsonl"
        path.write_bytes(data)
        streamed = plan_ledger(path, expected, chunk_bytes=chunk_bytes)
        events = [event_from_wire(wire) for wire in wires]
        rows = [msgspec.Raw(line) for line in data.splitlines()]
        in_memory = build_resume_plan(events, expected, rows=rows)
        assert plan_json(streamed) == plan_json(in_memory)
        assert streamed == in_memory
        assert build_resume_plan_with_machine(events, expected, rows=rows) == streamed
        oracle = decide(wires, expected)
        assert streamed.disposition == oracle.disposition
        assert tuple((op.tool_call_id, op.status) for op in streamed.operations) == oracle.statuses
        assert streamed.replay_event_ids == oracle.replay_ids
        assert oracle.required_reasons <= set(streamed.rejection_reasons)


# Ways a planned file's settled operations can be stored (resume_contract/operation_store.py, walk.py): each is
# forced here on small ledgers, where the defaults would rarely reach it.
_STORE_MODES = {
    "as it is": {},
    # Every call id hashes alike: any ledger with two operations is walked twice, keeping them all.
    "every call id a suspect": {"walk.hash": lambda value: 7},
    "a block per record": {"operation_store.BLOCK_BYTES": 1},
}


def _settled_then_named_again(*again: str) -> list[dict]:
    """call(c), ok(c), then `again` ("ok", "call"): a settled operation is stored, then its call id turns up."""
    head = {"ts": 0, "partial": False, "sessionId": "s", "invocationId": "i", "runId": "r", "turnId": "t"}
    kinds = {
        "call": {"author": "agent", "role": "model", "content": {"kind": "function_call", "id": "c", "name": "w", "args": {}}},
        "ok": {"author": "tool", "role": "tool", "content": {"kind": "function_response", "id": "c", "name": "w", "result": {}}},
    }
    return [{**head, "id": f"e{index}", **kinds[kind]} for index, kind in enumerate(["call", "ok", *again])]


@settings(max_examples=300, deadline=None)
@given(wire_ledgers(max_size=60), st.sampled_from([1, 150, 1 << 22]), st.sampled_from(sorted(_STORE_MODES)))
@example(_settled_then_named_again("ok"), 1, "as it is")
@example(_settled_then_named_again("call"), 1, "as it is")
@example(_settled_then_named_again("ok", "call"), 1, "a block per record")
def test_streaming_plans_equal_in_memory_plans_however_settled_operations_are_stored(wires: list[dict], chunk_bytes: int, mode: str) -> None:
    from contextlib import ExitStack
    from unittest import mock

    from resume_contract.core import operation_store, walk

    data = b"".join(json.dumps(wire, separators=(",", ":")).encode() + b"\n" for wire in wires)
    with tempfile.TemporaryDirectory() as scratch, ExitStack() as patches:
        for name, value in _STORE_MODES[mode].items():
            module, _, attribute = name.partition(".")
            patches.enter_context(mock.patch.object({"walk": walk, "operation_store": operation_store}[module], attribute, value, create=True))
        path = Path(scratch) / "ledger.jsonl"
        path.write_bytes(data)
        streamed = plan_ledger(path, chunk_bytes=chunk_bytes)
        in_memory = build_resume_plan([event_from_wire(wire) for wire in wires], rows=[msgspec.Raw(line) for line in data.splitlines()])
        assert plan_json(streamed) == plan_json(in_memory)
        assert streamed == in_memory
        assert [streamed.operations[index] for index in range(len(streamed.operations))] == list(in_memory.operations)
