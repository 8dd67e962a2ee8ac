"""build_resume_plan: the required decisions through the real store, every anomaly, purity, the reference."""

from __future__ import annotations

import copy
import random
from pathlib import Path

import msgspec
import pytest
import spec_names as names
import yaml
from resume_contract_generated.catalog import (
    CANONICAL_LEDGER_ROWS,
    CANONICAL_RUN_ID,
    CANONICAL_SESSION_ID,
    DECISIONS,
    OUTCOMES,
    PREFIX_LENGTHS,
)
from resume_contract_generated.runtime_event import RuntimeEvent

from resume_contract.contract import build_resume_plan
from resume_contract.ledger.store import RuntimeEventStore
from resume_contract.proof.reference import build_resume_plan_with_machine

REPO = Path(__file__).resolve().parent.parent
# The directive's wording is the spec's to choose; the by-hand test checks that it is given, verbatim.
SPEC_DIRECTIVE = yaml.safe_load((REPO / "spec" / "projector.yaml").read_text(encoding="utf-8"))["directive"]


@pytest.mark.parametrize("outcome", OUTCOMES)
@pytest.mark.parametrize("prefix", list(DECISIONS))
def test_required_decisions_hold_on_ledgers_written_through_the_store(tmp_path: Path, prefix: str, outcome: str) -> None:
    with RuntimeEventStore(tmp_path) as store:
        for row in CANONICAL_LEDGER_ROWS[outcome][: PREFIX_LENGTHS[prefix]]:
            store.append(msgspec.json.decode(row, type=RuntimeEvent))
    ledger = RuntimeEventStore(tmp_path).read(CANONICAL_SESSION_ID, CANONICAL_RUN_ID)
    plan = build_resume_plan(ledger.events)
    expected = DECISIONS[prefix]
    assert plan.disposition == expected.disposition
    assert tuple(op.status for op in plan.operations) == expected.operation_statuses[outcome]
    assert tuple(d.code for d in plan.diagnostics) == expected.diagnostics
    assert plan.rejection_reasons == expected.rejection_reasons
    assert plan.replay_event_ids == expected.replay_event_ids[outcome]
    assert (plan.terminal_runtime_event_id is not None) == expected.terminal_fact


def test_the_contract_examples_by_hand(events) -> None:
    # Written from the contract text, independently of the spec files.
    call_only = [events.text("u"), events.call("c", "call-1")]
    plan = build_resume_plan(call_only)
    assert plan.disposition == "blocked"
    assert [op.status for op in plan.operations] == ["indeterminate"]
    assert plan.rejection_reasons == (names.DANGLING,)
    assert plan.requires_verification and plan.directive == SPEC_DIRECTIVE
    assert list(plan.replay_event_ids) == ["u"]

    failed = build_resume_plan(call_only + [events.response("r", "call-1", is_error=True)])
    assert failed.disposition == "safe_replay"
    assert [(op.status, op.response_is_error, op.response_runtime_event_id) for op in failed.operations] == [("failed", True, "r")]
    assert failed.directive is None


def _codes(plan) -> list[str]:
    return [diagnostic.code for diagnostic in plan.diagnostics]


def test_every_anomaly_raises_its_diagnostic_and_blocks(events) -> None:
    cases = [
        (names.UNMATCHED, [events.response("r", "nobody")]),
        (names.MISNAMED, [events.call("c", "k"), events.response("r", "k", name="rm_rf")]),
        (names.CALL_AGAIN, [events.call("c", "k"), events.response("r", "k"), events.call("c2", "k")]),
        (names.ANSWER_AGAIN, [events.call("c", "k"), events.response("r", "k"), events.response("r2", "k")]),
        ((names.PENDING,), [events.call("c", "k")]),
    ]
    after_terminal = [events.text("u"), events.terminal("t"), events.text("late")]
    if names.AFTER_TERMINAL:
        cases.append(((names.AFTER_TERMINAL,), after_terminal))
    else:  # read as any other row, as maka's ledger scan reads it
        assert build_resume_plan(after_terminal).disposition == "safe_replay"
    for codes, ledger in cases:
        plan = build_resume_plan(ledger)
        assert set(codes) <= set(_codes(plan)), (codes, _codes(plan))
        assert plan.disposition == "blocked", codes
        assert {names.reason_of(code) for code in codes} <= set(plan.rejection_reasons), codes


