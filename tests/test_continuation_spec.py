"""The continuation decision's spec language and its interpreter, as tool tests on their own frozen inputs: the
frozen Phase 0 spec (tests/frozen_spec/spec/, which has no continuation decision) and a frozen continuation file
(tests/frozen_spec/phase1/continuation.yaml) laid over it. Editing spec/ never breaks these."""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
from pathlib import Path
from typing import Any

import pytest
from frozen_phase1 import BASE_FACTS
from frozen_phase1 import row as _row
from resume_contract_generator.render.tree import render_all
from resume_contract_generator.spec.continuation_situations import continuation_table_of
from resume_contract_generator.spec.tables import decoder_of, table_of
from resume_contract_generator.spec.validate import load_spec

from resume_contract.core.continuation import check_facts, continuation_summary, decide_continuation
from resume_contract.core.continuation_functions import normalised_cwd
from resume_contract.errors import FactsRefused

TESTS = Path(__file__).resolve().parent
FROZEN = TESTS / "frozen_spec"
PHASE0_FILES = ("failpoints", "runtime_event", "ledger", "decisions", "projector", "invariants", "scope")
CONTINUATION_OUTPUTS = {"generated/resume_contract_generated/continuation_table.py", "generated/tests/test_continuation.py"}


@pytest.fixture(scope="module")
def phase1(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("phase1")
    shutil.copytree(FROZEN / "spec", root / "spec")
    shutil.copyfile(FROZEN / "phase1" / "continuation.yaml", root / "spec" / "continuation.yaml")
    return load_spec(root)


def test_a_phase0_spec_is_valid_without_a_continuation_and_keeps_its_identity() -> None:
    spec = load_spec(FROZEN)

    assert spec.continuation is None
    assert not CONTINUATION_OUTPUTS & set(render_all(spec))
    # The digest as it was before the continuation file existed: an adopter's contract keeps its identity.
    digest = hashlib.sha256()
    for name in PHASE0_FILES:
        digest.update(f"spec/{name}.yaml\0".encode() + (FROZEN / "spec" / f"{name}.yaml").read_bytes() + b"\0")
    assert spec.sha256 == digest.hexdigest()


def test_a_continuation_file_adds_its_table_tests_and_contract_section(phase1: Any) -> None:
    outputs = render_all(phase1)

    assert CONTINUATION_OUTPUTS <= set(outputs)
    assert "## Phase 1: the continuation decision" in outputs["generated/CONTRACT.md"]
    assert "spec/continuation.yaml" in phase1.source_files


# -- the interpreter, on hand-made ledgers ------------------------------------------------------------------





def _decide(spec: Any, rows: list[bytes], facts: dict[str, Any] | None = None, table: Any = None) -> dict[str, Any]:
    events = [decoder_of(spec).decode_row(row) for row in rows]
    plan = decide_continuation(events, BASE_FACTS if facts is None else facts, table_of(spec), table or continuation_table_of(spec))
    return continuation_summary(plan)


def _request(number: int, request_id: Any, partial: bool = False) -> bytes:
    return _row(number, actions={"permissionRequest": {"requestId": request_id}}, partial=partial)


def _decision(number: int, request_id: str, partial: bool = False) -> bytes:
    return _row(number, actions={"permissionDecision": {"requestId": request_id, "allowed": True}}, partial=partial)


def test_a_permission_request_is_closed_only_by_a_later_committed_decision(phase1: Any) -> None:
    assert _decide(phase1, [_row(1), _request(2, "p"), _decision(3, "p")])["disposition"] == "continue"
    decided_first = _decide(phase1, [_row(1), _decision(2, "p"), _request(3, "p")])
    assert decided_first["diagnostics"] == [{"code": "pending_permission", "eventId": "e3", "detail": {"requestId": "p"}}]
    assert _decide(phase1, [_row(1), _request(2, "p"), _decision(3, "p", partial=True)])["rejection_reasons"] == ["pending_permission"]
    assert _decide(phase1, [_row(1), _request(2, "p", partial=True)])["disposition"] == "continue"


def test_a_request_is_one_item_by_its_key_as_the_reference_keeps_them(phase1: Any) -> None:
    # The reference keeps pending requests in a map by requestId (../shared/evolutions/05-permission-closers,
    # cases 19 and 32): a key requested twice is one item, where it was first requested, naming the later event;
    # an event that requests and decides the same key leaves nothing pending.
    twice = _decide(phase1, [_row(1), _request(2, "p"), _request(3, "q"), _request(4, "p")])
    assert twice["diagnostics"] == [
        {"code": "pending_permission", "eventId": "e4", "detail": {"requestId": "p"}},
        {"code": "pending_permission", "eventId": "e3", "detail": {"requestId": "q"}},
    ]
    both = _row(2, actions={"permissionRequest": {"requestId": "p"}, "permissionDecision": {"requestId": "p", "allowed": True}})
    assert _decide(phase1, [_row(1), both])["disposition"] == "continue"


def test_a_request_without_a_string_id_can_never_be_decided_so_it_parks(phase1: Any) -> None:
    summary = _decide(phase1, [_row(1), _request(2, 7), _decision(3, "7")])

    assert summary["diagnostics"] == [{"code": "pending_permission", "eventId": "e2", "detail": {"requestId": None}}]


def test_one_diagnostic_per_pending_request_and_one_reason(phase1: Any) -> None:
    summary = _decide(phase1, [_row(1), _request(2, "a"), _request(3, "b")])

    assert summary["rejection_reasons"] == ["pending_permission"]
    assert [d["detail"] for d in summary["diagnostics"]] == [{"requestId": "a"}, {"requestId": "b"}]


def test_a_stopping_check_ends_the_decision_at_the_first_that_fires(phase1: Any) -> None:
    accumulating = _decide(phase1, [_row(1), _request(2, "p")], {**BASE_FACTS, "currentCwd": "/elsewhere"})
    assert accumulating["rejection_reasons"] == ["pending_permission", "workspace_cwd_mismatch"]

    table = continuation_table_of(phase1)
    stopping = dataclasses.replace(table, checks=tuple(c._replace(stops=c.name == "pending_permission") for c in table.checks))
    summary = _decide(phase1, [_row(1), _request(2, "p")], {**BASE_FACTS, "currentCwd": "/elsewhere"}, stopping)
    assert summary["rejection_reasons"] == ["pending_permission"]


def test_a_diagnostic_without_a_reason_is_reported_and_does_not_park(phase1: Any) -> None:
    table = continuation_table_of(phase1)
    message = table.diagnostics["workspace_cwd_mismatch"][1]
    relaxed = dataclasses.replace(table, diagnostics={**table.diagnostics, "workspace_cwd_mismatch": (None, message)})

    summary = _decide(phase1, [_row(1)], {**BASE_FACTS, "currentCwd": "/elsewhere"}, relaxed)

    assert summary["disposition"] == "continue"
    assert summary["rejection_reasons"] == []
    assert [d["code"] for d in summary["diagnostics"]] == ["workspace_cwd_mismatch"]


@pytest.mark.parametrize(
    ("facts", "problem"),
    [
        ({**BASE_FACTS, "sandbox": True}, "facts: undeclared key 'sandbox'"),
        ({**BASE_FACTS, "ledgerReadable": 1}, "facts.ledgerReadable: expected a boolean, got a number"),
        ({**BASE_FACTS, "availableToolNames": ["Bash", 3]}, "facts.availableToolNames: expected a list of strings, got a list"),
        ({**BASE_FACTS, "continuationIdentity": {"invocationId": "i", "runId": "r", "turnId": "t", "agentId": "a"}}, "facts.continuationIdentity: undeclared key 'agentId'"),
        ({**BASE_FACTS, "workspaceCheckpoint": {"restored": True}}, "facts.workspaceCheckpoint: missing key 'runtimeEventHighWater'"),
        ({**BASE_FACTS, "expectedRuntimeEventHighWater": True}, "facts.expectedRuntimeEventHighWater: expected an integer, got a boolean"),
        ([], "facts: expected an object, got a list"),
    ],
)
def test_facts_that_are_not_exactly_the_declared_inputs_are_refused(phase1: Any, facts: Any, problem: str) -> None:
    with pytest.raises(FactsRefused) as refused:
        check_facts(facts, continuation_table_of(phase1).inputs)
    assert any(item.startswith(problem) for item in refused.value.problems), refused.value.problems


def test_optional_inputs_may_be_absent(phase1: Any) -> None:
    check_facts(BASE_FACTS, continuation_table_of(phase1).inputs)  # no checkpoint, no expected high-water


@pytest.mark.parametrize(
    ("path", "normalised"),
    [("C:\\Repo\\Src\\", "c:/repo/src"), ("/a/b///", "/a/b"), ("/A/B", "/A/B"), ("d:", "d:"), ("\\\\server\\Share", "//server/Share")],
)
def test_a_cwd_is_normalised_as_the_contract_says(path: str, normalised: str) -> None:
    assert normalised_cwd(path) == normalised


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "      when: [{present: planner.existing_continuation}]",
            "      when: [{present: planner.existing_continuation}, {present: fact.last_model_visible}]",
            "a gate runs before step 0, so it reads only planner, source and input paths",
        ),
        (
            "expected_high_water: [input.workspaceCheckpoint.runtimeEventHighWater,",
            "expected_high_water: [phase0.sourceRuntimeEventHighWater,",
            "the expected high-water is an input (input.NAME)",
        ),
        ("      when: [{absent: planner.ledger}]", "      when: [{absent: planner.ledger}, {no_events: true}]", "no gate parks a run whose ledger cannot be read"),
    ],
)
def test_a_spec_that_could_not_decide_at_run_time_is_refused(old: str, new: str, message: str, tmp_path: Path) -> None:
    from resume_contract_generator.errors import SpecInvalid

    shutil.copytree(FROZEN / "spec", tmp_path / "spec")
    text = (FROZEN / "phase1" / "continuation.yaml").read_text(encoding="utf-8")
    assert text.count(old) == 1
    (tmp_path / "spec" / "continuation.yaml").write_text(text.replace(old, new), encoding="utf-8")

    with pytest.raises(SpecInvalid) as invalid:
        load_spec(tmp_path)
    assert any(message in error.message for error in invalid.value.errors), invalid.value


