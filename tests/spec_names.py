"""The names a contract test expects, read from the live contract (spec/, through the generated table): renaming a
diagnostic or a reason is then a spec edit only, and every test that follows a name follows it.

What is pinned is the structure, from the contract's text: the diagnostic raised for an operation left
indeterminate at the end, for an expected high-water that differs, for an event after the terminal one, and
for each anomaly the projector's rule (state, event kind, names match) raises. An anomaly is named by every
diagnostic its rule leads to, in order: its codes, and the at-end diagnostic of the state it moves the operation
to, if it moves it (maka's step 06: a second response corrupts the operation).

`Names(table)` reads the same from another contract's table (a gallery step's, for the tests its references
decided).
"""

from __future__ import annotations

from typing import Any

from resume_contract.contract import active


class Names:
    """The structural names of one contract's table."""

    def __init__(self, table: Any) -> None:
        self.table = table
        verification = sorted(table.verification_states)
        # the call committed, its response not: the state a call opens (without the tool-boundary protocol)
        _call_kind = next(table.event_kinds[(kind, False)] for kind, read in sorted(table.tool_contents.items()) if read.opens)
        opened = table.step[(table.initial_state, _call_kind, True)][0]
        self.PENDING_STATE = opened if opened in table.verification_states else verification[0]
        self.PENDING = table.at_end[self.PENDING_STATE]  # an operation left there at the end of the prefix
        self.DANGLING = self.reason_of(self.PENDING)
        self.HIGH_WATER = table.high_water_diagnostic
        self.OFFSET_MISMATCH = self.reason_of(self.HIGH_WATER)
        # (None where a row after the terminal event raises nothing of its own: maka's contract since step 06)
        self.AFTER_TERMINAL = table.after_terminal_diagnostic
        self.SEQUENCE_VIOLATION = self.reason_of(self.AFTER_TERMINAL) if self.AFTER_TERMINAL else None
        call, response = (table.event_kinds[(kind, False)] for kind, read in sorted(table.tool_contents.items(), key=lambda item: not item[1].opens))
        self.SUCCEEDED = next(state for state in sorted(table.settled_states) if table.state_status[state] == "succeeded")
        self.UNMATCHED = self.raised(table.initial_state, response)
        self.MISNAMED = self.raised(self.PENDING_STATE, response, names_match=False)
        self.CALL_AGAIN = self.raised(self.SUCCEEDED, call)
        self.ANSWER_AGAIN = self.raised(self.SUCCEEDED, response)

    def reason_of(self, code: str) -> str:
        """The rejection reason a diagnostic rejects with."""
        return self.table.diagnostics[code][0]  # type: ignore[no-any-return]

    def raised(self, state: str, event: str, names_match: bool = True) -> tuple[str, ...]:
        """Every diagnostic the projector raises for `event` in `state` (spec/projector.yaml's rule), in order."""
        target, anomaly = self.table.step[(state, event, names_match)]
        assert anomaly is not None, (state, event, names_match)
        codes = (anomaly,) if isinstance(anomaly, str) else tuple(anomaly)
        moved_to = self.table.at_end.get(target) if target != state else None
        return codes + ((moved_to,) if moved_to else ())


_LIVE = Names(active().table)
TABLE = _LIVE.table
reason_of = _LIVE.reason_of
raised = _LIVE.raised
PENDING_STATE = _LIVE.PENDING_STATE
PENDING = _LIVE.PENDING
DANGLING = _LIVE.DANGLING
HIGH_WATER = _LIVE.HIGH_WATER
OFFSET_MISMATCH = _LIVE.OFFSET_MISMATCH
AFTER_TERMINAL = _LIVE.AFTER_TERMINAL
SEQUENCE_VIOLATION = _LIVE.SEQUENCE_VIOLATION
SUCCEEDED = _LIVE.SUCCEEDED
UNMATCHED = _LIVE.UNMATCHED
MISNAMED = _LIVE.MISNAMED
CALL_AGAIN = _LIVE.CALL_AGAIN
ANSWER_AGAIN = _LIVE.ANSWER_AGAIN
