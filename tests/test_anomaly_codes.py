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


def _rule(state: str, event: str, when: str | None = None) -> dict:
    return next(r for r in PROJECTOR["rules"] if state in _names(r["from"]) and event in _names(r["on"]) and r.get("when") in (when, None))


def raised_by(state: str, event: str, when: str | None = None) -> list[str]:
    """The diagnostic codes spec/projector.yaml raises, in order, for an event in a state ('at_end': at the ledger's
    end; state 'ledger': a ledger anomaly)."""
    if state == "ledger":
        return [PROJECTOR["ledger_anomalies"][event]]
    if event == "at_end":
        return [PROJECTOR["states"][state]["at_end"]]
    return _names(_rule(state, event, when)["anomaly"])


def moved_to(state: str, event: str) -> str:
    """The state a rule moves an operation to (a rule with `to` and `anomaly` both moves and raises)."""
    return _rule(state, event)["to"]


def at_end_of(state: str) -> list[str]:
    return raised_by(state, "at_end")


UNMATCHED = raised_by("absent", "function_response")
UNMATCHED_ERROR = raised_by("absent", "function_response_error")
MISNAMED = raised_by("indeterminate", "function_response", "name_differs")
MISNAMED_ERROR = raised_by("indeterminate", "function_response_error", "name_differs")
PENDING = at_end_of("indeterminate")
# A row after the terminal event: its diagnostic where the contract declares one (maka's, since its ledger scan, does
# not: such a row is read as any other), and that diagnostic's reason.
AFTER_TERMINAL = raised_by("ledger", "after_terminal") if "after_terminal" in PROJECTOR["ledger_anomalies"] else []
AFTER_TERMINAL_REASONS = [PROJECTOR["diagnostics"][code]["reason"] for code in AFTER_TERMINAL]


def conflict(state: str, event: str) -> tuple[list[str], list[str], str]:
    """A second call or response on an operation in `state`: the row's diagnostics, the operation's at its end
    (the state the rule moved it to), and that state's status."""
    target = moved_to(state, event)
    return raised_by(state, event), at_end_of(target), PROJECTOR["states"][target]["status"]


def ordered(operations: list[tuple[str, str]], in_ledger: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The plan's diagnostics in the spec's `diagnostic_order`: the operations' (raised at the ledger's end) first
    or after those raised in ledger order, and the codes it names `last` after everything."""
    order = PROJECTOR.get("diagnostic_order", {})
    both = operations + in_ledger if order.get("first") == "operations" else in_ledger + operations
    last = order.get("last", [])
    return [d for d in both if d[0] not in last] + [d for d in both if d[0] in last]


def _at(codes: list[str], event_id: str) -> list[tuple[str, str]]:
    return [(code, event_id) for code in codes]


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


def _conflict_case(spelled: str, state: str, event: str, settled: bool = True):
    """A call `a` (settled or not) and a conflicting third (or second) row: the row's diagnostics in ledger order, the
    operation's at its end on its call e1."""
    row_codes, end_codes, status = conflict(state, event)
    row = "e3" if settled else "e2"
    return (spelled, ordered(_at(end_codes, "e1"), _at(row_codes, row)), ["dangling_tool_state"], [status])


CASES = [
    # ledger, [(code, eventId)], reasons, statuses
    ("ok:a", ordered([], _at(UNMATCHED, "e1")), ["dangling_tool_state"], []),
    ("err:a", ordered([], _at(UNMATCHED_ERROR, "e1")), ["dangling_tool_state"], []),
    ("call:a ok:a/delete", ordered(_at(PENDING, "e1"), _at(MISNAMED, "e2")), ["dangling_tool_state"], ["indeterminate"]),
    ("call:a err:a/delete", ordered(_at(PENDING, "e1"), _at(MISNAMED_ERROR, "e2")), ["dangling_tool_state"], ["indeterminate"]),
    _conflict_case("call:a call:a", "indeterminate", "function_call", settled=False),
    _conflict_case("call:a ok:a call:a", "succeeded", "function_call"),
    _conflict_case("call:a err:a call:a", "failed", "function_call"),
    _conflict_case("call:a ok:a ok:a", "succeeded", "function_response"),
    _conflict_case("call:a ok:a err:a", "succeeded", "function_response_error"),
    _conflict_case("call:a err:a ok:a", "failed", "function_response"),
    _conflict_case("call:a err:a err:a", "failed", "function_response_error"),
    _conflict_case("call:a ok:a ok:a/delete", "succeeded", "function_response"),
    ("call:a", _at(PENDING, "e1"), ["dangling_tool_state"], ["indeterminate"]),
    ("text end text", _at(AFTER_TERMINAL, "e3"), AFTER_TERMINAL_REASONS, []),
    ("end call:a", ordered(_at(PENDING, "e2"), _at(AFTER_TERMINAL, "e2")), ["dangling_tool_state", *AFTER_TERMINAL_REASONS], ["indeterminate"]),
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
    assert [d.code for d in plan.diagnostics] == ["runtime_offset_mismatch", *PENDING]
    assert list(plan.rejection_reasons) == ["runtime_offset_mismatch", "dangling_tool_state"]
