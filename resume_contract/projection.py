"""The pure projection `committed events -> ToolOperations -> ResumePlan`, driven by a ProjectorTable.

The table is data: the generated module `resume_contract_generated.projector_table` holds the one built from
the spec, and the generator builds the same table from the spec model to check the decision table before it
writes any code. Nothing here names a state, a diagnostic or a reason: it only follows the table. One walk
over the events, dictionary lookups only, because python-statemachine costs ~1000x a lookup per transition.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Literal, NamedTuple

import msgspec

from .gcpause import gc_paused
from .walk_state import KindReads, OpenOperation

Disposition = Literal["safe_replay", "blocked"]

_TRUE = msgspec.Raw(b"true")
_ID_ONLY: msgspec.json.Decoder[Any] = msgspec.json.Decoder(msgspec.defstruct("_IdOnly", [("id", str)]))


class ToolContentRead(NamedTuple):
    """Which attributes of a tool content kind's struct the projection reads (spec/runtime_event.yaml)."""

    opens: bool  # a call: it opens an operation; otherwise a result that settles one
    call_id: str
    tool_name: str | None
    arguments: str | None
    error_flag: str | None


@dataclass(frozen=True)
class ProjectorTable:
    """Everything the projection needs from the spec, as plain immutable lookups."""

    initial_state: str
    # content kind -> how its struct names the call id, tool, arguments and error flag
    tool_contents: Mapping[str, ToolContentRead]
    partial_attribute: str
    terminal_statuses: frozenset[str]
    # (attribute of an object field, key): the event is terminal when that key holds `true`
    terminal_flag: tuple[str, str]
    # (state, event kind, result names the call's tool) -> (next state, anomaly diagnostic or None)
    step: Mapping[tuple[str, str, bool], tuple[str, str | None]]
    # (content kind, error flag) -> event kind
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
    """One tool call id's projected state; `args` are the call's arguments as written."""

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


class ResumePlan(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True, kw_only=True):
    """The decision over one committed prefix.

    `runtime_events` is the canonical committed ledger and `replay_runtime_events` what the provider may see
    again: both are the committed rows exactly as written (`msgspec.Raw`, JSON text), never a re-encoding.
    """

    disposition: Disposition
    operations: tuple[ToolOperation, ...]
    diagnostics: tuple[Diagnostic, ...]
    rejection_reasons: tuple[str, ...]
    requires_verification: bool
    source_runtime_event_high_water: int
    directive: str | None = None
    # No default: always printed (null: no terminal fact), as are an empty ledger and an empty replay.
    terminal_runtime_event_id: str | None
    runtime_events: tuple[msgspec.Raw, ...]
    replay_runtime_events: tuple[msgspec.Raw, ...]

    @property
    def replay_event_ids(self) -> tuple[str, ...]:
        """The ids of the replayed rows, in order."""
        return tuple(row_event_id(row) for row in self.replay_runtime_events)


def row_event_id(row: msgspec.Raw) -> str:
    """The `id` of one committed row (read alone, without decoding the rest)."""
    try:
        return _ID_ONLY.decode(row).id
    except msgspec.DecodeError:  # lone surrogate escapes: the standard library reads them
        return json.loads(bytes(row))["id"]


Trace = list[tuple[str, str, bool]]


def project(
    events: Sequence[Any],
    table: ProjectorTable,
    expected_high_water: int | None = None,
    trace: Trace | None = None,
    rows: Sequence[msgspec.Raw] | None = None,
) -> ResumePlan:
    """Project a committed prefix into its ResumePlan. Pure: reads `events`, never changes them.

    `rows` are the committed rows the events were decoded from, in the same order; the plan hands them back
    verbatim. Without them (events built in Python), each event's canonical encoding is its row.
    `trace`, when given, receives every (state, event kind, name matches) step taken, so a caller can say
    which spec rules decided a plan.
    """
    if rows is None:
        rows = tuple(msgspec.Raw(msgspec.json.encode(event)) for event in events)
    elif len(rows) != len(events):
        raise ValueError(f"{len(rows)} rows for {len(events)} events")
    all_rows = tuple(rows)
    walk = Walk(table, trace)
    with gc_paused():
        walk.feed(events, 0)
        return walk.plan(len(events), expected_high_water, all_rows, lambda skip: tuple(row for index, row in enumerate(all_rows) if index not in skip))


