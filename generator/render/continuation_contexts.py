"""Template contexts of the continuation decision (spec/continuation.yaml): its table module, its situations'
tests and its section of CONTRACT.md. Every value already a literal, as in `contexts.py`."""

from __future__ import annotations

import json
from typing import Any

from resume_contract.core.continuation_table import Check

from ..literals import LINE_WIDTH, TOP_LEVEL_LEAD, Code, md_cell, md_code, md_text, py, py_call, py_expression
from ..spec.continuation_expressions import FACT_PARAMETERS, check_functions
from ..spec.continuation_lineage import EDGE_PARAMETERS, RUN_PARAMETERS
from ..spec.continuation_model import CheckDecl, ContinuationSpec, PlannerSituation, Situation
from ..spec.continuation_situations import continuation_table_of, expected_summary
from ..spec.model import Spec


def table_context(spec: Spec) -> dict[str, Any]:
    table = continuation_table_of(spec)
    return {
        "proceed": py(table.proceed),
        "stop": py(table.stop),
        "inputs": py(dict(table.inputs), 0, TOP_LEVEL_LEAD),
        "event_attributes": py(dict(table.event_attributes), 0, TOP_LEVEL_LEAD),
        "content_attributes": py(dict(table.content_attributes), 0, TOP_LEVEL_LEAD),
        "ledger_facts": py(dict(table.ledger_facts), 0, TOP_LEVEL_LEAD),
        "expected_high_water": py(table.expected_high_water, 0, TOP_LEVEL_LEAD),
        "proceeds_on": py(table.proceeds_on),
        "phase0_after": py(table.phase0_after) if table.phase0_after is not None else None,
        "checks": [py_call("Check", _fields(check, number), indent=4) for number, check in enumerate(table.checks)],
        "check_functions": _functions(_continuation(spec)),
        "fact_functions": [(py(fact.name), f"_fact_{fact.name}") for fact in _continuation(spec).ledger_facts if fact.expression is not None],
        "diagnostics": py(dict(table.diagnostics), 0, TOP_LEVEL_LEAD),
        "remedies": py(dict(table.remedies), 0, TOP_LEVEL_LEAD),
        "continuation": py(dict(table.continuation), 0, TOP_LEVEL_LEAD),
        "gates": [py_call("Check", _fields(gate, number, "gate"), indent=4) for number, gate in enumerate(table.gates)],
        "planner": "None" if table.planner is None else f"MappingProxyType({py(dict(table.planner), 0, TOP_LEVEL_LEAD)})",
        "invariants": py(table.invariants, 0, TOP_LEVEL_LEAD),
        **_lineage(_continuation(spec), table),
        "input_functions": [
            (py(name), f"_input_{number}", _signature(f"_input_{number}", ("header", "events")), py_expression(source, 4))
            for number, (name, _, source) in enumerate(_continuation(spec).input_expressions)
        ],
    }


def _lineage(continuation: ContinuationSpec, table: Any) -> dict[str, Any]:
    """The planner's lineage: its table entry, and each edge check's compiled function (none: no lineage)."""
    lineage = continuation.lineage
    if lineage is None:
        return {"lineage": None}
    kinds = (("run", lineage.run_checks, RUN_PARAMETERS), ("edge", lineage.checks, EDGE_PARAMETERS))
    return {
        "lineage": py(dict(table.lineage), 0, TOP_LEVEL_LEAD),
        "lineage_functions": [
            (_signature(f"_{kind}_{number}_when", parameters), py_expression(source, 4))
            for kind, checks, parameters in kinds
            for number, (_, _, _, source) in enumerate(checks)
        ],
        "lineage_checks": {
            kind: [
                py_call("EdgeCheck", [("name", name), ("diagnostic", diagnostic), ("when_function", Code(f"_{kind}_{number}_when"))], indent=4)
                for number, (name, diagnostic, _, _) in enumerate(checks)
            ]
            for kind, checks, _ in kinds
        },
    }


