"""The context of generated/resume_contract_generated/projector_table.py: the projector's table as literals, and the
functions the projector's expressions compiled to (spec/projector.yaml's facts, event kinds' `when` and `key`,
row checks), each a `def` above the table that names it."""

from __future__ import annotations

from typing import Any

import msgspec

from ..literals import LINE_WIDTH, TOP_LEVEL_LEAD, Code, md_code, py, py_call, py_expression
from ..spec.decoder import result_fields
from ..spec.model import Projector, Rule, Spec
from ..spec.projector_expressions import CALL_PARAMETERS, FACT_PARAMETERS, GUARD_PARAMETERS, ROW_PARAMETERS
from ..spec.tables import event_kinds_of, needed_attributes, table_of
from .walk_loop import walk_loop_source


def table_context(spec: Spec) -> dict[str, Any]:
    """generated/.../projector_table.py: the table, the functions its expressions compiled to, and the walk's loop."""
    table = table_of(spec)
    loop = walk_loop_source(table)
    return _expression_context(spec) | {
        "walk_loop": loop[1] if loop is not None else None,
        "loop_reads": "NO_FIELDS_READ, OpenOperation" if loop is not None and "NO_FIELDS_READ" in loop[1] else "OpenOperation",
        "loop_kinds": py(loop[0]) if loop is not None else None,
        "initial_state": py(table.initial_state),
        "tool_contents": [
            (py(kind), py_call("ToolContentRead", list(msgspec.structs.asdict(read).items()), indent=8, lead=len(py(kind)) + 2))
            for kind, read in table.tool_contents.items()
        ],
        "partial_attribute": py(table.partial_attribute),
        "terminal_statuses": py(spec.wire.terminal_statuses),
        "terminal_flag": py(table.terminal_flag),
        "states": py(tuple(state.name for state in spec.projector.states), 0, len("STATES: tuple[str, ...] = ")),
        "step": py(dict(table.step), 0, TOP_LEVEL_LEAD),
        "step_type": "tuple[str, str | None]" if all(type(anomaly) is not tuple for _, anomaly in table.step.values()) else "tuple[str, str | tuple[str, ...] | None]",
        "event_kinds": py(dict(table.event_kinds), 0, TOP_LEVEL_LEAD),
        "state_status": py(dict(table.state_status), 0, TOP_LEVEL_LEAD),
        "settled_states": py(tuple(s.name for s in spec.projector.states if s.name in table.settled_states)),
        "verification_states": py(tuple(s.name for s in spec.projector.states if s.name in table.verification_states)),
        "at_end": py(dict(table.at_end), 0, TOP_LEVEL_LEAD),
        "diagnostics": py(dict(table.diagnostics), 0, TOP_LEVEL_LEAD),
        "reason_order": py(table.reason_order),
        "after_terminal_diagnostic": py(table.after_terminal_diagnostic),
        "high_water_diagnostic": py(table.high_water_diagnostic),
        "directive": py(table.directive, 0, TOP_LEVEL_LEAD),
        # (emitted only when the contract says them: a contract without them generates as before)
        "ledger_order": [
            (name, py(value)) for name, value in (
                ("duplicate_id_diagnostic", table.duplicate_id_diagnostic),
                ("foreign_row_diagnostic", table.foreign_row_diagnostic),
                ("operations_first", table.operations_first),
                ("listed_last", Code(f"frozenset({py(tuple(sorted(table.listed_last)))})") if table.listed_last else None),
                ("absorbing_states", Code(f"frozenset({py(tuple(sorted(table.absorbing_states)))})") if table.absorbing_states else None),
            ) if value
        ],
    }


def _signature(name: str, parameters: tuple[str, ...]) -> str:
    flat = f"def {name}({', '.join(f'{p}: Any' for p in parameters)}) -> Any:"
    return flat if len(flat) <= LINE_WIDTH else f"def {name}(\n" + "".join(f"    {p}: Any,\n" for p in parameters) + ") -> Any:"


