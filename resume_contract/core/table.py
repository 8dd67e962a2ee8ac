"""The projector table: everything the projection needs from a spec, as plain immutable lookups.

The table is data: the generated module `resume_contract_generated.projector_table` holds the one built from
the spec, and the generator builds the same table from the spec model in memory to check a spec before it
writes any code. The walk (`walk.py`) only follows it: nothing in the core names a state, a diagnostic or a
reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property

import msgspec


class ToolContentRead(msgspec.Struct, frozen=True):
    """Which attributes of a tool content kind's struct the projection reads (spec/runtime_event.yaml). (A struct:
    a NamedTuple costs every command a million instructions to define.)"""

    opens: bool  # a call: it opens an operation; otherwise a result that settles one
    call_id: str
    tool_name: str | None
    arguments: str | None
    error_flag: str | None


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

    @cached_property
    def anomalies(self) -> frozenset[str]:
        """The diagnostics raised for one event out of place: every rule's anomaly, and an event after the terminal one."""
        return frozenset(anomaly for _, anomaly in self.step.values() if anomaly is not None) | {self.after_terminal_diagnostic}
