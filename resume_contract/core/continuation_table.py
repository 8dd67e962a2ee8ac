"""The continuation table: everything the continuation decision needs from spec/continuation.yaml, as data.

The generated module `resume_contract_generated.continuation_table` holds the one built from the spec (the
generator builds the same table in memory to run the spec's situations before it writes any code); the
interpreter (`continuation.py`) only follows it. Tests and payload values are JSON-like literals, in the
spec's own words (paths such as `input.currentCwd`, tests such as `{"is_false": "input.ledgerReadable"}`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NamedTuple

# What a test may be, and what a ledger fact may be: the interpreter's vocabulary, which the generator checks
# a spec against (one home: a new test is added here, to the interpreter, and to the schema).
TESTS = ("each_open", "no_events", "present", "absent", "is_false", "differ", "any_equal", "missing_from", "not_one_of", "one_of", "raised")
FACT_KINDS = ("lifecycle", "first_differing", "last_replayed_where", "operation_field", "expression")
INPUT_TYPES = ("boolean", "string", "integer", "string_list", "object")
# The Phase 0 plan's fields a path `phase0.NAME` may read -> the ResumePlan attribute.
PHASE0_FIELDS: Mapping[str, str] = MappingProxyType(
    {
        "disposition": "disposition",
        "rejectionReasons": "rejection_reasons",
        "requiresVerification": "requires_verification",
        "sourceRuntimeEventHighWater": "source_runtime_event_high_water",
        "replayRuntimeEvents": "replay_runtime_events",
    }
)
# A ToolOperation's fields an `operation_field` fact may read -> the attribute.
OPERATION_FIELDS: Mapping[str, str] = MappingProxyType({"toolName": "tool_name", "toolCallId": "tool_call_id", "status": "status"})
# What a gate's `planner.NAME` paths may read: the source's header, its ledger, a continuation of it.
PLANNER_FACTS = ("header", "ledger", "existing_continuation")
# What an `each_open` test binds for each open item.
ITEM_FIELDS = ("eventId", "key")


class Check(NamedTuple):
    """One check, in order: fires when every `when` test holds (skipped when any `skip_if` test holds)."""

    name: str
    when: tuple[Mapping[str, Any], ...]
    skip_if: tuple[Mapping[str, Any], ...]
    stops: bool
    diagnostic: str
    event_id: str | None
    detail: Mapping[str, str] | None
    # `when` / `skip_if` written as an expression: the function the generator compiled it to (docs/expressions.md),
    # called with the values continuation.EXPRESSION_NAMES names; `when` / `skip_if` are then empty.
    when_function: Callable[..., bool] | None = None
    skip_function: Callable[..., bool] | None = None
    # With `for_each`: the list it fires for (`when_function` then also takes the item); and, in a check written
    # with expressions, its event_id and detail values (each also takes the item, or None)
    for_each_function: Callable[..., Any] | None = None
    event_id_function: Callable[..., Any] | None = None
    detail_functions: Mapping[str, Callable[..., Any]] | None = None


class EdgeCheck(NamedTuple):
    """A check of the lineage, parking with `diagnostic` alone when it fires: of each edge (`each_edge`:
    `when_function(edge, child, ancestor)`), or of each run before its edge is followed (`each_run`:
    `when_function(edge, run)`)."""

    name: str
    diagnostic: str
    when_function: Callable[..., bool]


@dataclass(frozen=True)
class ContinuationTable:
    """Everything the continuation decision needs from the spec."""

    proceed: str  # the disposition when nothing parks (`continue`)
    stop: str  # the disposition otherwise (`park`)
    # input name -> {"type", "optional", "fields"?: {name -> the same}}
    inputs: Mapping[str, Mapping[str, Any]]
    # RuntimeEvent wire field -> the decoding model's attribute
    event_attributes: Mapping[str, str]
    # (content kind, wire field) -> the attribute of that kind's struct
    content_attributes: Mapping[tuple[str, str], str]
    # fact name -> {kind: its definition} (one of FACT_KINDS)
    ledger_facts: Mapping[str, Mapping[str, Any]]
    # paths of the expected high-water Phase 0 is planned with, the first present
    expected_high_water: tuple[str, ...]
    proceeds_on: str  # the Phase 0 disposition a continuation needs
    checks: tuple[Check, ...]
    # diagnostic code -> (reason it parks with, or None; message)
    diagnostics: Mapping[str, tuple[str | None, str]]
    # reason -> what a person does about it
    remedies: Mapping[str, str]
    # the `continue` payload: name -> a path, {"sorted_distinct": path} or {"if_present": path?, "fields": {...}}
    continuation: Mapping[str, Any]
    # The planner form (`continuation_planner.py`), when the spec has one: its gates, in order (the first that
    # fires decides), and {"host": [...], "inputs": {...}, "existing_continuation": {...}}.
    gates: tuple[Check, ...] = ()
    planner: Mapping[str, Any] | None = None
    # The Phase 1 invariants the spec requires (`continuation_invariants.py` says what each means).
    invariants: tuple[str, ...] = ()
    # An `expression` ledger fact -> the function the generator compiled it to (input, source, events, replay,
    # the facts before it, phase0)
    fact_functions: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    # The check after which Phase 0's reasons and diagnostics stand (None: before every check). Phase 0 is
    # planned first either way: only where its findings are said, and what `raised` holds before it, move.
    phase0_after: str | None = None
    # The planner's walk over the runs the source continued (`continuation_lineage.py`): {edge, run, high_water,
    # depth, after, cycle, too_deep, missing}, and its checks of each edge (None, (): the spec has no lineage).
    lineage: Mapping[str, Any] | None = None
    lineage_checks: tuple[EdgeCheck, ...] = ()
    lineage_run_checks: tuple[EdgeCheck, ...] = ()
    # The planner's inputs filled by an expression (`{expression: ...}`): input -> function(header, events), each
    # read as JSON.
    input_functions: Mapping[str, Callable[[Any, Any], Any]] = field(default_factory=dict)
