"""The frozen spec model turned into what the runtime runs: the projector's lookup tables and the decoding model.

The one home of both: `table_of(spec)` and `decoder_of(spec)`. The renderers, the reviewer, the vector builder
and the checks all take them from here, so each sees the tables `generate` writes. Each is built once per
distinct model (cached by value: a model changed with `dataclasses.replace` gets its own).
"""

from __future__ import annotations

import functools
import json
from typing import Any

from resume_contract.core.summary import PlanSummary
from resume_contract.core.table import ActionKind, ProjectorTable, RowCheck, ToolContentRead
from resume_contract.core.wire import WireModel

from ..expr.probes import probe_rows, read_fields
from .compiled import function_of
from .decoder import load_module, needed_attributes, result_fields
from .model import Decision, EventKind, LedgerRules, Projector, Rule, Spec, WireFormat
from .projector_expressions import CALL_PARAMETERS, FACT_PARAMETERS, GUARD_PARAMETERS, ROW_PARAMETERS
from .witnesses import well_formed_probes


def rule_steps(rule: Rule) -> tuple[tuple[str, str, bool], ...]:
    """The (state, event kind, names match) table keys a rule decides; a rule without `when` decides both."""
    matches = (True, False) if rule.when is None else (rule.when == "name_matches",)
    return tuple((rule.source, rule.event, names_match) for names_match in matches)


@functools.lru_cache(maxsize=8)
def wire_model(wire: WireFormat) -> WireModel:
    """The decoding model rendered from the spec, loaded in memory (the code `generate` writes)."""
    return WireModel(load_module(wire))


def tool_event_shapes(wire: WireFormat) -> tuple[tuple[str, bool], ...]:
    """Every (content kind, error flag) a committed tool event can have; each needs exactly one event kind."""
    shapes: list[tuple[str, bool]] = []
    for kind in wire.content_kinds:
        if kind.tool_call is not None:
            shapes.append((kind.name, False))
            if kind.tool_call.error_flag is not None:
                shapes.append((kind.name, True))
    return tuple(shapes)


def tool_content_reads(wire: WireFormat) -> dict[str, ToolContentRead]:
    """Content kind -> which attributes of its struct carry the call id, tool name, arguments and error flag."""

    def attribute(kind_name: str, field: str | None) -> str | None:
        return None if field is None else wire.kind(kind_name).field(field).attribute

    return {
        kind.name: ToolContentRead(
            opens=kind.tool_call.role == "call",
            call_id=attribute(kind.name, kind.tool_call.call_id) or "",
            tool_name=attribute(kind.name, kind.tool_call.tool_name),
            arguments=attribute(kind.name, kind.tool_call.arguments),
            error_flag=attribute(kind.name, kind.tool_call.error_flag),
        )
        for kind in wire.content_kinds
        if kind.tool_call is not None
    }


def table_of(spec: Spec) -> ProjectorTable:
    """The projector table of a spec (what generated/resume_contract_generated/projector_table.py holds)."""
    return projector_table(spec.projector, spec.ledger_rules, spec.wire)


def decoder_of(spec: Spec) -> WireModel:
    """The decoding model of a spec (what generated/resume_contract_generated/runtime_event.py holds)."""
    return wire_model(spec.wire)


def event_kinds_of(projector: Projector) -> tuple[dict[tuple[str, bool], str], list[tuple[tuple[str, bool], EventKind]]]:
    """(content kind, error flag) -> its event kind without `when`; and the kinds split off by `when`, in order."""
    plain = {(kind.content_kind, kind.is_error): kind.name for kind in projector.events if kind.content_kind is not None and kind.when is None}
    guarded = [((kind.content_kind, kind.is_error), kind) for kind in projector.events if kind.content_kind is not None and kind.when is not None]
    return plain, guarded


def _expressions(projector: Projector, wire: WireFormat) -> dict[str, Any]:
    """The table's fields that the spec's expressions make (docs/language.md), as functions in memory: the
    generated module holds the same compiled source, as `def`s."""
    plain, guarded = event_kinds_of(projector)
    return {
        "event_kinds": plain,
        "facts": {name: function_of(source, FACT_PARAMETERS) for name, (_, source) in projector.facts},
        "kind_guards": tuple((shape, kind.name, function_of(kind.when[1], GUARD_PARAMETERS)) for shape, kind in guarded if kind.when is not None),
        "action_kinds": tuple(
            ActionKind(
                kind.name, needed_attributes(wire, kind.needs), function_of(when[1], ROW_PARAMETERS), function_of(key[1], ROW_PARAMETERS),
                tuple((check.anomaly, function_of(check.when[1], CALL_PARAMETERS), check.at) for check in kind.against_call), kind.conflict_to,
                result_fields(wire, kind),
            )
            for kind, when, key in projector.action_events
        ),
        "row_checks": tuple(
            RowCheck(check.anomaly, needed_attributes(wire, check.needs), function_of(check.when[1], ROW_PARAMETERS), check.skip) for check in projector.row_checks
        ),
        "hidden": hidden_check(projector, wire),
        "hidden_probes": hidden_probes_of(projector),
        "probes": probes_of(projector),
    }