def _expression_context(spec: Spec) -> dict[str, Any]:
    projector, wire = spec.projector, spec.wire
    functions: list[tuple[str, str]] = []

    def function(name: str, parameters: tuple[str, ...], source: str) -> Code:
        functions.append((_signature(name, parameters), py_expression(source, 4)))
        return Code(name)

    facts = {name: function(f"_fact_{name}", FACT_PARAMETERS, source) for name, (_, source) in projector.facts}
    _, guarded = event_kinds_of(projector)
    guards = [(shape, kind.name, function(f"_when_{kind.name}", GUARD_PARAMETERS, kind.when[1])) for shape, kind in guarded if kind.when is not None]
    actions = [
        py_call(
            "ActionKind",
            [
                ("kind", kind.name),
                ("needs", needed_attributes(wire, kind.needs)),
                ("when", function(f"_when_{kind.name}", ROW_PARAMETERS, when[1])),
                ("key", function(f"_key_{kind.name}", ROW_PARAMETERS, key[1])),
            ]
            + (
                [
                    ("against_call", tuple(
                        (check.anomaly, function(f"_against_call_{kind.name}_{number}", CALL_PARAMETERS, check.when[1]), check.at)
                        for number, check in enumerate(kind.against_call)
                    )),
                    ("conflict_to", kind.conflict_to),
                    *([] if (fields := result_fields(wire, kind)) == () else [("result_fields", fields)]),
                ]
                if kind.against_call else []
            ),
            indent=4,
        )
        for kind, when, key in projector.action_events
    ]
    checks = [
        py_call(
            "RowCheck",
            [("code", check.anomaly), ("needs", needed_attributes(wire, check.needs)), ("when", function(f"_row_check_{number}", ROW_PARAMETERS, check.when[1]))]
            + ([("skip", True)] if check.skip else []),
            indent=4,
        )
        for number, check in enumerate(projector.row_checks)
    ]
    hidden = projector.hidden
    hidden_check = None if hidden is None else py_call(
        "RowCheck", [("code", hidden.anomaly), ("needs", needed_attributes(wire, hidden.needs)), ("when", function("_replay_hidden", ROW_PARAMETERS, hidden.when[1]))], indent=0,
    )
    return {
        "hidden": hidden_check,
        "hidden_probes": py(table_of(spec).hidden_probes, 0, TOP_LEVEL_LEAD),
        "functions": functions,
        "facts": py(facts, 0, TOP_LEVEL_LEAD),
        "kind_guards": py(tuple(guards), 0, TOP_LEVEL_LEAD),
        "action_kinds": actions,
        "row_checks": checks,
        "probes": py(table_of(spec).probes, 0, TOP_LEVEL_LEAD),
    }


def rule_result(rule: Rule, reasons_of: dict[str, str]) -> str:
    """CONTRACT.md's cell for what a rule does: its move, its anomaly's diagnostics (and their reasons), or both."""
    parts = [f"-> {md_code(rule.target)}"] if rule.target else []
    if rule.codes:
        reasons = ", ".join(dict.fromkeys(md_code(reasons_of[code]) for code in rule.codes))
        parts.append(f"anomaly {', '.join(md_code(code) for code in rule.codes)} ({reasons})")
    return " and ".join(parts)


def scan_context(projector: Projector) -> dict[str, Any]:
    """CONTRACT.md's account of the ledger scan (rows diagnosed, not refused) and of the diagnostics' order."""
    scan = (("duplicate_id", projector.duplicate_id, "a row holding an earlier row's event id"), ("foreign_row", projector.foreign_row, "a row of another run"))
    return {
        "ledger_scan": [f"{what} raises {md_code(code)}" for _, code, what in scan if code],
        "operations_first": projector.operations_first,
        "moving_anomalies": any(rule.anomaly is not None and rule.target not in (None, rule.source) for rule in projector.rules),
        "listed_last": ", ".join(md_code(code) for code in projector.listed_last),
    }
