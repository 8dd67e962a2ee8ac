"""Each anomaly the contract names, on the smallest ledger that shows it, with its exact diagnostics.

Written from the contract and the issue text (not read from the spec): the codes, their order and their
reasons are what a consumer of the plan keys on, so a spec edit that renames or swaps one must fail here.
"""

from __future__ import annotations

import pytest

from resume_contract.plan import build_resume_plan


def _ledger(events, spelled: str):
    built = []
    for number, token in enumerate(spelled.split(), 1):
        kind, _, rest = token.partition(":")
        call_id, _, tool = rest.partition("/")
        event_id = f"e{number}"
        if kind == "text":
            built.append(events.text(event_id))
        elif kind == "end":
            built.append(events.terminal(event_id))
        elif kind == "call":
            built.append(events.call(event_id, call_id, name=tool or "write_file"))
        elif kind == "ok":
            built.append(events.response(event_id, call_id, name=tool or "write_file"))
        elif kind == "err":
            built.append(events.response(event_id, call_id, name=tool or "write_file", is_error=True))
    return built


CASES = [
    # ledger, [(code, eventId)], reasons, statuses
    ("ok:a", [("unmatched_tool_result", "e1")], ["dangling_tool_state"], []),
    ("err:a", [("unmatched_tool_result", "e1")], ["dangling_tool_state"], []),
    ("call:a ok:a/delete", [("tool_name_mismatch", "e2"), ("pending_tool_result", "e1")], ["dangling_tool_state"], ["indeterminate"]),
    ("call:a err:a/delete", [("tool_name_mismatch", "e2"), ("pending_tool_result", "e1")], ["dangling_tool_state"], ["indeterminate"]),
    ("call:a call:a", [("duplicate_tool_call", "e2"), ("pending_tool_result", "e1")], ["dangling_tool_state"], ["indeterminate"]),
    ("call:a ok:a call:a", [("duplicate_tool_call", "e3")], ["dangling_tool_state"], ["succeeded"]),
    ("call:a err:a call:a", [("duplicate_tool_call", "e3")], ["dangling_tool_state"], ["failed"]),
    ("call:a ok:a ok:a", [("duplicate_tool_result", "e3")], ["dangling_tool_state"], ["succeeded"]),
    ("call:a ok:a err:a", [("duplicate_tool_result", "e3")], ["dangling_tool_state"], ["succeeded"]),
    ("call:a err:a ok:a", [("duplicate_tool_result", "e3")], ["dangling_tool_state"], ["failed"]),
    ("call:a err:a err:a", [("duplicate_tool_result", "e3")], ["dangling_tool_state"], ["failed"]),
    ("call:a ok:a ok:a/delete", [("duplicate_tool_result", "e3")], ["dangling_tool_state"], ["succeeded"]),
    ("call:a", [("pending_tool_result", "e1")], ["dangling_tool_state"], ["indeterminate"]),
    ("text end text", [("event_after_terminal", "e3")], ["ledger_sequence_violation"], []),
    ("end call:a", [("event_after_terminal", "e2"), ("pending_tool_result", "e2")], ["dangling_tool_state", "ledger_sequence_violation"], ["indeterminate"]),
    ("call:a ok:a end", [], [], ["succeeded"]),
    ("call:a err:a end", [], [], ["failed"]),
]


@pytest.mark.parametrize(("spelled", "diagnostics", "reasons", "statuses"), CASES, ids=[case[0] for case in CASES])
def test_anomaly(events, spelled: str, diagnostics, reasons, statuses) -> None:
    plan = build_resume_plan(_ledger(events, spelled))
    assert [(d.code, d.event_id) for d in plan.diagnostics] == diagnostics
    assert list(plan.rejection_reasons) == reasons
    assert [op.status for op in plan.operations] == statuses
    assert plan.disposition == ("blocked" if diagnostics else "safe_replay")


def test_a_high_water_mismatch_comes_first(events) -> None:
    plan = build_resume_plan(_ledger(events, "call:a"), expected_high_water=5)
    assert [d.code for d in plan.diagnostics] == ["runtime_offset_mismatch", "pending_tool_result"]
    assert list(plan.rejection_reasons) == ["runtime_offset_mismatch", "dangling_tool_state"]