def _fields(check: Check, number: int, kind: str = "check") -> list[tuple[str, Any]]:
    """A check's (or a planner gate's) fields, its compiled parts named (the functions `_functions` writes above
    the table)."""
    names = {"when_function", "skip_function", "for_each_function", "event_id_function"}
    fields: list[tuple[str, Any]] = []
    for key, value in check._asdict().items():
        if key in names and value is not None:
            fields.append((key, Code(f"_{kind}_{number}_{key.removesuffix('_function')}")))
        elif key == "detail_functions" and value is not None:
            entries = [f"{name!r}: _{kind}_{number}_detail_{index}" for index, name in enumerate(value)]
            flat = f"MappingProxyType({{{', '.join(entries)}}})"
            lines = "".join(f"                {entry},\n" for entry in entries)  # a field of a Check that stands at 4
            fields.append((key, Code(flat if len(flat) <= 80 else f"MappingProxyType(\n            {{\n{lines}            }}\n        )")))
        elif key not in names and key != "detail_functions":
            fields.append((key, value))
    return fields


def _signature(name: str, parameters: tuple[str, ...]) -> str:
    flat = f"def {name}({', '.join(f'{p}: Any' for p in parameters)}) -> Any:"
    return flat if len(flat) <= LINE_WIDTH else f"def {name}(\n" + "".join(f"    {p}: Any,\n" for p in parameters) + ") -> Any:"


def _functions(continuation: ContinuationSpec) -> list[tuple[str, str]]:
    """(signature, body) of each compiled expression: the expression facts', then each check's parts."""
    functions = [
        (_signature(f"_fact_{fact.name}", FACT_PARAMETERS), py_expression(fact.expression[1], 4))
        for fact in continuation.ledger_facts
        if fact.expression is not None
    ]
    for kind, checks in (("check", continuation.checks), ("gate", continuation.gates)):
        for number, check in enumerate(checks):
            details = [name for name, _, _ in check.detail_expressions]
            for field, (source, parameters) in check_functions(check).items():
                suffix = f"detail_{details.index(field.partition('.')[2])}" if field.startswith("detail_functions.") else field.removesuffix("_function")
                functions.append((_signature(f"_{kind}_{number}_{suffix}", parameters), py_expression(source, 4)))
    return functions


def tests_context(spec: Spec) -> dict[str, Any]:
    continuation = _continuation(spec)
    identity = json.loads(continuation.base_event_json)
    return {
        "session": py(identity.get("sessionId", "")),
        "run": py(identity.get("runId", "")),
        "planner_situations": [
            (
                py(planned.name),
                py(planned.value("header"), 8),
                py(tuple(planned.events_json), 8),
                py(planned.value("other_runs"), 8),
                py({run: tuple(rows) for run, rows in planned.value("other_events").items()}, 8),
                py(planned.value("host"), 8),
                py(planned.value("ids"), 8),
                py(planned.latest),
                py(expected_summary(planned), 8),
            )
            for planned in continuation.planner_situations
        ],
        "proceed": py(continuation.proceed),
        "situations": [
            (
                py(situation.name),
                py(tuple(situation.events_json), 8),
                py(situation.facts, 8),
                py(expected_summary(situation), 8),
            )
            for situation in continuation.situations
        ]
    }


