"""Property-based tests: long random ledgers with many interleaved calls obey every invariant."""

from __future__ import annotations

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from resume_contract.events import (
    FunctionCallContent,
    FunctionResponseContent,
    RuntimeEvent,
    TextContent,
)
from resume_contract.oracle import decide
from resume_contract.plan import build_resume_plan
from resume_contract.reference import build_resume_plan_with_machine
from resume_contract.verify import replay_problem

CALL_IDS = [f"call-{n}" for n in range(12)]
TOOLS = ["read", "write", "delete"]


@st.composite
def ledgers(draw, max_size: int = 250) -> list[RuntimeEvent]:
    kinds = draw(st.lists(st.sampled_from(["text", "call", "call", "response", "response", "error", "terminal"]), max_size=max_size))
    events = []
    for index, kind in enumerate(kinds):
        call_id = draw(st.sampled_from(CALL_IDS))
        tool = draw(st.sampled_from(TOOLS))
        partial = draw(st.integers(min_value=0, max_value=9)) == 0
        status = None
        if kind == "text":
            content, author, role = TextContent("t"), "user", "user"
        elif kind == "terminal":
            content, author, role, status = TextContent("done"), "agent", "model", draw(st.sampled_from(["completed", "failed", "aborted", "cancelled"]))
        elif kind == "call":
            content, author, role = FunctionCallContent(call_id, tool, {"n": index}), "agent", "model"
        else:
            content, author, role = FunctionResponseContent(call_id, tool, {"n": index}, True if kind == "error" else None), "tool", "tool"
        events.append(
            RuntimeEvent(
                id=f"e{index}", ts=index, partial=partial, author=author, role=role, session_id="s", invocation_id="i",
                run_id="r", turn_id="t", status=status, content=content,
            )
        )
    return events


@given(ledgers(), st.one_of(st.none(), st.integers(min_value=0, max_value=300)))
def test_random_ledgers_obey_the_invariants(events: list[RuntimeEvent], expected_high_water: int | None) -> None:
    snapshot = list(events)
    plan = build_resume_plan(events, expected_high_water)
    assert events == snapshot
    assert build_resume_plan(events, expected_high_water) == plan
    assert msgspec.json.encode(build_resume_plan(list(events), expected_high_water)) == msgspec.json.encode(plan)
    assert plan.source_runtime_event_high_water == len(events)
    if plan.disposition == "safe_replay":
        assert not plan.rejection_reasons and not plan.requires_verification
        assert all(op.status != "indeterminate" for op in plan.operations)
    assert replay_problem(events, plan) is None
    oracle = decide(events, expected_high_water)
    assert plan.disposition == oracle.disposition
    assert tuple((op.tool_call_id, op.status) for op in plan.operations) == oracle.statuses
    assert tuple(event.id for event in plan.replay_runtime_events) == oracle.replay_ids
    assert oracle.required_reasons <= set(plan.rejection_reasons)


@given(ledgers(max_size=40))
def test_the_python_statemachine_class_agrees_step_by_step(events: list[RuntimeEvent]) -> None:
    # Not memoized: every transition is taken by a fresh ToolOperationMachine.
    assert build_resume_plan_with_machine(events) == build_resume_plan(events)
