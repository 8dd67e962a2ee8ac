"""Where Phase 0's findings stand among the continuation's checks (`phase0.after`), a check parking with one of
Phase 0's reasons, and what is declared before anything raises it (a warning, not a refusal): tool tests on frozen
inputs (the frozen Phase 0 spec, the frozen continuation file tests/frozen_spec/phase1/, and the schema that admits
`phase0.after`, tests/frozen_spec/phase1_order/), edited here. Editing spec/ never breaks these.

Expected decisions are written out by hand from the rule (maka's step 10: a run with a pending permission and a
high-water the checkpoint does not expect says pending_permission first), never computed by the code under test.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from frozen_phase1 import BASE_FACTS, edited
from frozen_phase1 import project as frozen_project
from frozen_phase1 import row as _row
from resume_contract_generator.errors import SpecInvalid
from resume_contract_generator.spec.continuation_situations import continuation_table_of
from resume_contract_generator.spec.tables import decoder_of, table_of
from resume_contract_generator.spec.validate import load_spec

from resume_contract.core.continuation import continuation_summary, decide_continuation

PHASE0 = "  proceeds_on: safe_replay\n"
# A pending permission (e2) in a ledger of two events, planned by a checkpoint taken at three: Phase 0 finds the
# offset mismatch, the first check the pending permission.
LEDGER = [_row(1), _row(2, actions={"permissionRequest": {"requestId": "p"}})]
FACTS = {**BASE_FACTS, "expectedRuntimeEventHighWater": 3}


def _decide(spec: Any, rows: list[bytes] = LEDGER, facts: dict[str, Any] = FACTS) -> dict[str, Any]:
    events = [decoder_of(spec).decode_row(row) for row in rows]
    return continuation_summary(decide_continuation(events, facts, table_of(spec), continuation_table_of(spec)))


def test_phase0_findings_come_first_unless_the_contract_places_them(tmp_path: Path) -> None:
    first = _decide(load_spec(frozen_project(tmp_path / "first", edited())))
    placed = _decide(load_spec(frozen_project(tmp_path / "placed", edited((PHASE0, PHASE0 + "  after: pending_permission\n")))))

    assert first["rejection_reasons"] == ["runtime_offset_mismatch", "pending_permission"]
    assert [d["code"] for d in first["diagnostics"]] == ["runtime_offset_mismatch", "pending_permission"]
    assert placed["rejection_reasons"] == ["pending_permission", "runtime_offset_mismatch"]
    assert [d["code"] for d in placed["diagnostics"]] == ["pending_permission", "runtime_offset_mismatch"]
    assert placed["disposition"] == first["disposition"] == "park"


def test_placed_after_a_later_check_the_findings_follow_it(tmp_path: Path) -> None:
    spec = load_spec(frozen_project(tmp_path, edited((PHASE0, PHASE0 + "  after: workspace_identity\n"))))

    summary = _decide(spec, facts={**FACTS, "currentWorkspaceIdentity": "other"})

    assert summary["rejection_reasons"] == ["pending_permission", "workspace_identity_mismatch", "runtime_offset_mismatch"]


def test_a_clean_phase0_placed_anywhere_still_continues(tmp_path: Path) -> None:
    spec = load_spec(frozen_project(tmp_path, edited((PHASE0, PHASE0 + "  after: pending_permission\n"))))

    summary = _decide(spec, rows=[_row(1)], facts=BASE_FACTS)

    assert summary["disposition"] == "continue"
    assert summary["rejection_reasons"] == []


def test_a_place_that_names_no_check_is_refused_at_its_line(tmp_path: Path) -> None:
    text = edited((PHASE0, PHASE0 + "  after: pending_permissions\n"))
    line = text.splitlines().index("  after: pending_permissions") + 1

    with pytest.raises(SpecInvalid) as invalid:
        load_spec(frozen_project(tmp_path, text))

    (error,) = invalid.value.errors
    assert (error.mark.file, error.mark.line) == ("spec/continuation.yaml", line)
    assert error.message.startswith("'pending_permissions' names no check; Phase 0's reasons stand after one of [pending_permission, ledger_empty")


def test_a_check_before_the_place_cannot_test_a_phase0_reason_as_raised(tmp_path: Path) -> None:
    skip = "  - name: ledger_empty\n    when: [{no_events: true}]\n"
    tested = "  - name: ledger_empty\n    skip_if: [{raised: runtime_offset_mismatch}]\n    when: [{no_events: true}]\n"

    with pytest.raises(SpecInvalid) as invalid:
        load_spec(frozen_project(tmp_path / "before", edited((PHASE0, PHASE0 + "  after: identity_mismatch\n"), (skip, tested))))
    assert "reason 'runtime_offset_mismatch' is raised by no earlier check nor by Phase 0" in str(invalid.value)

    # placed before it, the same test is accepted
    load_spec(frozen_project(tmp_path / "after", edited((PHASE0, PHASE0 + "  after: pending_permission\n"), (skip, tested))))


def test_a_check_may_park_with_one_of_phase0s_reasons(tmp_path: Path) -> None:
    # A continuation check of its own raising Phase 0's runtime_offset_mismatch: declared as a diagnostic, its
    # reason Phase 0's (no remedy of the continuation's own); said once among the reasons.
    check = (
        "  - name: ledger_empty\n",
        "  - name: checkpoint_offset\n    when: [{present: input.expectedRuntimeEventHighWater}]\n    diagnostic: checkpoint_offset\n"
        "  - name: ledger_empty\n",
    )
    diagnostic = (
        "\ndiagnostics:\n",
        "\ndiagnostics:\n  checkpoint_offset: {reason: runtime_offset_mismatch, message: the caller expects a high-water}\n",
    )
    spec = load_spec(frozen_project(tmp_path, edited(check, diagnostic)))

    summary = _decide(spec, rows=[_row(1)], facts={**BASE_FACTS, "expectedRuntimeEventHighWater": 1})
    assert summary["rejection_reasons"] == ["runtime_offset_mismatch"]
    assert [d["code"] for d in summary["diagnostics"]] == ["checkpoint_offset"]

    both = _decide(spec, rows=[_row(1)], facts={**BASE_FACTS, "expectedRuntimeEventHighWater": 2})
    assert both["rejection_reasons"] == ["runtime_offset_mismatch"]
    assert [d["code"] for d in both["diagnostics"]] == ["runtime_offset_mismatch", "checkpoint_offset"]


DECLARED = (
    "\ndiagnostics:\n",
    "\ndiagnostics:\n  lineage_too_deep: {reason: lineage_too_deep, message: the runs this one continued go deeper than the bound}\n",
)
REASON = ("\nreasons:\n", "\nreasons:\n  lineage_too_deep: Continue a run nearer its root, or start a new run.\n")


def test_a_vocabulary_declared_before_its_checks_is_a_warning_not_a_refusal(tmp_path: Path, run_cli: Any) -> None:
    text = edited(DECLARED, REASON)
    lines = text.splitlines()
    diagnostic_line = lines.index("  lineage_too_deep: {reason: lineage_too_deep, message: the runs this one continued go deeper than the bound}") + 1
    reason_line = lines.index("  lineage_too_deep: Continue a run nearer its root, or start a new run.") + 1
    project = frozen_project(tmp_path, text)

    code, out, err = run_cli("--root", str(project), "generate")

    assert code == 0, (out, err)
    assert f"warning: spec/continuation.yaml:{diagnostic_line}:3: diagnostic 'lineage_too_deep' is declared but no check raises it yet" in err
    assert f"warning: spec/continuation.yaml:{reason_line}:3: reason 'lineage_too_deep' is declared but no check raises it yet" in err
    code, out, err = run_cli("--root", str(project), "check")
    assert code == 0, (out, err)
    assert "diagnostic 'lineage_too_deep' is declared but no check raises it yet" in err


def test_a_reason_no_diagnostic_parks_with_is_still_refused(tmp_path: Path) -> None:
    with pytest.raises(SpecInvalid) as invalid:
        load_spec(frozen_project(tmp_path, edited(REASON)))

    assert "reason 'lineage_too_deep' is declared but no diagnostic parks with it" in str(invalid.value)