def test_a_list_that_is_absent_holds_nothing(phase1: Any) -> None:
    table = continuation_table_of(phase1)
    catalog = next(c for c in table.checks if c.name == "tool_catalog")
    optional = {"values": "fact.tool_names", "set": "input.expectedRuntimeEventHighWater"}  # absent: no list at all
    absent_set = catalog._replace(when=({"missing_from": optional},))
    changed = dataclasses.replace(table, checks=tuple(absent_set if c.name == "tool_catalog" else c for c in table.checks))
    call = _row(2, role="model", author="agent", content={"kind": "function_call", "id": "c", "name": "Bash", "args": {}})
    result = _row(3, role="tool", author="tool", content={"kind": "function_response", "id": "c", "name": "Bash", "result": {}})

    summary = _decide(phase1, [_row(1), call, result], table=changed)

    assert summary["diagnostics"] == [{"code": "tool_catalog_mismatch", "detail": {"unavailableToolNames": ["Bash"]}}]


def test_an_invariant_the_tool_does_not_know_is_refused_at_its_line(tmp_path: Path) -> None:
    from resume_contract_generator.errors import SpecInvalid

    shutil.copytree(FROZEN / "spec", tmp_path / "spec")
    text = (FROZEN / "phase1" / "continuation.yaml").read_text(encoding="utf-8")
    declared = "invariants:\n  fresh_identity: {description: fresh ids}\n  always_continues: {description: made up}\n"
    (tmp_path / "spec" / "continuation.yaml").write_text(text.replace("\nsituations:\n", f"\n{declared}situations:\n", 1), encoding="utf-8")
    line = 1 + text.replace("\nsituations:\n", f"\n{declared}situations:\n", 1).splitlines().index("  always_continues: {description: made up}")

    with pytest.raises(SpecInvalid) as invalid:
        load_spec(tmp_path)
    assert [str(error) for error in invalid.value.errors] == [
        f"spec/continuation.yaml:{line}:3: unknown invariant 'always_continues'; the invariants are "
        "[deterministic_and_pure, continues_only_on_a_clean_phase0, disposition_matches_reasons, reasons_declared, fresh_identity]"
    ]
