"""The pure projection `committed events -> ToolOperations -> ResumePlan`, driven by a ProjectorTable.

The table is data: the generated module `resume_contract_generated.projector_table` holds the one built from
the spec, and the generator builds the same table from the spec model to check the decision table before it
writes any code. Nothing here names a state, a diagnostic or a reason: it only follows the table, by the
walk in `walk.py`. This module holds the plan's types and `project`, the walk over events in memory.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import msgspec

from .gcpause import gc_paused

Disposition = Literal["safe_replay", "blocked"]

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
    from .walk import Walk  # the walk's module imports this one's types

    all_rows = tuple(rows)
    walk = Walk(table, trace)
    with gc_paused():
        walk.feed(events, 0)
        return walk.plan(len(events), expected_high_water, all_rows, lambda skip: tuple(row for index, row in enumerate(all_rows) if index not in skip))
