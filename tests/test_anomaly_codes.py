"""Each anomaly, on the smallest ledger that shows it, with its exact diagnostics.

Written from the contract (not from the projector under test): which ledger is an anomaly, on which event,
in which order, with which reasons and statuses. The diagnostic *names* are the spec's to choose, so each
expectation names the spec rule that must raise it - (state, event) in spec/projector.yaml - and its code is
read from there: splitting an anomaly into a new, more specific diagnostic is then a spec edit only, while a
rule that stops raising one (or raises it on another event) still fails here. Renames are for `diff`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from resume_contract_generator.spec.loader import load_spec_file

from resume_contract.contract import build_resume_plan

# The contract's own loader: YAML 1.1 would read the rules' `on:` key as the boolean True.
PROJECTOR = load_spec_file(Path(__file__).resolve().parent.parent / "spec" / "projector.yaml", "spec/projector.yaml")[0].data


def _names(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else value  # (a rule's `from`, `on` and `anomaly` may be lists)


def raised_by(state: str, event: str, when: str | None = None) -> str:
    """The diagnostic code spec/projector.yaml raises for an event in a state ('at_end': at the ledger's end); of
    a rule raising several, the first."""
    if state == "ledger":
        return PROJECTOR["ledger_anomalies"][event]
    if event == "at_end":
        return PROJECTOR["states"][state]["at_end"]
    rule = next(r for r in PROJECTOR["rules"] if state in _names(r["from"]) and event in _names(r["on"]) and r.get("when") in (when, None))
    return _names(rule["anomaly"])[0]


UNMATCHED = raised_by("absent", "function_response")
UNMATCHED_ERROR = raised_by("absent", "function_response_error")
MISNAMED = raised_by("indeterminate", "function_response", "name_differs")
MISNAMED_ERROR = raised_by("indeterminate", "function_response_error", "name_differs")
PENDING = raised_by("indeterminate", "at_end")
CALL_AGAIN_WHILE_OPEN = raised_by("indeterminate", "function_call")
CALL_AGAIN_AFTER_OK = raised_by("succeeded", "function_call")
CALL_AGAIN_AFTER_ERROR = raised_by("failed", "function_call")
OK_AFTER_OK = raised_by("succeeded", "function_response")
ERROR_AFTER_OK = raised_by("succeeded", "function_response_error")
OK_AFTER_ERROR = raised_by("failed", "function_response")
ERROR_AFTER_ERROR = raised_by("failed", "function_response_error")
AFTER_TERMINAL = raised_by("ledger", "after_terminal")


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
    ("ok:a", [(UNMATCHED, "e1")], ["dangling_tool_state"], []),
    ("err:a", [(UNMATCHED_ERROR, "e1")], ["dangling_tool_state"], []),
    ("call:a ok:a/delete", [(MISNAMED, "e2"), (PENDING, "e1")], ["dangling_tool_state"], ["indeterminate"]),
    ("call:a err:a/delete", [(MISNAMED_ERROR, "e2"), (PENDING, "e1")], ["dangling_tool_state"], ["indeterminate"]),
    ("call:a call:a", [(CALL_AGAIN_WHILE_OPEN, "e2"), (PENDING, "e1")], ["dangling_tool_state"], ["indeterminate"]),
    ("call:a ok:a call:a", [(CALL_AGAIN_AFTER_OK, "e3")], ["dangling_tool_state"], ["succeeded"]),
    ("call:a err:a call:a", [(CALL_AGAIN_AFTER_ERROR, "e3")], ["dangling_tool_state"], ["failed"]),
    ("call:a ok:a ok:a", [(OK_AFTER_OK, "e3")], ["dangling_tool_state"], ["succeeded"]),
    ("call:a ok:a err:a", [(ERROR_AFTER_OK, "e3")], ["dangling_tool_state"], ["succeeded"]),
    ("call:a err:a ok:a", [(OK_AFTER_ERROR, "e3")], ["dangling_tool_state"], ["failed"]),
    ("call:a err:a err:a", [(ERROR_AFTER_ERROR, "e3")], ["dangling_tool_state"], ["failed"]),
    ("call:a ok:a ok:a/delete", [(OK_AFTER_OK, "e3")], ["dangling_tool_state"], ["succeeded"]),
    ("call:a", [(PENDING, "e1")], ["dangling_tool_state"], ["indeterminate"]),
    ("text end text", [(AFTER_TERMINAL, "e3")], ["ledger_sequence_violation"], []),
    ("end call:a", [(AFTER_TERMINAL, "e2"), (PENDING, "e2")], ["dangling_tool_state", "ledger_sequence_violation"], ["indeterminate"]),
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
    assert [d.code for d in plan.diagnostics] == ["runtime_offset_mismatch", PENDING]
    assert list(plan.rejection_reasons) == ["runtime_offset_mismatch", "dangling_tool_state"]