def contract_context(spec: Spec) -> dict[str, Any] | None:
    """CONTRACT.md's Phase 1 section, or None when the spec has no continuation decision."""
    if spec.continuation is None:
        return None
    continuation = spec.continuation
    reasons_of = {diagnostic.code: diagnostic.reason for diagnostic in continuation.diagnostics}
    return {
        "summary": md_text(continuation.summary),
        "proceed": md_code(continuation.proceed),
        "stop": md_code(continuation.stop),
        "proceeds_on": md_code(continuation.proceeds_on),
        "phase0_place": "first" if continuation.phase0_after is None else f"after the check {md_code(continuation.phase0_after)}'s",
        "expected_high_water": ", then ".join(md_code(path) for path in continuation.expected_high_water) or "none",
        "input_rows": [
            [md_code(decl.name + ("." + field.name if field else "")), md_code((field or decl).type), "yes" if (field or decl).optional else "no", md_cell((field or decl).description)]
            for decl in continuation.inputs
            for field in (None, *decl.fields)
        ],
        "fact_rows": [[md_code(fact.name), md_code(fact.kind), md_code(_flow(fact.definition)), md_cell(fact.description)] for fact in continuation.ledger_facts],
        "check_rows": [
            [
                str(number),
                md_code(check.name),
                _when_cell(check),
                md_code(check.skip_expression[0]) if check.skip_expression else "; ".join(md_code(_flow(test)) for test in check.skip_if) or "never",
                "yes" if check.stops else "no",
                md_code(check.diagnostic),
                md_code(reasons_of[check.diagnostic] or "") if reasons_of[check.diagnostic] else "does not park",
            ]
            for number, check in enumerate(continuation.checks, start=1)
        ],
        "diagnostic_rows": [
            [md_code(d.code), md_code(d.reason) if d.reason else "does not park", md_cell(d.message)] for d in continuation.diagnostics
        ],
        "reason_rows": [[md_code(name), md_cell(remedy)] for name, remedy in continuation.reasons],
        "payload_rows": _payload_rows(continuation.payload, ""),
        "situation_rows": [_situation_row(situation) for situation in continuation.situations],
        "planner": _planner_context(continuation, reasons_of),
    }


def _planner_context(continuation: ContinuationSpec, reasons_of: dict[str, str | None]) -> dict[str, Any] | None:
    planner = continuation.planner
    if planner is None:
        return None
    return {
        "host": ", ".join(md_code(name) for name in planner["host"]),
        "input_rows": [[md_code(name), md_code(_flow(source))] for name, source in planner["inputs"].items()],
        "existing": md_code(_flow(planner["existing_continuation"])),
        "gate_rows": [
            [
                str(number), md_code(gate.name),
                md_code(gate.when_expression[0]) if gate.when_expression else "; ".join(md_code(_flow(test)) for test in gate.when),
                md_code(gate.diagnostic), md_code(reasons_of[gate.diagnostic] or ""),
            ]
            for number, gate in enumerate(continuation.gates, start=1)
        ],
        "situation_rows": [_situation_row(situation) for situation in continuation.planner_situations],
    }


def _continuation(spec: Spec) -> ContinuationSpec:
    assert spec.continuation is not None
    return spec.continuation


def _when_cell(check: CheckDecl) -> str:
    each = f"for each item of {md_code(check.for_each_expression[0])}" if check.for_each_expression else ""
    when = md_code(check.when_expression[0]) if check.when_expression else "; ".join(md_code(_flow(test)) for test in check.when)
    return f"{each}: {when}" if each and when else each or when


def _flow(value: Any) -> str:
    """A spec value as one line of YAML-like flow text: `is_false: input.ledgerReadable`."""
    if isinstance(value, dict):
        return ", ".join(f"{key}: {_flow(item)}" if not isinstance(item, dict) else f"{key}: {{{_flow(item)}}}" for key, item in value.items())
    if isinstance(value, list):
        return "[" + ", ".join(_flow(item) if not isinstance(item, dict) else "{" + _flow(item) + "}" for item in value) + "]"
    return json.dumps(value) if not isinstance(value, str) else value


def _payload_rows(payload: dict[str, Any], prefix: str) -> list[list[str]]:
    rows: list[list[str]] = []
    for name, value in payload.items():
        if isinstance(value, dict) and "fields" in value:
            when = f"when {md_code(value['if_present'])} is given" if "if_present" in value else "an object"
            rows.append([md_code(prefix + name), when])
            rows += _payload_rows(value["fields"], prefix + name + ".")
        else:
            rows.append([md_code(prefix + name), md_code(_flow(value))])
    return rows


def _situation_row(situation: Situation | PlannerSituation) -> list[str]:
    expect = situation.expect
    reasons = ", ".join(md_code(reason) for reason in expect.get("rejection_reasons", []))
    decision = md_code(expect["disposition"]) + (f" [{reasons}]" if reasons else "")
    return [md_code(situation.name), md_cell(situation.summary), str(len(situation.events_json)), decision]

