"""The continuation decision table's situations: their events as ledger rows, the table the interpreter follows,
and each situation run through it before anything is written (a situation that disagrees refuses the spec, at
its `expect` line, as a Phase 0 decision that contradicts the projector does)."""

from __future__ import annotations

import json
from typing import Any

from resume_contract.core.continuation import ContinuationPlan, continuation_summary, decide_continuation
from resume_contract.core.continuation_planner import decide_from_run, decide_latest
from resume_contract.core.continuation_table import Check, ContinuationTable, EdgeCheck
from resume_contract.core.table import ProjectorTable
from resume_contract.errors import ExpressionFailed, FactsRefused, RowRefused

from ..errors import SpecError
from .compiled import function_of
from .continuation_expressions import FACT_PARAMETERS, check_functions
from .continuation_lineage import EDGE_PARAMETERS, RUN_PARAMETERS
from .continuation_model import CheckDecl, ContinuationSpec, PlannerSituation, Situation
from .model import Spec, WireFormat
from .tables import table_of, wire_model


def situation_events(base: dict[str, Any], events: list[Any], wire: WireFormat, ids: str = "event") -> tuple[list[str], list[tuple[int, str]]]:
    """Each event of a situation as its ledger row (JSON text, the wire format's field order): `base` fills what
    the event does not say, ids are event-1, event-2, ... (`ids`-1, ...) and `ts` the position. Problems are
    (index, message)."""
    rows: list[str] = []
    problems: list[tuple[int, str]] = []
    order = [field.name for field in wire.fields]
    for index, event in enumerate(events):
        if not isinstance(event, dict):
            problems.append((index, "an event is a mapping of RuntimeEvent fields"))
            continue
        merged = {"id": f"{ids}-{index + 1}", "ts": index + 1, **base, **event}
        unknown = [key for key in merged if key not in order]
        if unknown:
            problems.append((index, f"unknown RuntimeEvent field '{unknown[0]}'; the fields are [{', '.join(order)}]"))
            continue
        row = json.dumps({name: merged[name] for name in order if name in merged}, ensure_ascii=False, separators=(",", ":"))
        try:
            wire_model(wire).decode_row(row.encode("utf-8"))
        except RowRefused as refused:
            problems.append((index, f"not a RuntimeEvent: {refused}"))
            continue
        rows.append(row)
    return rows, problems


def continuation_table_of(spec: Spec) -> ContinuationTable:
    """The continuation table of a spec that has a continuation decision (what continuation_table.py holds)."""
    continuation = spec.continuation
    assert continuation is not None
    wire = spec.wire
    return ContinuationTable(
        proceed=continuation.proceed,
        stop=continuation.stop,
        inputs={decl.name: decl.as_table() for decl in continuation.inputs},
        event_attributes={field.name: field.attribute for field in wire.fields},
        content_attributes={(kind.name, field.name): field.attribute for kind in wire.content_kinds for field in kind.fields},
        ledger_facts={fact.name: {fact.kind: fact.definition} for fact in continuation.ledger_facts},
        expected_high_water=continuation.expected_high_water,
        proceeds_on=continuation.proceeds_on,
        phase0_after=continuation.phase0_after,
        lineage=None if continuation.lineage is None else json.loads(continuation.lineage.json),
        lineage_checks=tuple(
            EdgeCheck(name, diagnostic, function_of(source, EDGE_PARAMETERS)) for name, diagnostic, _, source in continuation.lineage.checks
        ) if continuation.lineage is not None else (),
        input_functions={name: function_of(source, ("header", "events")) for name, _, source in continuation.input_expressions},
        lineage_run_checks=tuple(
            EdgeCheck(name, diagnostic, function_of(source, RUN_PARAMETERS)) for name, diagnostic, _, source in continuation.lineage.run_checks
        ) if continuation.lineage is not None else (),
        checks=tuple(_check(check) for check in continuation.checks),
        diagnostics={diagnostic.code: (diagnostic.reason, diagnostic.message) for diagnostic in continuation.diagnostics},
        remedies=dict(continuation.reasons),
        continuation=continuation.payload,
        gates=tuple(_check(gate) for gate in continuation.gates),
        planner=continuation.planner,
        invariants=tuple(name for name, _ in continuation.invariants),
        fact_functions={
            fact.name: function_of(fact.expression[1], FACT_PARAMETERS) for fact in continuation.ledger_facts if fact.expression is not None
        },
    )


def _check(check: CheckDecl) -> Check:
    functions = {field: function_of(source, parameters) for field, (source, parameters) in check_functions(check).items()}
    details = {field.partition(".")[2]: function for field, function in functions.items() if field.startswith("detail_functions.")}
    return Check(
        name=check.name,
        when=tuple(check.when),
        skip_if=tuple(check.skip_if),
        stops=check.stops,
        diagnostic=check.diagnostic,
        event_id=check.event_id,
        detail=check.detail,
        when_function=functions.get("when_function"),
        skip_function=functions.get("skip_function"),
        for_each_function=functions.get("for_each_function"),
        event_id_function=functions.get("event_id_function"),
        detail_functions=details or None,
    )


def expected_summary(situation: Situation | PlannerSituation) -> dict[str, Any]:
    """What a situation says its decision is, in `continuation_summary`'s shape (defaults filled)."""
    expect = situation.expect
    summary: dict[str, Any] = {
        "disposition": expect["disposition"],
        "rejection_reasons": expect.get("rejection_reasons", []),
        "diagnostics": expect.get("diagnostics", []),
    }
    if "continuation" in expect:
        summary["continuation"] = expect["continuation"]
    return summary


