"""The names a contract test expects, read from the live contract (spec/, through the generated table): renaming a
diagnostic or a reason is then a spec edit only, and every test that follows a name follows it.

What is pinned is the structure, from the contract's text: the diagnostic raised for an operation left
indeterminate at the end, for an expected high-water that differs, for an event after the terminal one, and
for each anomaly the projector's rule (state, event kind, names match) raises.
"""

from __future__ import annotations

from resume_contract.contract import active

TABLE = active().table


def reason_of(code: str) -> str:
    """The rejection reason a diagnostic rejects with."""
    return TABLE.diagnostics[code][0]


def raised(state: str, event: str, names_match: bool = True) -> str:
    """The anomaly the projector raises for `event` in `state` (spec/projector.yaml's rule)."""
    anomaly = TABLE.step[(state, event, names_match)][1]
    assert anomaly is not None, (state, event, names_match)
    return anomaly


PENDING_STATE = next(iter(TABLE.verification_states))  # the call committed, its response not
PENDING = TABLE.at_end[PENDING_STATE]  # an operation left there at the end of the prefix
DANGLING = reason_of(PENDING)
HIGH_WATER = TABLE.high_water_diagnostic
OFFSET_MISMATCH = reason_of(HIGH_WATER)
AFTER_TERMINAL = TABLE.after_terminal_diagnostic
SEQUENCE_VIOLATION = reason_of(AFTER_TERMINAL)
_CALL, _RESPONSE = (TABLE.event_kinds[(kind, False)] for kind, read in sorted(TABLE.tool_contents.items(), key=lambda item: not item[1].opens))
SUCCEEDED = next(state for state in sorted(TABLE.settled_states) if TABLE.state_status[state] == "succeeded")
UNMATCHED = raised(TABLE.initial_state, _RESPONSE)
MISNAMED = raised(PENDING_STATE, _RESPONSE, names_match=False)
CALL_AGAIN = raised(SUCCEEDED, _CALL)
ANSWER_AGAIN = raised(SUCCEEDED, _RESPONSE)
