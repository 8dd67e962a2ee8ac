"""The review corpus (tests/review_cases/, in the style of buf's breaking-change testdata).

Each case overlays `previous/` and `current/` files on the corpus' own frozen spec (tests/frozen_spec/, never
the live spec/, so a contract edit changes no expectation here), and pins `resume-contract diff`'s whole
text report in `expected.txt`: every rule's name, class, message and locations, and the evidence. The
case's directory is named for the rule it exists to show (`RULE--variant` for a further case of one rule);
a `current/review-waivers.yaml` is applied as `diff` applies the head's waivers. tests/review_cases/refresh.py recomputes them.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from resume_contract_generator.review.rules import BREAKING, BREAKING_AT_LEAST, BY_EVIDENCE, RULES, WEAKENS

CORPUS = Path(__file__).parent / "review_cases"
# The report is made exactly as refresh.py makes it (pytest's importlib mode puts no test directory on sys.path).
_spec = importlib.util.spec_from_file_location("review_cases_refresh", CORPUS / "refresh.py")
assert _spec is not None and _spec.loader is not None
refresh = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(refresh)
report_for, rule_of = refresh.report_for, refresh.rule_of
CASES = sorted(path.name for path in CORPUS.iterdir() if path.is_dir() and path.name != "__pycache__")
# Rules the spec's own checks make unreachable with a valid spec; tests/test_review.py shows them on
# hand-built models instead.
UNREACHABLE_WITH_A_VALID_SPEC = {
    "DECISION_REPLAY_REORDERED": "replay order is ledger order; a reordered list contradicts the projector",
    "STATE_MADE_FINAL": "a final state cannot keep transitions, and the canonical decisions pin replay",
    "STATE_MADE_NOT_FINAL": "a non-final state must reach a final one, which changes the canonical replay",
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
    "DECISION_REASON_REPLACED": "a reason named in a decision is replaced only by a rename (REASON_RENAMED) or with the diagnostics that give it",
    "EVIDENCE_UNEXPLAINED_WEAKENING": "a safety net: every weakening a valid spec can make has its own rule",
    "WIRE_TOOL_CALL_CHANGED": "tool_call must name required fields the canonical ledger carries and the projector's events use",
    "WIRE_PARTIAL_FLAG_CHANGED": "partial_flag must name a required boolean field, and the canonical ledger carries only `partial`",
    **{rule: "a rule of a contract in the contract language: tests/test_language_review.py shows it on its own frozen contract"
       for rule in ("LANGUAGE_ROWS_CHANGED", "LANGUAGE_UNKNOWN_KEYS_READ", "LANGUAGE_CLASS_CHANGED", "LANGUAGE_ITEM_CHANGED", "LANGUAGE_CHECK_CHANGED", "LANGUAGE_REPLAY_CHANGED", "LANGUAGE_NAME_ADDED",
                    "LANGUAGE_NAME_CHANGED", "LANGUAGE_WORDS_CHANGED", "LANGUAGE_SCENARIO_CHANGED", "LANGUAGE_REWORDED")},
}


@pytest.mark.parametrize("case", CASES)
def test_review_case(case: str) -> None:
    report = report_for(case)
    assert report == (CORPUS / case / "expected.txt").read_text(encoding="utf-8")
    rule = rule_of(case)
    change_class = RULES[rule][0]
    if change_class == BREAKING_AT_LEAST:
        assert f"  {BREAKING:<15} {rule}: " in report or f"  {WEAKENS:<15} {rule}: " in report
    elif change_class != BY_EVIDENCE:
        assert f"  {change_class:<15} {rule}: " in report


def test_every_rule_has_a_case_or_a_reason() -> None:
    shown = set()
    for case in CASES:
        text = (CORPUS / case / "expected.txt").read_text(encoding="utf-8")
        shown |= {rule for rule in RULES if f" {rule}: " in text}
    missing = set(RULES) - shown - set(UNREACHABLE_WITH_A_VALID_SPEC)
    assert missing == set()
    assert {rule_of(case) for case in CASES} <= set(RULES)


def test_every_rule_is_a_named_constant_with_its_own_id() -> None:
    # Collectors emit `rules.NAME`: grep finds every place a rule is raised, and a misspelt one fails at import.
    from resume_contract_generator.review import rules

    constants = {name: value for name, value in vars(rules).items() if isinstance(value, rules.Rule)}
    assert constants and all(rule.id == name for name, rule in constants.items())
    assert set(RULES) == set(constants)