def test_a_name_mismatch_names_both_tools_and_keeps_the_call_out_of_replay(events) -> None:
    plan = build_resume_plan([events.call("c", "k", name="read"), events.response("r", "k", name="delete")])
    mismatch = next(d for d in plan.diagnostics if d.code == names.MISNAMED[0])
    assert mismatch.detail == {"callToolName": "read", "responseToolName": "delete"}
    assert (mismatch.event_id, mismatch.tool_call_id) == ("r", "k")
    assert plan.replay_runtime_events == ()
    assert sorted(_codes(plan)) == sorted([*names.MISNAMED, names.PENDING])  # (their order is the contract's)


def test_a_high_water_mismatch_is_always_runtime_offset_mismatch(events) -> None:
    ledger = [events.text("u")]
    for expected in (0, 2, 100):
        plan = build_resume_plan(ledger, expected_high_water=expected)
        assert plan.disposition == "blocked"
        assert plan.rejection_reasons == (names.OFFSET_MISMATCH,)
        assert plan.diagnostics[0].detail == {"expectedRuntimeEventHighWater": expected, "actualRuntimeEventHighWater": 1}
    assert build_resume_plan(ledger, expected_high_water=1).disposition == "safe_replay"


def test_partial_events_change_nothing_but_count_in_the_high_water(events) -> None:
    ledger = [
        events.text("u"),
        events.call("p1", "k", partial=True),
        events.response("p2", "ghost", partial=True),
        events.text("p3", partial=True, status="streaming"),
    ]
    plan = build_resume_plan(ledger)
    assert plan.disposition == "safe_replay"
    assert plan.operations == () and plan.diagnostics == ()
    assert list(plan.replay_event_ids) == ["u"]
    assert plan.source_runtime_event_high_water == 4


def test_replay_keeps_pairs_in_order_and_drops_unpaired_calls(events) -> None:
    ledger = [
        events.text("u"),
        events.call("c1", "a"),
        events.call("c2", "b"),
        events.response("r2", "b"),
        events.text("m"),
    ]
    plan = build_resume_plan(ledger)
    assert list(plan.replay_event_ids) == ["u", "c2", "r2", "m"]
    assert [op.tool_call_id for op in plan.operations] == ["a", "b"]


def _random_ledger(rng: random.Random, events, length: int) -> list[RuntimeEvent]:
    ledger = []
    for index in range(length):
        call_id = rng.choice(["a", "b", "c"])
        name = rng.choice(["read", "write"])
        choice = rng.randrange(7)
        event_id = f"e{index}"
        partial = rng.random() < 0.1
        if choice == 0:
            ledger.append(events.text(event_id, partial=partial))
        elif choice in (1, 2):
            ledger.append(events.call(event_id, call_id, name=name, partial=partial))
        elif choice in (3, 4):
            ledger.append(events.response(event_id, call_id, name=name, partial=partial))
        elif choice == 5:
            ledger.append(events.response(event_id, call_id, name=name, is_error=True, partial=partial))
        else:
            ledger.append(events.terminal(event_id, partial=partial))
    return ledger


def _is_terminal(event) -> bool:
    # The contract's terminal fact, read straight from the row: a terminal status, or actions.endInvocation: true.
    actions = event.actions if isinstance(event.actions, dict) else {}
    return event.status in ("completed", "failed", "aborted", "cancelled") or actions.get("endInvocation") == msgspec.Raw(b"true")


def test_the_table_and_the_python_statemachine_class_give_identical_plans(events) -> None:
    rng = random.Random(20261129)
    for _ in range(300):
        ledger = _random_ledger(rng, events, rng.randrange(0, 9))
        expected_high_water = rng.choice([None, len(ledger), len(ledger) + 1])
        plan = build_resume_plan(ledger, expected_high_water)
        assert build_resume_plan_with_machine(ledger, expected_high_water) == plan
        first_terminal = next((event.id for event in ledger if not event.partial and _is_terminal(event)), None)
        assert plan.terminal_runtime_event_id == first_terminal


def test_planning_is_pure_and_deterministic(events) -> None:
    rng = random.Random(7)
    for _ in range(100):
        ledger = _random_ledger(rng, events, 8)
        snapshot = copy.deepcopy(ledger)
        first, second = build_resume_plan(ledger), build_resume_plan(list(ledger))
        assert ledger == snapshot
        assert first == second
        assert msgspec.json.encode(first) == msgspec.json.encode(second)
        assert first.disposition == ("safe_replay" if not first.rejection_reasons and not first.requires_verification else "blocked")