def hidden_check(projector: Projector, wire: WireFormat) -> RowCheck | None:
    """`replay.hidden` as the walk reads it: a RowCheck whose code is the unpaired result's diagnostic."""
    hidden = projector.hidden
    return None if hidden is None else RowCheck(hidden.anomaly, needed_attributes(wire, hidden.needs), function_of(hidden.when[1], ROW_PARAMETERS))


def hidden_probes_of(projector: Projector) -> tuple[str, ...]:
    """The fields (JSON text) of each row that exercises `replay.hidden` (generator/expr/probes.py)."""
    if projector.hidden is None:
        return ()
    rows = [fields for _, fields, _ in probe_rows({}, {}, [projector.hidden.when[0]])]
    # A field read but neither compared nor asked `has(...)` of (`row.modelVisibility` as a condition) is explored
    # with its declared values (core.explore), which it needs a row naming it for
    rows += [{name: {}} for name in read_fields(projector.hidden.when[0]) if not any(name in row for row in rows)]
    return tuple(json.dumps(fields, separators=(",", ":"), ensure_ascii=False) for fields in rows)


def probes_of(projector: Projector) -> tuple[tuple[str, str, bool], ...]:
    """The rows that exercise the projector's expressions (generator/expr/probes.py), as (name, JSON text,
    whether it is read as a run's first row)."""
    actions = {kind.name: (when[0], key[0]) for kind, when, key in projector.action_events}
    tests = [kind.when[0] for kind in projector.events if kind.content_kind is not None and kind.when] + [check.when[0] for check in projector.row_checks]
    if projector.hidden is not None:
        tests.append(projector.hidden.when[0])
    rows = probe_rows(actions, {name: text for name, (text, _) in projector.facts}, tests)
    named = {name for name, _, _ in rows}
    rows += [probe for probe in well_formed_probes(projector) if probe[0] not in named]
    return tuple((name, json.dumps(fields, separators=(",", ":"), ensure_ascii=False), first) for name, fields, first in rows)


@functools.lru_cache(maxsize=16)
def projector_table(projector: Projector, rules: LedgerRules, wire: WireFormat) -> ProjectorTable:
    """The hot-path lookup tables for `resume_contract.projection.project`, built from the spec model."""
    return ProjectorTable(
        **_expressions(projector, wire),
        initial_state=projector.initial,
        tool_contents=tool_content_reads(wire),
        partial_attribute=wire.field(wire.partial_flag).attribute,
        terminal_statuses=frozenset(wire.terminal_statuses),
        terminal_flag=(wire.field(wire.terminal_flag_field).attribute, wire.terminal_flag_key),
        step={key: (rule.next_state, rule.step_anomaly) for rule in projector.rules for key in rule_steps(rule)},
        state_status={state.name: state.status for state in projector.states},
        settled_states=frozenset(state.name for state in projector.states if state.final),
        verification_states=frozenset(state.name for state in projector.states if state.requires_verification),
        at_end={state.name: state.at_end for state in projector.states if state.at_end is not None},
        diagnostics={diagnostic.code: (diagnostic.reason, diagnostic.message) for diagnostic in projector.diagnostics},
        reason_order=tuple(name for name, _ in projector.reasons),
        after_terminal_diagnostic=projector.after_terminal_anomaly,
        high_water_diagnostic=rules.high_water_diagnostic,
        directive=projector.directive,
        duplicate_id_diagnostic=projector.duplicate_id,
        foreign_row_diagnostic=projector.foreign_row,
        operations_first=projector.operations_first,
        listed_last=frozenset(projector.listed_last),
        absorbing_states=frozenset(state.name for state in projector.states if state.absorbing),
    )


def canonical_events(spec: Spec, outcome: str, length: int) -> list[Any]:
    """The first `length` canonical events for `outcome`, decoded by the spec's own decoding model."""
    return [decoder_of(spec).decode_row(event.wire(outcome).encode("utf-8")) for event in spec.ledger.events[:length]]


def expected_replay_ids(spec: Spec, decision: Decision, outcome: str) -> tuple[str, ...]:
    """The event ids the decision table says the provider replay keeps."""
    ids = {event.name: json.loads(event.wire(outcome))["id"] for event in spec.ledger.events}
    return tuple(ids[name] for name in decision.replay)


def decision_summary(spec: Spec, decision: Decision, outcome: str) -> PlanSummary:
    """The plan the decision table requires for one prefix and outcome (replay named by event id)."""
    return PlanSummary(
        disposition=decision.disposition,
        operation_statuses=decision.statuses(outcome),
        diagnostics=decision.diagnostics,
        rejection_reasons=decision.rejection_reasons,
        replay_event_ids=expected_replay_ids(spec, decision, outcome),
        terminal_fact=decision.terminal_fact,
    )