def source_run(continuation: ContinuationSpec) -> str:
    """The run id every situation's events belong to (the base event's)."""
    return str(json.loads(continuation.base_event_json).get("runId", ""))


def decide_planner_situation(
    latest: bool, run: str, header: Any, events: list[Any], others: dict[str, Any], host: Any, ids: dict[str, str],
    projector: ProjectorTable, table: ContinuationTable, other_events: dict[str, list[Any]] | None = None,
) -> ContinuationPlan:
    """A planner situation's decision: of run `run` (its header and events), or as `--latest` picks among it and
    the other runs (only `run` has a ledger to pick; `other_events` are the other runs' events the lineage reads)."""
    def read_run(other: str) -> tuple[Any, Any] | None:
        found = others.get(other)
        return (found, (other_events or {})[other]) if isinstance(found, dict) and other in (other_events or {}) else None

    if not latest:
        return decide_from_run(header, events, others, host, ids, projector, table, read_run=read_run)
    headers = {run: header, **others}
    return decide_latest(headers, lambda picked: (events, None) if picked == run else (None, None), host, ids, projector, table, read_run)[1]


def other_events_of(planned: PlannerSituation, model: Any) -> dict[str, list[Any]]:
    """A planner situation's other runs' events, decoded."""
    return {run: [model.decode_row(row.encode("utf-8")) for row in rows] for run, rows in planned.value("other_events").items()}


def situation_errors(spec: Spec) -> list[SpecError]:
    """Every situation whose expectation names what nothing can raise, or that the checks decide otherwise."""
    continuation = spec.continuation
    if continuation is None:
        return []
    errors: list[SpecError] = []
    projector = table_of(spec)
    table = continuation_table_of(spec)
    reasons = {name for name, _ in spec.projector.reasons} | {d.reason for d in continuation.diagnostics if d.reason}
    codes = {d.code for d in spec.projector.diagnostics} | {d.code for d in continuation.diagnostics}
    model = wire_model(spec.wire)
    for situation in continuation.situations:
        expected = expected_summary(situation)
        problems = _unraisable(expected, reasons, codes, (continuation.proceed, continuation.stop))
        if problems:
            errors += [SpecError(situation.expect_mark, f"situation '{situation.name}': {problem}") for problem in problems]
            continue
        events = [model.decode_row(row.encode("utf-8")) for row in situation.events_json]
        try:
            plan = decide_continuation(events, situation.facts, projector, table)
        except FactsRefused as refused:
            errors += [SpecError(situation.mark, f"situation '{situation.name}': {problem}") for problem in refused.problems]
            continue
        except ExpressionFailed as failed:
            errors.append(SpecError(situation.mark, f"situation '{situation.name}': an expression cannot be judged here: {failed}"))
            continue
        actual = continuation_summary(plan)
        if actual != expected:
            errors.append(SpecError(situation.expect_mark, f"situation '{situation.name}': {_difference(expected, actual)}"))
    for planned in continuation.planner_situations:
        expected = expected_summary(planned)
        problems = _unraisable(expected, reasons, codes, (continuation.proceed, continuation.stop))
        if problems:
            errors += [SpecError(planned.expect_mark, f"planner situation '{planned.name}': {problem}") for problem in problems]
            continue
        events = [model.decode_row(row.encode("utf-8")) for row in planned.events_json]
        header, others, host, ids = (planned.value(field) for field in ("header", "other_runs", "host", "ids"))
        try:
            plan = decide_planner_situation(
                planned.latest, source_run(continuation), header, events, others, host, ids, projector, table, other_events_of(planned, model)
            )
        except FactsRefused as refused:
            errors += [SpecError(planned.mark, f"planner situation '{planned.name}': {problem}") for problem in refused.problems]
            continue
        except ExpressionFailed as failed:
            errors.append(SpecError(planned.mark, f"planner situation '{planned.name}': an expression cannot be judged here: {failed}"))
            continue
        actual = continuation_summary(plan)
        if actual != expected:
            errors.append(SpecError(planned.expect_mark, f"planner situation '{planned.name}': {_difference(expected, actual)}"))
    return errors


def _unraisable(expected: dict[str, Any], reasons: set[str], codes: set[str], dispositions: tuple[str, str]) -> list[str]:
    problems = []
    if expected["disposition"] not in dispositions:
        problems.append(f"unknown disposition '{expected['disposition']}'; the dispositions are [{', '.join(dispositions)}]")
    for reason in expected["rejection_reasons"]:
        if reason not in reasons:
            problems.append(f"expects reason '{reason}', which no check raises (nor Phase 0)")
    for diagnostic in expected["diagnostics"]:
        if diagnostic["code"] not in codes:
            problems.append(f"expects diagnostic '{diagnostic['code']}', which no check raises (nor Phase 0)")
    return problems


def _difference(expected: dict[str, Any], actual: dict[str, Any]) -> str:
    def decision(summary: dict[str, Any]) -> str:
        return f"{summary['disposition']} [{', '.join(summary['rejection_reasons'])}]"

    if decision(expected) != decision(actual):
        return f"expects {decision(expected)}, but the checks decide {decision(actual)}"
    for key in ("diagnostics", "continuation"):
        if expected.get(key) != actual.get(key):
            return f"expects {key} {_text(expected.get(key))}, but the checks decide {_text(actual.get(key))}"
    raise AssertionError("no difference")


def _text(value: Any) -> str:
    return "(none)" if value is None else json.dumps(value, ensure_ascii=False)

