"""A continuation check whose `when` or `skip_if` is an expression (docs/expressions.md), as a tool test on frozen
inputs: the frozen Phase 0 spec, the frozen continuation file (tests/frozen_spec/phase1/) and the schema that
admits expressions (tests/frozen_spec/phase1_expressions/), with the checks below rewritten here. Editing spec/
never breaks these.

The expressions are held to the list-of-tests form they replace, which the interpreter decides by its own, older
code: both tables decide every situation below, and must agree, except where `semantics: javascript` is meant to
differ (an empty checkpoint `ref` is absent to JavaScript), written out by hand.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from frozen_phase1 import BASE_FACTS as FACTS
from frozen_phase1 import row as _row
from resume_contract_generator.errors import SpecInvalid
from resume_contract_generator.render.tree import render_all
from resume_contract_generator.spec.continuation_situations import continuation_table_of
from resume_contract_generator.spec.tables import decoder_of, table_of
from resume_contract_generator.spec.validate import load_spec

from resume_contract.core.continuation import continuation_summary, decide_continuation

FROZEN = Path(__file__).resolve().parent / "frozen_spec"

# (the list-of-tests form in the frozen file, the expression that replaces it)
REWRITES = [
    ("    when: [{each_open: fact.pending_permissions}]\n", "    for_each: fact.pending_permissions\n"),
    (
        "    when: [{missing_from: {values: fact.tool_names, set: input.availableToolNames}}]\n    diagnostic: tool_catalog_mismatch\n"
        "    detail: {unavailableToolNames: missing}\n",
        "    when: size(fact.unavailable_tool_names) > 0\n    diagnostic: tool_catalog_mismatch\n"
        "    detail: {unavailableToolNames: fact.unavailable_tool_names}\n",
    ),
    (
        "    operation_field: toolName\n",
        "    operation_field: toolName\n  unavailable_tool_names:\n    description: The tools named that the continuation may not call.\n"
        "    expression: fact.tool_names.filter(name, !(name in input.availableToolNames)).distinct().sort()\n",
    ),
    ("when: [{no_events: true}]", "when: size(events) == 0"),
    ("when: [{present: fact.identity_break}]", "when: fact.identity_break != null"),
    (
        "    skip_if: [{no_events: true}]\n    when:\n      - any_equal:\n"
        "          - [input.continuationIdentity.invocationId, source.invocationId]\n"
        "          - [input.continuationIdentity.runId, source.runId]\n"
        "          - [input.continuationIdentity.turnId, source.turnId]\n",
        "    skip_if: size(events) == 0\n    when: |\n      input.continuationIdentity.invocationId == source.invocationId\n"
        "        || input.continuationIdentity.runId == source.runId\n        || input.continuationIdentity.turnId == source.turnId\n",
    ),
    ("when: [{is_false: input.ledgerReadable}]", 'when: "!input.ledgerReadable"'),
    ("when: [{differ: [input.sourceCwd, input.currentCwd], normalise: normalised_cwd}]", "when: normalise_path(input.sourceCwd) != normalise_path(input.currentCwd)"),
    ("when: [{present: input.workspaceCheckpoint}, {absent: input.workspaceCheckpoint.ref}]", "when: has(input.workspaceCheckpoint) && !input.workspaceCheckpoint.ref"),
    ("when: [{present: input.workspaceCheckpoint.ref}, {is_false: input.workspaceCheckpoint.restored}]", "when: input.workspaceCheckpoint.ref && !input.workspaceCheckpoint.restored"),
    (
        "    skip_if: [{no_events: true}, {raised: runtime_identity_mismatch}]\n    when: [{not_one_of: {value: fact.last_model_visible.role, allowed: [user, tool]}}]\n",
        "    skip_if: size(events) == 0 || \"runtime_identity_mismatch\" in raised\n    when: \"!(fact.last_model_visible.role in ['user', 'tool'])\"\n",
    ),
]


def _project(root: Path, text: str) -> Path:
    shutil.copytree(FROZEN / "spec", root / "spec")
    shutil.copyfile(FROZEN / "phase1_expressions" / "continuation.schema.json", root / "spec" / "schema" / "continuation.schema.json")
    (root / "spec" / "continuation.yaml").write_text(text, encoding="utf-8")
    return root


def _rewritten(semantics: str = "javascript") -> str:
    text = (FROZEN / "phase1" / "continuation.yaml").read_text(encoding="utf-8")
    for old, new in REWRITES:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text.replace("\ndispositions:", f"\nsemantics: {semantics}\ndispositions:", 1)


@pytest.fixture(scope="module")
def specs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any]:
    lists = load_spec(_project(tmp_path_factory.mktemp("lists"), (FROZEN / "phase1" / "continuation.yaml").read_text(encoding="utf-8")))
    expressions = load_spec(_project(tmp_path_factory.mktemp("expressions"), _rewritten()))
    return lists, expressions






LEDGERS = {
    "one user event": [_row(1)],
    "empty": [],
    "another run's event": [_row(1), _row(2, runId="r9", content={"kind": "text", "text": "x"}, role="model", author="agent")],
    "ends with model text": [_row(1), _row(2, content={"kind": "text", "text": "x"}, role="model", author="agent")],
    "two requests, one decided": [
        _row(1),
        _row(2, actions={"permissionRequest": {"requestId": "p"}}),
        _row(3, actions={"permissionRequest": {"requestId": "q"}}),
        _row(4, actions={"permissionDecision": {"requestId": "p", "allowed": True}}),
    ],
    "calls of three tools": [
        _row(1),
        *(
            _row(number, role=role, author=author, content={"kind": kind, "id": f"c{number // 2}", "name": name, **extra})
            for number, name in ((2, "Write"), (4, "Bash"), (6, "Write"), (8, "Fetch"))
            for number, role, author, kind, extra in (
                (number, "model", "agent", "function_call", {"args": {}}),
                (number + 1, "tool", "tool", "function_response", {"result": "ok"}),
            )
        ),
    ],
}
FACT_CHANGES: dict[str, dict[str, Any]] = {
    "as given": {},
    "unreadable": {"ledgerReadable": False},
    "moved, backslashes and a slash": {"sourceCwd": "C:\\W\\", "currentCwd": "c:/w"},
    "moved": {"currentCwd": "/elsewhere"},
    "invocation reused": {"continuationIdentity": {"invocationId": "i", "runId": "r2", "turnId": "t2"}},
    "turn reused": {"continuationIdentity": {"invocationId": "i2", "runId": "r2", "turnId": "t"}},
    "checkpoint without ref": {"workspaceCheckpoint": {"restored": True, "runtimeEventHighWater": 1}},
    "checkpoint not restored": {"workspaceCheckpoint": {"ref": "c", "restored": False, "runtimeEventHighWater": 1}},
    "checkpoint restored": {"workspaceCheckpoint": {"ref": "c", "restored": True, "runtimeEventHighWater": 1}},
    "only Bash available": {"availableToolNames": ["Bash"]},
}


def _decide(spec: Any, rows: list[bytes], facts: dict[str, Any], table: Any = None) -> dict[str, Any]:
    events = [decoder_of(spec).decode_row(row) for row in rows]
    plan = decide_continuation(events, facts, table_of(spec), table or continuation_table_of(spec))
    return continuation_summary(plan)


@pytest.mark.parametrize("ledger", sorted(LEDGERS))
@pytest.mark.parametrize("change", sorted(FACT_CHANGES))
def test_checks_written_as_expressions_decide_as_the_tests_they_replace(specs: tuple[Any, Any], ledger: str, change: str) -> None:
    lists, expressions = specs
    facts = FACTS | FACT_CHANGES[change]
    assert _decide(expressions, LEDGERS[ledger], facts) == _decide(lists, LEDGERS[ledger], facts)


def test_an_empty_checkpoint_ref_is_absent_under_javascript_semantics_as_in_the_reference(specs: tuple[Any, Any]) -> None:
    lists, expressions = specs
    facts = FACTS | {"workspaceCheckpoint": {"ref": "", "restored": False, "runtimeEventHighWater": 1}}
    assert _decide(lists, [_row(1)], facts)["rejection_reasons"] == ["checkpoint_restore_failed"]
    assert _decide(expressions, [_row(1)], facts)["rejection_reasons"] == ["workspace_ref_missing"]


def test_the_generated_module_holds_the_compiled_checks_and_decides_as_the_spec(specs: tuple[Any, Any], tmp_path: Path) -> None:
    _, expressions = specs
    outputs = render_all(expressions)
    module_path = tmp_path / "continuation_table.py"
    module_path.write_text(outputs["generated/resume_contract_generated/continuation_table.py"], encoding="utf-8")
    assert "def _check_1_when(" in module_path.read_text(encoding="utf-8")
    spec_of_module = importlib.util.spec_from_file_location("frozen_continuation_table", module_path)
    assert spec_of_module is not None and spec_of_module.loader is not None
    module = importlib.util.module_from_spec(spec_of_module)
    sys.modules["frozen_continuation_table"] = module
    try:
        spec_of_module.loader.exec_module(module)
    finally:
        del sys.modules["frozen_continuation_table"]
    for ledger in LEDGERS.values():
        for change in FACT_CHANGES.values():
            facts = FACTS | change
            assert _decide(expressions, ledger, facts, module.TABLE) == _decide(expressions, ledger, facts)
    assert "`input.ledgerReadable` is false" not in outputs["generated/CONTRACT.md"]
    assert "`!input.ledgerReadable`" in outputs["generated/CONTRACT.md"]


def _errors(tmp_path: Path, text: str) -> list[str]:
    with pytest.raises(SpecInvalid) as refused:
        load_spec(_project(tmp_path, text))
    return [str(error) for error in refused.value.errors]


def test_a_wrong_expression_is_refused_at_its_file_line_and_column(tmp_path: Path) -> None:
    text = _rewritten().replace("when: size(events) == 0", "when: size(event) == 0", 1)
    line = next(number for number, content in enumerate(text.splitlines(), 1) if "size(event) == 0" in content)
    assert _errors(tmp_path, text) == [
        f"spec/continuation.yaml:{line}:16: in `size(event) == 0`: unknown name 'event' (the names here: events, fact, input, phase0, raised, replay, source)"
    ]


def test_an_undeclared_input_or_fact_is_refused_by_its_name(tmp_path: Path) -> None:
    text = _rewritten().replace('when: "!input.ledgerReadable"', 'when: "!input.ledgerRedable"').replace("fact.identity_break != null", "fact.identity_brake != null")
    errors = _errors(tmp_path, text)
    assert len(errors) == 2
    assert "'ledgerRedable' is no field of input (its fields: availableToolNames, backgroundOperationsSettled," in errors[0] + errors[1]
    assert "'identity_brake' is no field of fact (its fields: identity_break, last_model_visible, pending_permissions, tool_names, unavailable_tool_names)" in errors[0] + errors[1]


def test_under_strict_semantics_a_condition_must_be_a_bool(tmp_path: Path) -> None:
    errors = _errors(tmp_path, _rewritten("strict"))
    assert len(errors) == 2  # the two checkpoint checks ask a string for truth
    assert all("a condition must be true or false, and this is string or null" in error for error in errors)


def test_a_wrong_expression_fact_is_an_error_at_its_line_not_a_crash(tmp_path: Path) -> None:
    text = _rewritten().replace("  unavailable_tool_names:\n", "  probe: {description: a typo, expression: input.zz}\n  unavailable_tool_names:\n", 1)
    errors = _errors(tmp_path, text)
    assert len(errors) == 1 and "in `input.zz`: 'zz' is no field of input" in errors[0]


def test_an_expression_that_cannot_judge_a_situation_is_an_error_at_the_situation(tmp_path: Path) -> None:
    text = _rewritten().replace("    for_each: fact.pending_permissions\n", "    for_each: source.actions.list\n", 1)
    errors = _errors(tmp_path, text)
    assert errors and all("an expression cannot be judged here: check 'pending_permission': a macro ranges over a list or a map, not null" in error for error in errors)


def test_raised_in_a_detail_is_the_reasons_raised_before_the_check(tmp_path: Path) -> None:
    probe = (
        "  - name: probe\n    when: input.sourceCwd == \"/never\" && size(raised) > 0\n"
        "    diagnostic: workspace_cwd_mismatch\n    detail: {before: raised}\n\n# Diagnostic code"
    )
    spec = load_spec(_project(tmp_path, _rewritten().replace("\n# Diagnostic code", "\n" + probe, 1)))
    summary = _decide(spec, [_row(1)], FACTS | {"ledgerReadable": False, "sourceCwd": "/never"})
    assert summary["diagnostics"][-1]["detail"] == {"before": ["runtime_ledger_unreadable", "workspace_cwd_mismatch"]}


def test_backticks_in_an_expression_cannot_leave_its_code_span_in_contract_md(tmp_path: Path) -> None:
    text = _rewritten().replace('when: "!input.ledgerReadable"', 'when: "!input.ledgerReadable || input.sourceCwd == \\"``|<b>[x](http://e)`\\""', 1)
    outputs = render_all(load_spec(_project(tmp_path, text)))
    row = next(line for line in outputs["generated/CONTRACT.md"].splitlines() if "ledger_unreadable" in line and "<b>" in line)
    assert "```!input.ledgerReadable \\|\\| input.sourceCwd == \"``\\|<b>[x](http://e)`\"```" in row
