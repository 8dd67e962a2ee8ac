"""The pure projection `committed events -> ToolOperations -> ResumePlan`, driven by a ProjectorTable.

The table is data: the generated module `resume_contract_generated.projector_table` holds the one built from
the spec, and the generator builds the same table from the spec model to check the decision table before it
writes any code. Nothing here names a state, a diagnostic or a reason: it only follows the table. One walk
over the events, dictionary lookups only, because python-statemachine costs ~1000x a lookup per transition.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from .events import (
    TERMINAL_STATUSES,
    FunctionCallContent,
    FunctionResponseContent,
    RuntimeEvent,
)
from .gcpause import gc_paused

Disposition = Literal["safe_replay", "blocked"]


@dataclass(frozen=True)
class ProjectorTable:
    """Everything the projection needs from the spec, as plain immutable lookups."""

    initial_state: str
    # (state, event kind, response names the call's tool) -> (next state, anomaly diagnostic or None)
    step: Mapping[tuple[str, str, bool], tuple[str, str | None]]
    # (content kind, isError) -> event kind
    event_kinds: Mapping[tuple[str, bool], str]
    state_status: Mapping[str, str | None]
    settled_states: frozenset[str]
    verification_states: frozenset[str]
    at_end: Mapping[str, str]
    # diagnostic code -> (rejection reason, message)
    diagnostics: Mapping[str, tuple[str, str]]
    reason_order: tuple[str, ...]
    after_terminal_diagnostic: str
    high_water_diagnostic: str
    directive: str


class ToolOperation(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    """One tool call id's projected state."""

    tool_call_id: str
    tool_name: str
    args: Any
    status: str
    call_runtime_event_id: str
    response_runtime_event_id: str | None = None
    response_is_error: bool | None = None


