"""The review corpus (tests/review_cases/, in the style of buf's breaking-change testdata).

Each case overlays `previous/` and `current/` files on the corpus' own frozen spec (tests/frozen_spec/, never
the live spec/, so a contract edit changes no expectation here), and pins `resume-contract diff`'s whole
text report in `expected.txt`: every rule's name, class, message and locations, and the evidence. The
case's directory is named for the rule it exists to show. tests/review_cases/refresh.py recomputes them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from resume_contract_generator.review import review
from resume_contract_generator.review_report import as_text
from resume_contract_generator.review_rules import RULES
from resume_contract_generator.validate import load_spec

FROZEN_SPEC = Path(__file__).resolve().parent / "frozen_spec" / "spec"
CORPUS = Path(__file__).parent / "review_cases"
CASES = sorted(path.name for path in CORPUS.iterdir() if path.is_dir())
DEPTH = 2
# Rules the spec's own checks make unreachable with a valid spec; tests/test_review.py shows them on
# hand-built models instead.
UNREACHABLE_WITH_A_VALID_SPEC = {
    "DECISION_REPLAY_REORDERED": "replay order is ledger order; a reordered list contradicts the projector",
    "STATE_MADE_FINAL": "a final state cannot keep transitions, and the canonical decisions pin replay",
    "STATE_MADE_NOT_FINAL": "a non-final state must reach a final one, which changes the canonical replay",
    "STATE_AT_END_CHANGED": "every diagnostic must be raised somewhere, so swapping one needs two changes",
    "PREFIX_REMOVED": "shown with DECISION_REMOVED, which needs it",
    "PREFIX_ADDED": "shown with FAILPOINT_PREFIX_RENAMED, which needs it",
    "DECISION_ADDED": "shown with FAILPOINT_PREFIX_RENAMED, which needs it",
    "STATE_VERIFICATION_DROPPED": "shown with DECISION_DISPOSITION_RELAXED",
    "STATE_VERIFICATION_ADDED": "shown with DECISION_DISPOSITION_TIGHTENED",
    "STATE_AT_END_DROPPED": "shown with DECISION_DISPOSITION_RELAXED",
    "STATE_AT_END_ADDED": "shown with DECISION_DISPOSITION_TIGHTENED",
    "STATE_STATUS_CHANGED": "shown with DECISION_STATUS_CHANGED",
    "DECISION_REASON_DROPPED": "shown with DECISION_DISPOSITION_RELAXED",
    "DECISION_REASON_ADDED": "shown with DECISION_DISPOSITION_TIGHTENED",
    "DECISION_DIAGNOSTIC_DROPPED": "shown with DECISION_DISPOSITION_RELAXED",
    "DECISION_DIAGNOSTIC_ADDED": "shown with DECISION_DISPOSITION_TIGHTENED",
    "EVIDENCE_UNEXPLAINED_WEAKENING": "a safety net: every weakening a valid spec can make has its own rule",
    "WIRE_TOOL_CALL_CHANGED": "tool_call must name required fields the canonical ledger carries and the projector's events use",
    "WIRE_PARTIAL_FLAG_CHANGED": "partial_flag must name a required boolean field, and the canonical ledger carries only `partial`",
}


def _side(tmp_path: Path, case: str, side: str) -> Path:
    root = tmp_path / side
    shutil.copytree(FROZEN_SPEC, root / "spec")
    for overlay in sorted((CORPUS / case / side).glob("*.yaml")):
        shutil.copyfile(overlay, root / "spec" / overlay.name)
    for overlay in sorted((CORPUS / case / side).glob("*.schema.json")):
        shutil.copyfile(overlay, root / "spec" / "schema" / overlay.name)
    return root


@pytest.mark.parametrize("case", CASES)
def test_review_case(case: str, tmp_path: Path) -> None:
    previous = load_spec(_side(tmp_path, case, "previous"))
    current = load_spec(_side(tmp_path, case, "current"))
    report = as_text(review(previous, current, depth=DEPTH), "previous", "current")
    assert report == (CORPUS / case / "expected.txt").read_text(encoding="utf-8")
    change_class = RULES[case][0]
    if change_class != "by-evidence":
        assert f"  {change_class:<15} {case}: " in report


def test_every_rule_has_a_case_or_a_reason() -> None:
    shown = set()
    for case in CASES:
        text = (CORPUS / case / "expected.txt").read_text(encoding="utf-8")
        shown |= {rule for rule in RULES if f" {rule}: " in text}
    missing = set(RULES) - shown - set(UNREACHABLE_WITH_A_VALID_SPEC)
    assert missing == set()
    assert set(CASES) <= set(RULES)
