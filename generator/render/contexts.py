"""Template contexts: for each generated file, its template and every value it places, already a literal.

Values go through `literals.py` (never spliced into code), so templates only place text; `render.py` renders
them and adds the headers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from ..literals import TOP_LEVEL_LEAD, md_cell, md_code, md_text, mermaid_label, py, py_call
from ..spec.decoder import module_context
from ..spec.model import ContentKind, EventKind, Spec, WireField
from ..spec.tables import decision_summary, expected_replay_ids
from .continuation_contexts import contract_context as continuation_contract_context
from .continuation_contexts import table_context as continuation_table_context
from .continuation_contexts import tests_context as continuation_tests_context
from .continuation_crash_contexts import catalog_context as continuation_crash_catalog_context
from .continuation_crash_contexts import contract_context as continuation_crash_contract_context
from .continuation_crash_contexts import lifecycle_context as continuation_crash_lifecycle_context
from .continuation_crash_contexts import tests_context as continuation_crash_tests_context
from .projector_contexts import rule_result, scan_context, table_context
from .row_schema import render_schema

# The generated Python package sits one level down, so pytest can collect generated/tests/ without ever
# importing generated/ itself as a package named `generated`.
PACKAGE = "resume_contract_generated"


def template_contexts(spec: Spec) -> list[tuple[str, str, dict[str, Any]]]:
    builders: list[tuple[str, Callable[[Spec], dict[str, Any]]]] = [
        (f"{PACKAGE}/__init__.py", lambda _: {}),
        (f"{PACKAGE}/py.typed", lambda _: {}),  # PEP 561: the generated package is typed too
        (f"{PACKAGE}/runtime_event.py", lambda spec: module_context(spec.wire)),
        ("runtime-event.schema.json", lambda spec: {"schema": render_schema(spec.wire)}),
        (f"{PACKAGE}/catalog.py", _catalog_context),
        (f"{PACKAGE}/projector_table.py", table_context),
        (f"{PACKAGE}/projector_machine.py", _machine_context),
        ("CONTRACT.md", _contract_context),
        ("tests/test_contract.py", _contract_tests_context),
    ]
    if spec.continuation is not None:  # the Phase 1 continuation decision: only a contract that declares one
        builders.append((f"{PACKAGE}/continuation_table.py", continuation_table_context))
        builders.append(("tests/test_continuation.py", continuation_tests_context))
    if spec.continuation_crash is not None:  # Phase 1's crash contract: only a contract that declares one
        builders.append((f"{PACKAGE}/continuation_boundaries.py", continuation_crash_catalog_context))
        builders.append((f"{PACKAGE}/continuation_lifecycle.py", continuation_crash_lifecycle_context))
        builders.append(("tests/test_continuation_crash.py", continuation_crash_tests_context))
    return [(relative, f"{relative.removeprefix(PACKAGE + '/')}.jinja", build(spec)) for relative, build in builders]


def _identifier(name: str) -> str:
    # The spec's checks already restrict names; this is the last guard before a name becomes code.
    if not name.isidentifier():
        raise ValueError(f"{name!r} is not an identifier")
    return name


def _catalog_context(spec: Spec) -> dict[str, Any]:
    outcomes = spec.ledger.outcome_names
    return {
        "failpoints": _failpoint_calls(spec.failpoints),
        "sqlite_failpoints": _failpoint_calls(spec.sqlite_failpoints),
        "sqlite_run_loop": py(spec.sqlite_run_loop),
        "outcomes": py(outcomes),
        "contract_name": py(spec.scope.name),
        "phase": py(spec.scope.phase),
        "run_loop": py(spec.run_loop),
        "oracle": py(spec.oracle),
        "packaged_oracle": py(spec.packaged_oracle) if spec.packaged_oracle != "tool-boundary" else None,
        "prefix_lengths": py({prefix.name: prefix.length for prefix in spec.ledger.prefixes}, 0, TOP_LEVEL_LEAD),
        "canonical_rows": py(
            {outcome: tuple(event.wire(outcome) for event in spec.ledger.events) for outcome in outcomes}, 0, TOP_LEVEL_LEAD
        ),
        "canonical_session_id": py(spec.ledger.session_id),
        "canonical_run_id": py(spec.ledger.run_id),
        "decisions": [
            (
                py(decision.prefix),
                py_call(
                    "Decision",
                    [
                        ("prefix", decision.prefix),
                        ("disposition", decision.disposition),
                        ("operation_statuses", dict(decision.operation_statuses)),
                        ("diagnostics", decision.diagnostics),
                        ("rejection_reasons", decision.rejection_reasons),
                        ("replay_event_ids", {o: expected_replay_ids(spec, decision, o) for o in outcomes}),
                        ("terminal_fact", decision.terminal_fact),
                    ],
                    indent=8,
                    lead=len(py(decision.prefix)) + 2,
                ),
            )
            for decision in spec.decisions
        ],
        "high_water_diagnostic": py(spec.ledger_rules.high_water_diagnostic),
        "corruption_kinds": py(dict(spec.ledger_rules.corruption_kinds), 0, TOP_LEVEL_LEAD),
        "reason_meanings": py(dict(spec.projector.reasons), 0, TOP_LEVEL_LEAD),
        "invariants": py({invariant.name: invariant.exempt_diagnostics for invariant in spec.invariants}, 0, TOP_LEVEL_LEAD),
    }


def _failpoint_calls(failpoints: tuple[Any, ...]) -> list[str]:
    fields = ("id", "boundary", "committed_prefix", "note")
    return [py_call("Failpoint", [(name, getattr(fp, name)) for name in fields], indent=4) for fp in failpoints]


def _failpoint_rows(failpoints: tuple[Any, ...]) -> list[list[str]]:
    return [[md_code(fp.id), md_cell(fp.boundary), md_code(fp.committed_prefix), md_cell(fp.note or "")] for fp in failpoints]


def _machine_context(spec: Spec) -> dict[str, Any]:
    projector = spec.projector
    states = [
        f"{_identifier(state.name)} = State({py(state.name)}, value={py(state.name)}"
        + (", initial=True" if state.name == projector.initial else "")
        + ")"
        for state in projector.states
    ]
    events = []
    for event in projector.events:
        transitions = []
        for rule in projector.rules:
            if rule.event != event.name:
                continue
            options = []
            if rule.when is not None:
                options.append(f"cond={py(rule.when)}")
            if rule.codes:
                methods = ["raise_" + code for code in rule.codes]
                options.append(f"on={py(methods[0] if len(methods) == 1 else methods)}")
            if rule.anomaly is not None and rule.next_state == rule.source:
                transitions.append(f"{_identifier(rule.source)}.to.itself(internal=True, {', '.join(options)})")
            else:  # a transition, or an anomaly that moves the state too
                target = _identifier(rule.next_state)
                transitions.append(f"{_identifier(rule.source)}.to({', '.join([target] + options)})")
        events.append((_identifier(event.name), transitions))
    anomalies = sorted({code for rule in projector.rules for code in rule.codes})
    return {
        "states": states,
        "events": events,
        "anomaly_methods": [(_identifier("raise_" + code), py(code)) for code in anomalies],
    }


def _contract_context(spec: Spec) -> dict[str, Any]:
    projector = spec.projector
    outcomes = spec.ledger.outcome_names
    mermaid = [f"[*] --> {projector.initial}"]
    for rule in projector.rules:
        if rule.target is not None and rule.target != rule.source:
            label = rule.event + (f" [{rule.when}]" if rule.when else "")
            mermaid.append(f"{rule.source} --> {rule.target} : {mermaid_label(label)}")
    mermaid += [f"{state.name} --> [*]" for state in projector.states if state.final]
    reasons_of = {d.code: d.reason for d in projector.diagnostics}
    return {
        **_wire_contract_context(spec),
        "continuation": continuation_contract_context(spec),
        "continuation_crash": continuation_crash_contract_context(spec),
        "phase": md_cell(spec.scope.phase),
        "contract_name": md_code(spec.scope.name),
        "run_loop": (
            f"The run loop it kills at each failpoint's hook is {md_code(spec.run_loop)}."
            if spec.run_loop is not None
            else "The spec names no run loop: `resume-contract crash` runs only the cases it needs none for."
        ),
        "summary": md_text(spec.scope.summary),
        "pipeline": " -> ".join(md_cell(step) for step in spec.scope.pipeline),
        "failpoint_rows": _failpoint_rows(spec.failpoints),
        "sqlite_failpoint_rows": _failpoint_rows(spec.sqlite_failpoints),
        "sqlite_run_loop": md_code(spec.sqlite_run_loop or "resume_contract/crash/sqlite_runloop.py"),
        "outcome_rows": [[md_code(name), md_cell(text)] for name, text in spec.ledger.outcomes],
        "ledger_rows": [
            [
                md_code(event.name),
                *[md_cell(_describe_event(json.loads(event.wire(outcome)))) for outcome in outcomes],
            ]
            for event in spec.ledger.events
        ],
        "outcome_names": [md_code(name) for name in outcomes],
        "prefix_rows": [
            [md_code(p.name), md_code(p.through) if p.through else "(no event)", str(p.length)] for p in spec.ledger.prefixes
        ],
        "decision_rows": [
            [
                md_code(d.prefix),
                md_cell(d.summary),
                md_code(d.disposition),
                "; ".join(f"{o}: {', '.join(d.statuses(o)) or 'none'}" for o in outcomes),
                ", ".join(md_code(c) for c in d.diagnostics) or "none",
                ", ".join(md_code(r) for r in d.rejection_reasons) or "none",
                ", ".join(md_code(n) for n in d.replay) or "none",
                "yes" if d.terminal_fact else "no",
            ]
            for d in spec.decisions
        ],
        "high_water_rule": md_text(spec.ledger_rules.high_water_rule),
        "high_water_diagnostic": md_code(spec.ledger_rules.high_water_diagnostic),
        "corruption_rule": md_text(spec.ledger_rules.corruption_rule),
        "corruption_rows": [[md_code(kind), md_cell(text)] for kind, text in spec.ledger_rules.corruption_kinds],
        "state_rows": [
            [
                md_code(s.name) + (" (initial)" if s.name == projector.initial else ""),
                md_code(s.status) if s.status else "no operation",
                "yes" if s.final else "no",
                "yes" if s.requires_verification else "no",
                md_code(s.at_end) if s.at_end else "",
                md_cell(s.description),
            ]
            for s in projector.states
        ],
        "event_rows": [
            [
                md_code(e.name),
                md_code(e.content_kind) if e.content_kind else "none (an action event)",
                "" if e.content_kind is None else "true" if e.is_error else "false",
                _recognised(e),
                md_cell(e.description),
            ]
            for e in projector.events
        ],
        "fact_rows": [[md_code(name), md_code(text)] for name, (text, _) in projector.facts],
        "row_check_rows": [[md_code(c.when[0]), md_code(c.anomaly) + (" (the row takes no part in tool state, nor in the replay)" if c.skip else "")] for c in projector.row_checks],
        **scan_context(projector),
        "hidden_test": md_code(projector.hidden.when[0]) if projector.hidden else None,
        "hidden_code": md_code(projector.hidden.anomaly) if projector.hidden and projector.hidden.anomaly else None,
        "rule_rows": [
            [
                md_code(r.source),
                md_code(r.event),
                md_code(r.when) if r.when else "always",
                rule_result(r, reasons_of),
            ]
            for r in projector.rules
        ],
        "mermaid": mermaid,
        "after_terminal": md_code(projector.after_terminal_anomaly) if projector.after_terminal_anomaly else None,
        "diagnostic_rows": [[md_code(d.code), md_code(d.reason), md_cell(d.message)] for d in projector.diagnostics],
        "reason_rows": [[md_code(name), md_cell(text)] for name, text in projector.reasons],
        "directive": md_text(projector.directive),
        "invariant_rows": [
            [md_code(i.name), md_cell(i.description), ", ".join(md_code(c) for c in i.exempt_diagnostics) or "none"]
            for i in spec.invariants
        ],
        "harness_scope": md_text(spec.scope.harness_scope),
        "out_of_scope": [md_text(item) for item in spec.scope.out_of_scope],
    }


def _recognised(event: EventKind) -> str:
    """When a committed event is of this kind, beyond its content kind: its test, and the call an action names."""
    parts = [md_code(event.when[0])] if event.when else []
    if event.key:
        parts.append(f"its call: {md_code(event.key[0])}")
    if event.against_call:  # each check that holds raises; where its rule moves the operation on, it moves instead
        checks = ", ".join(
            f"{md_code(check.when[0])} raises {md_code(check.anomaly)}{' at the response' if check.at == 'response' else ''}" for check in event.against_call
        )
        parts.append(f"checked against its call ({checks}): then -> {md_code(event.conflict_to or '')}")
    return "; ".join(parts) or "always"


def _wire_type(field: WireField) -> str:
    if field.enum:
        return "one of " + ", ".join(md_code(value) for value in field.enum)
    return {"json": "free JSON", "object": "free JSON object", "array": "free JSON array"}.get(field.type, field.type)


def _tool_role(kind: ContentKind) -> str:
    call = kind.tool_call
    if call is None:
        return "none"
    parts = [f"{'opens' if call.role == 'call' else 'settles'} an operation", f"call id {md_code(call.call_id)}"]
    parts += [f"{label} {md_code(name)}" for label, name in (("tool", call.tool_name), ("arguments", call.arguments), ("failed when", call.error_flag)) if name]
    return ", ".join(parts)


def _wire_contract_context(spec: Spec) -> dict[str, Any]:
    wire = spec.wire
    return {
        "wire_field_rows": [
            [md_code(f.name), _wire_type(f), "yes" if f.required else "no", md_cell(f.description)] for f in wire.fields
        ],
        "content_field": "content",
        "content_tag": md_code(wire.content_tag),
        "content_kind_rows": [
            [
                md_code(kind.name),
                ", ".join(md_code(f.name) + ("" if f.required else "?") + f" ({_wire_type(f)})" for f in kind.fields) or "none",
                _tool_role(kind),
                md_cell(kind.description),
            ]
            for kind in wire.content_kinds
        ],
        "partial_flag": md_cell(wire.partial_flag),
        "terminal_statuses": ", ".join(md_code(status) for status in wire.terminal_statuses) or "(none)",
        "terminal_flag": md_cell(f"{wire.terminal_flag_field}.{wire.terminal_flag_key}"),
        "unknown_keys": (
            "`reject`: a row, or its content, holding a key the format does not declare is corrupt (`invalid_event`)."
            if wire.unknown_keys == "reject"
            else "`ignore`: a key the format does not declare is read past, and kept in the row as written."
        ),
        "tool_kinds": ", ".join(md_code(kind.name) for kind in wire.content_kinds if kind.tool_call is not None),
        "action_kinds": ", ".join(md_code(kind.name) for kind, _, _ in spec.projector.action_events),
        "reference_anomalies": ", ".join(md_code(code) for code in spec.ledger_rules.reference_anomalies) or "no anomaly",
        "reference_corruption": ", ".join(md_code(kind) for kind in spec.ledger_rules.reference_corruption_kinds) or "no corruption",
    }


def _describe_event(wire: dict[str, Any]) -> str:
    content = wire.get("content") or {}
    parts = [f"{wire['id']} ({wire['author']}/{wire['role']})", content.get("kind", "no content")]
    if content.get("kind") in ("function_call", "function_response"):
        parts.append(f"{content['name']} #{content['id']}")
    if content.get("isError") is True:
        parts.append("isError")
    if wire.get("status"):
        parts.append(f"status {wire['status']}")
    if (wire.get("actions") or {}).get("endInvocation") is True:
        parts.append("endInvocation")
    return ", ".join(parts)


def slug(text: str) -> str:
    """A test-id-safe slug of free text."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def _expected(spec: Spec, prefix: str, outcome: str) -> dict[str, Any]:
    """A case's expectations, straight from the decision table and the canonical ledger."""
    decision = spec.decision(prefix)
    length = spec.ledger.prefix(prefix).length
    committed = tuple(json.loads(event.wire(outcome))["id"] for event in spec.ledger.events[:length])
    return {"committed_event_ids": committed, **decision_summary(spec, decision, outcome)._asdict()}


def _contract_tests_context(spec: Spec) -> dict[str, Any]:
    outcomes = spec.ledger.outcome_names
    expected = [
        (py((prefix.name, outcome)), py(_expected(spec, prefix.name, outcome), 4))
        for prefix in spec.ledger.prefixes
        for outcome in outcomes
    ]
    cases = [
        {
            "id": py(f"{fp.id}-{slug(fp.boundary)}-{outcome}"),
            "failpoint": py(fp.id),
            "outcome": py(outcome),
            "prefix": py(fp.committed_prefix),
        }
        for fp in spec.failpoints
        for outcome in outcomes
    ]
    sqlite = [{"id": py(f"sqlite-{fp.id}-{outcome}"), "failpoint": py(fp.id), "outcome": py(outcome), "prefix": py(fp.committed_prefix)}
              for fp in spec.sqlite_failpoints for outcome in outcomes]
    return {"expected": expected, "cases": cases, "sqlite_cases": sqlite, "first_outcome": py(outcomes[0])}