class Diagnostic(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    """Why a plan is what it is; `code` and `message` come from the spec."""

    code: str
    message: str
    event_id: str | None = None
    tool_call_id: str | None = None
    tool_name: str | None = None
    detail: dict[str, Any] | None = None


class ResumePlan(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    """The decision over one committed prefix."""

    disposition: Disposition
    operations: tuple[ToolOperation, ...]
    diagnostics: tuple[Diagnostic, ...]
    rejection_reasons: tuple[str, ...]
    requires_verification: bool
    source_runtime_event_high_water: int
    replay_runtime_events: tuple[RuntimeEvent, ...]
    directive: str | None = None
    terminal_runtime_event_id: str | None = None


class _OpenOperation:
    """Mutable bookkeeping for one call id during the walk."""

    __slots__ = ("state", "call", "call_index", "call_event_id", "response_index", "response_event_id", "response_is_error")

    def __init__(self, state: str, call: FunctionCallContent, call_index: int, call_event_id: str) -> None:
        self.state = state
        self.call = call
        self.call_index = call_index
        self.call_event_id = call_event_id
        self.response_index = -1
        self.response_event_id: str | None = None
        self.response_is_error: bool | None = None


Trace = list[tuple[str, str, bool]]


def project(
    events: Sequence[RuntimeEvent],
    table: ProjectorTable,
    expected_high_water: int | None = None,
    trace: Trace | None = None,
) -> ResumePlan:
    """Project a committed prefix into its ResumePlan. Pure: reads `events`, never changes them.

    `trace`, when given, receives every (state, event kind, name matches) step taken, so a caller can say
    which spec rules decided a plan.
    """
    with gc_paused():
        return _project(events, table, expected_high_water, trace)


def _project(
    events: Sequence[RuntimeEvent], table: ProjectorTable, expected_high_water: int | None, trace: Trace | None
) -> ResumePlan:
    step = table.step
    call_kind = table.event_kinds[("function_call", False)]
    response_kind = table.event_kinds[("function_response", False)]
    error_kind = table.event_kinds[("function_response", True)]
    initial = table.initial_state
    operations: dict[str, _OpenOperation] = {}
    find_operation = operations.get
    diagnostics: list[Diagnostic] = []
    # Indexes of events the provider must not see again; every other event is replayed as it stands.
    not_replayed: list[int] = []
    terminal_event_id: str | None = None

    if expected_high_water is not None and expected_high_water != len(events):
        diagnostics.append(
            _diagnostic(
                table,
                table.high_water_diagnostic,
                detail={"expectedRuntimeEventHighWater": expected_high_water, "actualRuntimeEventHighWater": len(events)},
            )
        )

    for index, event in enumerate(events):
        if event.partial:
            not_replayed.append(index)
            continue
        if terminal_event_id is not None:
            diagnostics.append(_diagnostic(table, table.after_terminal_diagnostic, event_id=event.id))
        elif event.status in TERMINAL_STATUSES or (event.actions is not None and event.actions.get("endInvocation") is True):
            terminal_event_id = event.id
        content = event.content
        content_type = type(content)
        if content_type is FunctionCallContent:
            is_error = False
            kind = call_kind
        elif content_type is FunctionResponseContent:
            is_error = content.is_error is True
            kind = error_kind if is_error else response_kind
        else:
            continue
        operation = find_operation(content.id)
        if operation is None:
            state = initial
            names_match = True
        else:
            state = operation.state
            # Only a response is compared with its call (the spec's `when` applies to responses alone).
            names_match = content_type is FunctionCallContent or operation.call.name == content.name
        if trace is not None:
            trace.append((state, kind, names_match))
        target, anomaly = step[(state, kind, names_match)]
        if anomaly is not None:
            not_replayed.append(index)
            detail = None
            if not names_match:
                detail = {"callToolName": operation.call.name, "responseToolName": content.name}  # type: ignore[union-attr]
            diagnostics.append(
                _diagnostic(table, anomaly, event_id=event.id, tool_call_id=content.id, tool_name=content.name, detail=detail)
            )
        elif operation is None:
            # The spec's checks guarantee only a function_call leaves a status-less state.
            operations[content.id] = _OpenOperation(target, content, index, event.id)  # type: ignore[arg-type]
        else:
            operation.state = target
            if content_type is FunctionResponseContent:
                if operation.response_index >= 0:
                    not_replayed.append(operation.response_index)  # superseded: only the settling response pairs
                operation.response_index = index
                operation.response_event_id = event.id
                operation.response_is_error = is_error

    return _assemble(events, table, operations, diagnostics, not_replayed, terminal_event_id)


def _assemble(
    events: Sequence[RuntimeEvent],
    table: ProjectorTable,
    operations: dict[str, _OpenOperation],
    diagnostics: list[Diagnostic],
    not_replayed: list[int],
    terminal_event_id: str | None,
) -> ResumePlan:
    state_status = table.state_status
    settled_states = table.settled_states
    verification_states = table.verification_states
    at_end = table.at_end
    tool_operations: list[ToolOperation] = []
    requires_verification = False
    for call_id, operation in operations.items():
        state = operation.state
        tool_operations.append(
            ToolOperation(
                call_id,
                operation.call.name,
                operation.call.args,
                state_status[state],  # type: ignore[arg-type]  # the spec gives every non-initial state a status
                operation.call_event_id,
                operation.response_event_id,
                operation.response_is_error,
            )
        )
        if state in verification_states:
            requires_verification = True
        if state not in settled_states or operation.response_index < 0:
            # Calls and responses are replayed only as matched pairs.
            not_replayed.append(operation.call_index)
            if operation.response_index >= 0:
                not_replayed.append(operation.response_index)
        end_code = at_end.get(state)
        if end_code is not None:
            diagnostics.append(
                _diagnostic(table, end_code, event_id=operation.call_event_id, tool_call_id=call_id, tool_name=operation.call.name)
            )

    raised = {table.diagnostics[diagnostic.code][0] for diagnostic in diagnostics}
    reasons = tuple(reason for reason in table.reason_order if reason in raised)
    if not_replayed:
        skip = set(not_replayed)
        replay = tuple(event for index, event in enumerate(events) if index not in skip)
    else:
        replay = tuple(events)
    disposition: Disposition = "safe_replay" if not reasons and not requires_verification else "blocked"
    return ResumePlan(
        disposition=disposition,
        operations=tuple(tool_operations),
        diagnostics=tuple(diagnostics),
        rejection_reasons=reasons,
        requires_verification=requires_verification,
        source_runtime_event_high_water=len(events),
        replay_runtime_events=replay,
        directive=table.directive if requires_verification else None,
        terminal_runtime_event_id=terminal_event_id,
    )


def _diagnostic(
    table: ProjectorTable,
    code: str,
    *,
    event_id: str | None = None,
    tool_call_id: str | None = None,
    tool_name: str | None = None,
    detail: dict[str, Any] | None = None,
) -> Diagnostic:
    return Diagnostic(
        code=code,
        message=table.diagnostics[code][1],
        event_id=event_id,
        tool_call_id=tool_call_id,
        tool_name=tool_name,
        detail=detail,
    )
