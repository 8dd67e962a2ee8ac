"""The plan's types: a `ResumePlan` over a committed prefix, its `ToolOperation`s and `Diagnostic`s.

The walk (`walk.py`) makes them; `plan_json.py` writes them as the reference prints a ResumePlan.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import msgspec

Disposition = Literal["safe_replay", "blocked"]

_ID_ONLY: msgspec.json.Decoder[Any] = msgspec.json.Decoder(msgspec.defstruct("_IdOnly", [("id", str)]))


# The detail of the diagnostic an expected high-water that differs raises (the walk writes it, the text reads it).
EXPECTED_HIGH_WATER = "expectedRuntimeEventHighWater"
ACTUAL_HIGH_WATER = "actualRuntimeEventHighWater"


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


class Verdict(msgspec.Struct, frozen=True):
    """What a plan decides, without its operations and rows (`walk.Walk.verdict`; the workspace audit reads
    only this)."""

    disposition: Disposition
    diagnostics: tuple[Diagnostic, ...]
    rejection_reasons: tuple[str, ...]
    requires_verification: bool


class ResumePlan(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True, kw_only=True):
    """The decision over one committed prefix.

    `runtime_events` is the canonical committed ledger and `replay_runtime_events` what the provider may see
    again: both are the committed rows exactly as written (`msgspec.Raw`, JSON text), never a re-encoding.
    A plan made from events in memory holds tuples; a plan of a ledger file (`plan_ledger`) holds sequences
    read back on demand: its operations from a compact store, its rows from the file. Both compare equal to
    any sequence of equal items.
    """

    disposition: Disposition
    operations: Sequence[ToolOperation]
    diagnostics: tuple[Diagnostic, ...]
    rejection_reasons: tuple[str, ...]
    requires_verification: bool
    source_runtime_event_high_water: int
    directive: str | None = None
    # No default: always printed (null: no terminal fact), as are an empty ledger and an empty replay.
    terminal_runtime_event_id: str | None
    runtime_events: Sequence[msgspec.Raw]
    replay_runtime_events: Sequence[msgspec.Raw]

    @property
    def replay_event_ids(self) -> tuple[str, ...]:
        """The ids of the replayed rows, in order."""
        return tuple(row_event_id(row) for row in self.replay_runtime_events)


def row_event_id(row: msgspec.Raw) -> str:
    """The `id` of one committed row (read alone, without decoding the rest)."""
    try:
        return _ID_ONLY.decode(row).id
    except msgspec.DecodeError:  # lone surrogate escapes: the standard library reads them
        import json

        return json.loads(bytes(row))["id"]
