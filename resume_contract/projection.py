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

from .events import FunctionCallContent, FunctionResponseContent, RuntimeEvent

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
    step = table.step
    call_kind = table.event_kinds[("function_call", False)]
    response_kind = table.event_kinds[("function_response", False)]
    error_kind = table.event_kinds[("function_response", True)]
    initial = table.initial_state
    operations: dict[str, _OpenOperation] = {}
    diagnostics: list[Diagnostic] = []
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
            continue
        if terminal_event_id is not None:
            diagnostics.append(_diagnostic(table, table.after_terminal_diagnostic, event_id=event.id))
        elif event.is_terminal:
            terminal_event_id = event.id
        content = event.content
        if type(content) is FunctionCallContent:
            is_error = False
            kind = call_kind
        elif type(content) is FunctionResponseContent:
            is_error = content.is_error is True
            kind = error_kind if is_error else response_kind
        else:
            continue
        operation = operations.get(content.id)
        state = operation.state if operation is not None else initial
        names_match = operation is None or operation.call.name == content.name
        if trace is not None:
            trace.append((state, kind, names_match))
        target, anomaly = step[(state, kind, names_match)]
        if anomaly is not None:
            detail = None
            if operation is not None and not names_match:
                detail = {"callToolName": operation.call.name, "responseToolName": content.name}
            diagnostics.append(
                _diagnostic(table, anomaly, event_id=event.id, tool_call_id=content.id, tool_name=content.name, detail=detail)
            )
            continue
        if operation is None:
            # The spec's checks guarantee only a function_call leaves a status-less state.
            operations[content.id] = _OpenOperation(target, content, index, event.id)  # type: ignore[arg-type]
            continue
        operation.state = target
        if type(content) is FunctionResponseContent:
            operation.response_index = index
            operation.response_event_id = event.id
            operation.response_is_error = is_error

    return _assemble(events, table, operations, diagnostics, terminal_event_id)


_TOOL_CONTENT = (FunctionCallContent, FunctionResponseContent)


def _assemble(
    events: Sequence[RuntimeEvent],
    table: ProjectorTable,
    operations: dict[str, _OpenOperation],
    diagnostics: list[Diagnostic],
    terminal_event_id: str | None,
) -> ResumePlan:
    tool_operations: list[ToolOperation] = []
    paired_indexes: set[int] = set()
    requires_verification = False
    for call_id, operation in operations.items():
        status = table.state_status[operation.state]
        assert status is not None, "an open operation is always in a state with a status"
        tool_operations.append(
            ToolOperation(
                tool_call_id=call_id,
                tool_name=operation.call.name,
                args=operation.call.args,
                status=status,
                call_runtime_event_id=operation.call_event_id,
                response_runtime_event_id=operation.response_event_id,
                response_is_error=operation.response_is_error,
            )
        )
        if operation.state in table.verification_states:
            requires_verification = True
        if operation.state in table.settled_states and operation.response_index >= 0:
            paired_indexes.add(operation.call_index)
            paired_indexes.add(operation.response_index)
        end_code = table.at_end.get(operation.state)
        if end_code is not None:
            diagnostics.append(
                _diagnostic(table, end_code, event_id=operation.call_event_id, tool_call_id=call_id, tool_name=operation.call.name)
            )

    raised = {table.diagnostics[diagnostic.code][0] for diagnostic in diagnostics}
    reasons = tuple(reason for reason in table.reason_order if reason in raised)
    replay = tuple(
        event
        for index, event in enumerate(events)
        if not event.partial
        and (type(event.content) not in _TOOL_CONTENT or index in paired_indexes)
    )
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