class Walk:
    """The projection as a walk that can be fed the committed events a piece at a time, in order.

    `project` feeds it a whole prefix at once; the ledger reader feeds it chunk by chunk, so a plan over a
    ledger of any length holds its operations and the indexes of rows it leaves out, never the rows.
    """

    def __init__(self, table: ProjectorTable, trace: Trace | None = None) -> None:
        self.table = table
        self.trace = trace
        # Per content kind, everything the walk needs, looked up once per event by the struct's class.
        self.reads = KindReads(table)
        self.operations: dict[str, OpenOperation] = {}
        self.diagnostics: list[Diagnostic] = []
        # Indexes of events the provider must not see again; every other event is replayed as it stands.
        self.not_replayed: list[int] = []
        self.terminal_event_id: str | None = None

    def feed(self, events: Sequence[Any], first_index: int) -> None:
        """Walk the next committed events; the first is the prefix's event `first_index` (0-based)."""
        table = self.table
        trace = self.trace
        step = table.step
        terminal_statuses = table.terminal_statuses
        is_partial = attrgetter(table.partial_attribute)
        flags_of = attrgetter(table.terminal_flag[0])
        flag_key = table.terminal_flag[1]
        initial = table.initial_state
        reads = self.reads
        operations = self.operations
        find_operation = operations.get
        diagnostics = self.diagnostics
        not_replayed = self.not_replayed
        anomaly_at = self._anomaly_at
        terminal_event_id = self.terminal_event_id

        for index, event in enumerate(events, first_index):
            if is_partial(event):
                not_replayed.append(index)
                continue
            if terminal_event_id is not None:
                diagnostics.append(_diagnostic(table, table.after_terminal_diagnostic, event_id=event.id))
            elif event.status in terminal_statuses:
                terminal_event_id = event.id
            else:
                flags = flags_of(event)
                if flags and flags.get(flag_key) == _TRUE:
                    terminal_event_id = event.id
            content = event.content
            read = reads[type(content)]
            if read is None:
                continue
            opens, call_id_of, name_of, error_of, arguments_of, kind_ok, kind_error = read
            call_id = call_id_of(content)
            is_error = error_of is not None and error_of(content) is True
            kind = kind_error if is_error else kind_ok
            tool_name = name_of(content) if name_of is not None else None
            operation = find_operation(call_id)
            if operation is None:
                state = initial
                names_match = True
            else:
                state = operation.state
                # Only a result is compared with its call (the spec's `when` applies to results alone).
                names_match = opens or tool_name is None or operation.tool_name == tool_name
            if trace is not None:
                trace.append((state, kind, names_match))  # type: ignore[arg-type]
            target, anomaly = step[(state, kind, names_match)]  # type: ignore[index]
            if anomaly is not None:
                anomaly_at(index, anomaly, event.id, call_id, tool_name, None if names_match else operation)
            elif operation is None:
                # The spec's checks guarantee only a call leaves a status-less state.
                args = arguments_of(content) if arguments_of is not None else None
                if type(args) is msgspec.Raw:
                    args = args.copy()  # not a view into the chunk it was decoded from, which is let go
                operations[call_id] = OpenOperation(target, tool_name or "", args, index, event.id)
            else:
                operation.state = target
                if not opens:
                    if operation.response_index >= 0:
                        not_replayed.append(operation.response_index)  # superseded: only the settling result pairs
                    operation.response_index = index
                    operation.response_event_id = event.id
                    operation.response_is_error = is_error
        self.terminal_event_id = terminal_event_id

    def _anomaly_at(
        self, index: int, code: str, event_id: str, call_id: str, tool_name: str | None, misnamed: OpenOperation | None
    ) -> None:
        """The event at `index` is an anomaly: it is not replayed, and diagnosed. `misnamed` is the call whose
        tool a result names otherwise, if that is the anomaly."""
        self.not_replayed.append(index)
        detail = None
        if misnamed is not None:
            detail = {"callToolName": misnamed.tool_name, "responseToolName": tool_name}
        self.diagnostics.append(
            _diagnostic(self.table, code, event_id=event_id, tool_call_id=call_id, tool_name=tool_name, detail=detail)
        )

    def plan(
        self,
        high_water: int,
        expected_high_water: int | None,
        rows: Sequence[msgspec.Raw],
        rows_without: Callable[[set[int]], Sequence[msgspec.Raw]],
    ) -> ResumePlan:
        """The plan once every committed event was fed: `rows` are all of them, `rows_without(skip)` them but
        the rows at the indexes in `skip`."""
        table = self.table
        state_status = table.state_status
        settled_states = table.settled_states
        verification_states = table.verification_states
        at_end = table.at_end
        diagnostics = list(self.diagnostics)
        not_replayed = list(self.not_replayed)
        if expected_high_water is not None and expected_high_water != high_water:
            diagnostics.insert(
                0,
                _diagnostic(
                    table,
                    table.high_water_diagnostic,
                    detail={"expectedRuntimeEventHighWater": expected_high_water, "actualRuntimeEventHighWater": high_water},
                ),
            )
        tool_operations: list[ToolOperation] = []
        requires_verification = False
        for call_id, operation in self.operations.items():
            state = operation.state
            tool_operations.append(
                ToolOperation(
                    call_id,
                    operation.tool_name,
                    operation.args,
                    state_status[state],  # type: ignore[arg-type]  # the spec gives every non-initial state a status
                    operation.call_event_id,
                    operation.response_event_id,
                    operation.response_is_error,
                )
            )
            if state in verification_states:
                requires_verification = True
            if state not in settled_states or operation.response_index < 0:
                # Calls and results are replayed only as matched pairs.
                not_replayed.append(operation.call_index)
                if operation.response_index >= 0:
                    not_replayed.append(operation.response_index)
            end_code = at_end.get(state)
            if end_code is not None:
                diagnostics.append(
                    _diagnostic(table, end_code, event_id=operation.call_event_id, tool_call_id=call_id, tool_name=operation.tool_name)
                )

        raised = {table.diagnostics[diagnostic.code][0] for diagnostic in diagnostics}
        reasons = tuple(reason for reason in table.reason_order if reason in raised)
        replay = rows_without(set(not_replayed)) if not_replayed else rows
        disposition: Disposition = "safe_replay" if not reasons and not requires_verification else "blocked"
        return ResumePlan(
            disposition=disposition,
            operations=tuple(tool_operations),
            diagnostics=tuple(diagnostics),
            rejection_reasons=reasons,
            requires_verification=requires_verification,
            source_runtime_event_high_water=high_water,
            directive=table.directive if requires_verification else None,
            terminal_runtime_event_id=self.terminal_event_id,
            # A planned file's rows are `LedgerRows`, read back from it: a Sequence, not a tuple.
            runtime_events=rows,  # type: ignore[arg-type]
            replay_runtime_events=replay,  # type: ignore[arg-type]
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
