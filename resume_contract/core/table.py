"""The projector table: everything the projection needs from a spec, as plain immutable lookups.

The table is data: the generated module `resume_contract_generated.projector_table` holds the one built from
the spec, and the generator builds the same table from the spec model in memory to check a spec before it
writes any code. The walk (`walk.py`) only follows it: nothing in the core names a state, a diagnostic or a
reason.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cached_property
from typing import Any

import msgspec

from ..errors import DUPLICATE_EVENT_ID, FOREIGN_ROW


class ToolContentRead(msgspec.Struct, frozen=True):
    """Which attributes of a tool content kind's struct the projection reads (spec/runtime_event.yaml). (A struct:
    a NamedTuple costs every command a million instructions to define.)"""

    opens: bool  # a call: it opens an operation; otherwise a result that settles one
    call_id: str
    tool_name: str | None
    arguments: str | None
    error_flag: str | None


class ActionKind(msgspec.Struct, frozen=True):
    """An action event (spec/projector.yaml, an event kind without content_kind): a row whose content is no tool
    kind, told by `when` (row, first, fact) and naming its operation by `key` (the same). `needs`: (attribute of
    the event struct, key of its dict or None), one of which any row it can be holds (None: any row may be one)."""

    kind: str
    needs: tuple[tuple[str, str | None], ...] | None
    when: Callable[[Any, Any, Any], bool]
    key: Callable[[Any, Any, Any], Any]
    # `against_call`: wherever the row's operation has a call, each check (code, test of row, call, response, first,
    # fact, and the row it names: "row" or "response") that holds is raised, in order, after the rule's own
    # diagnostics; where the rule would move the operation on without one, it moves to `conflict_to` instead
    against_call: tuple[tuple[str, Callable[[Any, Any, Any, Any, Any], bool], str], ...] = ()
    conflict_to: str | None = None
    # (attribute, wire name) of each field of the operation's result the checks read (`response.F`; None: all of it)
    result_fields: tuple[tuple[str, str], ...] | None = ()


class RowCheck(msgspec.Struct, frozen=True):
    """A diagnostic `code` at every committed row where `when` (row, first, fact) holds; `needs` as ActionKind's;
    with `skip`, such a row takes no part in tool state, and is not replayed."""

    code: str
    needs: tuple[tuple[str, str | None], ...] | None
    when: Callable[[Any, Any, Any], bool]
    skip: bool = False


class ProjectorTable(msgspec.Struct, frozen=True, dict=True):
    """Everything the projection needs from the spec, as plain immutable lookups. (A struct, not a dataclass:
    defining a dataclass of this many fields costs every command about two milliseconds; `msgspec.structs.replace`
    makes a changed copy.)"""

    initial_state: str
    # content kind -> how its struct names the call id, tool, arguments and error flag
    tool_contents: Mapping[str, ToolContentRead]
    partial_attribute: str
    terminal_statuses: frozenset[str]
    # (attribute of an object field, key): the event is terminal when that key holds `true`
    terminal_flag: tuple[str, str]
    # (state, event kind, result names the call's tool) -> (next state, anomaly diagnostic or None): an anomaly
    # keeps the state unless the rule moves it too; one that raises several diagnostics holds a tuple of them
    step: Mapping[tuple[str, str, bool], tuple[str, Any]]
    # (content kind, error flag) -> event kind
    event_kinds: Mapping[tuple[str, bool], str]
    state_status: Mapping[str, str | None]
    settled_states: frozenset[str]
    verification_states: frozenset[str]
    at_end: Mapping[str, str]
    # diagnostic code -> (rejection reason, message)
    diagnostics: Mapping[str, tuple[str, str]]
    reason_order: tuple[str, ...]
    after_terminal_diagnostic: str | None  # None: a row after the terminal event raises nothing of its own
    high_water_diagnostic: str
    directive: str
    # What the contract's expressions add (spec/projector.yaml; none for a contract without them): the run's facts
    # (name -> function of its first event, as JSON); event kinds split off by a test of those facts, in order
    # ((content kind, error flag), event kind, test), before `event_kinds`' own; the action events; the row checks
    facts: Mapping[str, Callable[[Any], Any]] = msgspec.field(default_factory=dict)
    kind_guards: tuple[tuple[tuple[str, bool], str, Callable[[Any], bool]], ...] = ()
    action_kinds: tuple[ActionKind, ...] = ()
    row_checks: tuple[RowCheck, ...] = ()
    # The replay's hidden rows (spec/projector.yaml `replay`): a row where `hidden.when` holds is never replayed,
    # yet drives tool state; a replayed result whose call is hidden raises `hidden.code` ("": nothing), after
    # every other diagnostic of the projection
    hidden: RowCheck | None = None
    # The fields (JSON text) of the rows that exercise the hidden test, for the explorers: each tool row is also
    # explored holding every combination of their values (and of those fields' declared values)
    hidden_probes: tuple[str, ...] = ()
    # The walk's loop specialised for the contract, as the generator wrote it (core/walk_loop.py); None: the generic
    # loop alone (a table made in memory, or one the generator writes no loop for)
    loop: Callable[[Any, Any, int], None] | None = None
    # Rows that exercise those expressions, for the explorers (generator/expr/probes.py): (name, the row's fields
    # as JSON text, whether a run's first row is read through it), each explored as a letter of its own
    probes: tuple[tuple[str, str, bool], ...] = ()
    # spec/projector.yaml `ledger_anomalies`: the diagnostic of a row repeating an earlier row's event id, and of
    # another run's row (None: the reader refuses the ledger); such a row takes no part in tool state
    duplicate_id_diagnostic: str | None = None
    foreign_row_diagnostic: str | None = None
    # `diagnostic_order`: the diagnostics of operations open at the end before those raised in ledger order, and
    # the codes listed after every other
    operations_first: bool = False
    listed_last: frozenset[str] = frozenset()
    # States the contract calls `absorbing` (a dead end diagnosed at the end: parked, corruption): the tool may
    # well have run, so a call left there is no call that never ran
    absorbing_states: frozenset[str] = frozenset()

    @cached_property
    def anomalies(self) -> frozenset[str]:
        """The diagnostics raised for one event out of place: every rule's anomaly, an event after the terminal one,
        and the row checks'."""
        codes = {code for _, anomaly in self.step.values() for code in anomaly_codes(anomaly)} | {check.code for check in self.row_checks}
        codes.update(code for action in self.action_kinds for code, _, _ in action.against_call)
        if self.hidden is not None and self.hidden.code:
            codes.add(self.hidden.code)
        codes.update(code for code in (self.duplicate_id_diagnostic, self.foreign_row_diagnostic) if code)
        codes.update(code for code in (self.after_terminal_diagnostic,) if code)
        return frozenset(codes)

    @cached_property
    def tolerated(self) -> frozenset[str]:
        """The corruption kinds the contract diagnoses instead (the reader flags such rows rather than refuse)."""
        return frozenset(kind for kind, code in ((DUPLICATE_EVENT_ID, self.duplicate_id_diagnostic), (FOREIGN_ROW, self.foreign_row_diagnostic)) if code)

    @cached_property
    def verification_statuses(self) -> frozenset[str]:
        """The statuses of an operation that ask a person to verify it (its state's status is a verification state's):
        what makes a plan require verification."""
        return frozenset(status for state, status in self.state_status.items() if status is not None and state in self.verification_states)

    @cached_property
    def never_ran_statuses(self) -> frozenset[str]:
        """The statuses of a call left open that asks for no verification: it provably never started (such as
        not_dispatched), so nothing is to be inspected."""
        return frozenset(
            status for state, status in self.state_status.items()
            if status is not None and state not in self.verification_states and state not in self.settled_states and state not in self.absorbing_states
        )

    @cached_property
    def tested_fields(self) -> tuple[str, ...] | None:
        """The attributes one of which a row an action event or a row check may judge holds (None: any row)."""
        tests: list[ActionKind | RowCheck] = [*self.action_kinds, *self.row_checks]
        if any(test.needs is None for test in tests):
            return None
        return tuple(dict.fromkeys(name for test in tests for name, _ in test.needs or ()))

    @cached_property
    def keeps_results(self) -> bool:
        """Whether the walk keeps each operation's result (`OpenOperation.response_event`): a check of an action event
        reads it (`against_call`, `response`)."""
        return any(action.result_fields != () for action in self.action_kinds)

    @cached_property
    def result_fields(self) -> tuple[tuple[str, str], ...] | None:
        """The fields of a result the walk keeps once it lets go of the result's chunk (None: every field)."""
        fields: dict[tuple[str, str], None] = {}
        for action in self.action_kinds:
            if action.result_fields is None:
                return None
            fields.update(dict.fromkeys(action.result_fields))
        return tuple(fields)

    @cached_property
    def reads_runs(self) -> bool:
        """Whether the walk reads the run's first event: the contract has facts, or tests of rows."""
        return bool(self.facts or self.kind_guards or self.action_kinds or self.row_checks or self.hidden)


def anomaly_codes(anomaly: Any) -> tuple[str, ...]:
    """The diagnostics of a step's anomaly (`ProjectorTable.step`): none, its code, or its codes."""
    return () if anomaly is None else (anomaly,) if type(anomaly) is str else anomaly
