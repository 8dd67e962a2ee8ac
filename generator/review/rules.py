"""The review's vocabulary: every rule with its class and meaning.

The four classes are defined once, by what decisions do (resume_contract/core/moves.py, the table in
docs/changing-the-contract.md): weakens-safety when a ledger moves toward proceeding, tightens when ledgers move only
toward stopping, breaking when nothing moves toward proceeding but what a consumer reads changes, neutral when no
output moves. So a rule about what decides is `by-evidence`: its change takes the class of the ledgers that moved,
and shows the smallest of them with its before and after decisions (a class no witness shows is not given).
`breaking-at-least` is the same with `breaking` as its floor: a removed or renamed name (a reason, a diagnostic,
the directive's text) breaks the consumers matching it even where no explored ledger gave it. A rule about what the
contract's own checks cover (a failpoint of the crash harness, an invariant `verify` proves, a schema, the oracle)
moves no decision: breaking where a check is lost or changed (what `crash` or `verify` reports changes), neutral
where one is added.
"""

from __future__ import annotations

from typing import NamedTuple

from resume_contract.core.moves import BREAKING, CLASSES, NEUTRAL, TIGHTENS, WEAKENS

BY_EVIDENCE = "by-evidence"
BREAKING_AT_LEAST = "breaking-at-least"
__all__ = ["BREAKING", "BREAKING_AT_LEAST", "BY_EVIDENCE", "CLASSES", "NEUTRAL", "RULES", "TIGHTENS", "WEAKENS", "Rule"]


class Rule(NamedTuple):
    """A review rule: its class, what it means (`diff --format json` gives it as "about"), and its stable id."""

    change_class: str
    meaning: str
    id: str


def _rule(rule_id: str, change_class: str, meaning: str) -> Rule:
    return Rule(change_class, meaning, rule_id)


# Every rule, by the name its findings carry: a collector emits `rules.NAME`, never an id spelt at run time.
FAILPOINT_REMOVED = _rule("FAILPOINT_REMOVED", BREAKING, "a failpoint is no longer covered")
FAILPOINT_ADDED = _rule("FAILPOINT_ADDED", NEUTRAL, "a new failpoint is covered")
FAILPOINT_PREFIX_LATER = _rule("FAILPOINT_PREFIX_LATER", BREAKING, "a failpoint claims a later (longer) committed prefix")
FAILPOINT_PREFIX_EARLIER = _rule("FAILPOINT_PREFIX_EARLIER", BREAKING, "a failpoint claims an earlier (shorter) committed prefix")
FAILPOINT_PREFIX_RENAMED = _rule("FAILPOINT_PREFIX_RENAMED", BY_EVIDENCE, "a failpoint names another prefix of the same length")
FAILPOINT_BOUNDARY_REWORDED = _rule("FAILPOINT_BOUNDARY_REWORDED", NEUTRAL, "a failpoint's boundary text changed")
FAILPOINT_NOTE_CHANGED = _rule("FAILPOINT_NOTE_CHANGED", NEUTRAL, "a failpoint's note changed")
OUTCOME_REMOVED = _rule("OUTCOME_REMOVED", BREAKING, "a tool outcome is no longer exercised")
OUTCOME_ADDED = _rule("OUTCOME_ADDED", NEUTRAL, "a new tool outcome is exercised")
OUTCOME_REWORDED = _rule("OUTCOME_REWORDED", NEUTRAL, "an outcome's description changed")
LEDGER_EVENTS_CHANGED = _rule("LEDGER_EVENTS_CHANGED", BY_EVIDENCE, "the canonical ledger's events changed")
PREFIX_REMOVED = _rule("PREFIX_REMOVED", BY_EVIDENCE, "a committed prefix was removed")
PREFIX_ADDED = _rule("PREFIX_ADDED", BY_EVIDENCE, "a committed prefix was added")
PREFIX_MOVED = _rule("PREFIX_MOVED", BY_EVIDENCE, "a prefix ends at another event")
DECISION_REMOVED = _rule("DECISION_REMOVED", BY_EVIDENCE, "a prefix lost its required decision")
DECISION_ADDED = _rule("DECISION_ADDED", BY_EVIDENCE, "a prefix gained a required decision")
DECISION_DISPOSITION_RELAXED = _rule("DECISION_DISPOSITION_RELAXED", BY_EVIDENCE, "a prefix's decision went from blocked to safe_replay")
DECISION_DISPOSITION_TIGHTENED = _rule("DECISION_DISPOSITION_TIGHTENED", BY_EVIDENCE, "a prefix's decision went from safe_replay to blocked")
DECISION_REASON_DROPPED = _rule("DECISION_REASON_DROPPED", BY_EVIDENCE, "a decision no longer requires a rejection reason")
DECISION_REASON_ADDED = _rule("DECISION_REASON_ADDED", BY_EVIDENCE, "a decision requires a new rejection reason")
DECISION_DIAGNOSTIC_DROPPED = _rule("DECISION_DIAGNOSTIC_DROPPED", BY_EVIDENCE, "a decision no longer requires a diagnostic")
DECISION_DIAGNOSTIC_ADDED = _rule("DECISION_DIAGNOSTIC_ADDED", BY_EVIDENCE, "a decision requires a new diagnostic")
DECISION_REASON_REPLACED = _rule("DECISION_REASON_REPLACED", BY_EVIDENCE, "a decision requires another rejection reason in place of one it dropped")
DECISION_DIAGNOSTIC_REPLACED = _rule("DECISION_DIAGNOSTIC_REPLACED", BY_EVIDENCE, "a decision requires another diagnostic in place of one it dropped")
DECISION_STATUS_RELAXED = _rule("DECISION_STATUS_RELAXED", BY_EVIDENCE, "an operation the decision called indeterminate is now settled")
DECISION_STATUS_TIGHTENED = _rule("DECISION_STATUS_TIGHTENED", BY_EVIDENCE, "a settled operation is now indeterminate")
DECISION_STATUS_CHANGED = _rule("DECISION_STATUS_CHANGED", BY_EVIDENCE, "the operations a decision records changed")
DECISION_REPLAY_WIDENED = _rule("DECISION_REPLAY_WIDENED", BY_EVIDENCE, "provider replay keeps events it used to drop")
DECISION_REPLAY_NARROWED = _rule("DECISION_REPLAY_NARROWED", BY_EVIDENCE, "provider replay drops events it used to keep")
DECISION_REPLAY_REORDERED = _rule("DECISION_REPLAY_REORDERED", BY_EVIDENCE, "provider replay keeps the same events in another order")
DECISION_TERMINAL_FACT_DROPPED = _rule("DECISION_TERMINAL_FACT_DROPPED", BY_EVIDENCE, "the terminal fact is no longer required")
DECISION_TERMINAL_FACT_ADDED = _rule("DECISION_TERMINAL_FACT_ADDED", BY_EVIDENCE, "the terminal fact is now required")
DECISION_REWORDED = _rule("DECISION_REWORDED", NEUTRAL, "a decision's summary or same-as reference changed")
HIGH_WATER_DIAGNOSTIC_CHANGED = _rule("HIGH_WATER_DIAGNOSTIC_CHANGED", BY_EVIDENCE, "a high-water mismatch raises another diagnostic")
LEDGER_RULE_REWORDED = _rule("LEDGER_RULE_REWORDED", NEUTRAL, "a ledger rule's text changed")
CORRUPTION_KIND_REMOVED = _rule("CORRUPTION_KIND_REMOVED", BREAKING_AT_LEAST, "a kind of storage corruption is no longer named")
CORRUPTION_KIND_ADDED = _rule("CORRUPTION_KIND_ADDED", BY_EVIDENCE, "a new kind of storage corruption is named")
CORRUPTION_KIND_REWORDED = _rule("CORRUPTION_KIND_REWORDED", NEUTRAL, "a corruption kind's description changed")
INITIAL_STATE_CHANGED = _rule("INITIAL_STATE_CHANGED", BY_EVIDENCE, "the projector starts in another state")
STATE_ADDED = _rule("STATE_ADDED", BY_EVIDENCE, "the projector has a new state")
STATE_REMOVED = _rule("STATE_REMOVED", BY_EVIDENCE, "the projector lost a state")
STATE_STATUS_CHANGED = _rule("STATE_STATUS_CHANGED", BY_EVIDENCE, "a state reports another operation status")
STATE_VERIFICATION_DROPPED = _rule("STATE_VERIFICATION_DROPPED", BY_EVIDENCE, "a state no longer requires verification")
STATE_VERIFICATION_ADDED = _rule("STATE_VERIFICATION_ADDED", BY_EVIDENCE, "a state now requires verification")
STATE_AT_END_DROPPED = _rule("STATE_AT_END_DROPPED", BY_EVIDENCE, "a state left at the end of a prefix no longer raises a diagnostic")
STATE_AT_END_ADDED = _rule("STATE_AT_END_ADDED", BY_EVIDENCE, "a state left at the end of a prefix now raises a diagnostic")
STATE_AT_END_CHANGED = _rule("STATE_AT_END_CHANGED", BY_EVIDENCE, "a state left at the end of a prefix raises another diagnostic")
STATE_MADE_FINAL = _rule("STATE_MADE_FINAL", BY_EVIDENCE, "a state now settles its operation, so its call and response are replayed")
STATE_MADE_NOT_FINAL = _rule("STATE_MADE_NOT_FINAL", BY_EVIDENCE, "a state no longer settles its operation")
STATE_REWORDED = _rule("STATE_REWORDED", NEUTRAL, "a state's description changed")
EVENT_KIND_CHANGED = _rule("EVENT_KIND_CHANGED", BY_EVIDENCE, "an event kind matches other committed events")
EVENT_KIND_REWORDED = _rule("EVENT_KIND_REWORDED", NEUTRAL, "an event kind's description changed")
FACT_CHANGED = _rule("FACT_CHANGED", BY_EVIDENCE, "a run's fact is read otherwise, or was added or removed")
ROW_CHECK_CHANGED = _rule("ROW_CHECK_CHANGED", BY_EVIDENCE, "a check of every committed row was added, removed or changed")
SEMANTICS_CHANGED = _rule("SEMANTICS_CHANGED", BY_EVIDENCE, "the projector's expressions compare values by other rules")
REPLAY_HIDDEN_CHANGED = _rule("REPLAY_HIDDEN_CHANGED", BY_EVIDENCE, "which rows are hidden from the replay, or what a half-hidden pair raises, changed")
RULE_ANOMALY_BECAME_TRANSITION = _rule("RULE_ANOMALY_BECAME_TRANSITION", BY_EVIDENCE, "an anomaly is now a normal transition")
RULE_TRANSITION_BECAME_ANOMALY = _rule("RULE_TRANSITION_BECAME_ANOMALY", BY_EVIDENCE, "a normal transition is now an anomaly")
RULE_RETARGETED = _rule("RULE_RETARGETED", BY_EVIDENCE, "a transition leads to another state")
RULE_ANOMALY_CHANGED = _rule("RULE_ANOMALY_CHANGED", BY_EVIDENCE, "an anomaly raises another diagnostic")
RULE_ADDED = _rule("RULE_ADDED", BY_EVIDENCE, "a rule was added")
RULE_REMOVED = _rule("RULE_REMOVED", BY_EVIDENCE, "a rule was removed")
RULES_REORDERED = _rule("RULES_REORDERED", NEUTRAL, "the same rules are listed in another order")
DIAGNOSTIC_REMOVED = _rule("DIAGNOSTIC_REMOVED", BREAKING_AT_LEAST, "a diagnostic no longer exists")
DIAGNOSTIC_RENAMED = _rule("DIAGNOSTIC_RENAMED", BREAKING_AT_LEAST, "a diagnostic has a new code; its reason and its message or every place that raises it are the same")
DIAGNOSTIC_ADDED = _rule("DIAGNOSTIC_ADDED", NEUTRAL, "a diagnostic was defined (the rules that raise it are classed on their own)")
DIAGNOSTIC_REASON_CHANGED = _rule("DIAGNOSTIC_REASON_CHANGED", BY_EVIDENCE, "a diagnostic rejects with another reason")
DIAGNOSTIC_REWORDED = _rule("DIAGNOSTIC_REWORDED", NEUTRAL, "a diagnostic's message changed")
AFTER_TERMINAL_DIAGNOSTIC_CHANGED = _rule("AFTER_TERMINAL_DIAGNOSTIC_CHANGED", BY_EVIDENCE, "an event after the terminal event raises another diagnostic")
REASON_REMOVED = _rule("REASON_REMOVED", BREAKING_AT_LEAST, "a rejection reason was removed")
REASON_RENAMED = _rule("REASON_RENAMED", BREAKING_AT_LEAST, "a rejection reason has a new name; its description or the diagnostics rejecting with it are the same")
REASON_ADDED = _rule("REASON_ADDED", BY_EVIDENCE, "a rejection reason was added")
REASON_REWORDED = _rule("REASON_REWORDED", NEUTRAL, "a reason's description changed")
REASONS_REORDERED = _rule("REASONS_REORDERED", BY_EVIDENCE, "rejection reasons are listed in another order (breaking where a decision lists two of them: consumers reading the first one break)")
DIRECTIVE_CHANGED = _rule("DIRECTIVE_CHANGED", BREAKING_AT_LEAST, "what the operator is told to do about an indeterminate operation changed")
SCHEMA_CHANGED = _rule("SCHEMA_CHANGED", BREAKING, "the JSON Schema a spec file is checked against changed (a relaxed one lets specs through)")
INVARIANT_REMOVED = _rule("INVARIANT_REMOVED", BREAKING, "verify no longer proves an invariant")
INVARIANT_ADDED = _rule("INVARIANT_ADDED", NEUTRAL, "verify proves a new invariant")
INVARIANT_EXEMPTION_ADDED = _rule("INVARIANT_EXEMPTION_ADDED", BREAKING, "an invariant exempts another diagnostic")
INVARIANT_EXEMPTION_REMOVED = _rule("INVARIANT_EXEMPTION_REMOVED", NEUTRAL, "an invariant exempts one diagnostic fewer")
INVARIANT_REWORDED = _rule("INVARIANT_REWORDED", NEUTRAL, "an invariant's description changed")
RUN_LOOP_CHANGED = _rule("RUN_LOOP_CHANGED", NEUTRAL, "the crash harness kills another run loop (its hooks are checked, and killed, as before)")
CONTINUATION_ADDED = _rule("CONTINUATION_ADDED", WEAKENS, "the contract gained a continuation decision: runs it could not continue may now be continued")
CONTINUATION_REMOVED = _rule("CONTINUATION_REMOVED", BREAKING, "the contract lost its continuation decision: continue-plan refuses every run")
CONTINUATION_CHANGED = _rule(
    "CONTINUATION_CHANGED",
    BY_EVIDENCE,
    "a part of the continuation decision changed; it takes the class of how both sides' decisions of the explored "
    "situations moved (neutral when none moved)",
)
CONTINUATION_REWORDED = _rule("CONTINUATION_REWORDED", NEUTRAL, "the continuation decision's summary changed")
CONTINUATION_CRASH_ADDED = _rule("CONTINUATION_CRASH_ADDED", NEUTRAL, "the contract gained the crash contract of a continuation: its boundaries are killed and recovered")
CONTINUATION_CRASH_REMOVED = _rule("CONTINUATION_CRASH_REMOVED", BREAKING, "the contract lost the crash contract of a continuation: no boundary is killed, nothing checks recovery")
CONTINUATION_BOUNDARY_ADDED = _rule("CONTINUATION_BOUNDARY_ADDED", NEUTRAL, "a new crash boundary of a continuation is covered")
CONTINUATION_BOUNDARY_REMOVED = _rule("CONTINUATION_BOUNDARY_REMOVED", BREAKING, "a crash boundary of a continuation is no longer covered")
CONTINUATION_BOUNDARY_MOVED = _rule("CONTINUATION_BOUNDARY_MOVED", BREAKING, "a crash boundary follows another transition: the crash it covered is no longer killed there")
CONTINUATION_BOUNDARY_REPLAN_RELAXED = _rule("CONTINUATION_BOUNDARY_REPLAN_RELAXED", WEAKENS, "planning the source again after a crash at a boundary may continue, or parks with fewer or other reasons")
CONTINUATION_BOUNDARY_REPLAN_TIGHTENED = _rule("CONTINUATION_BOUNDARY_REPLAN_TIGHTENED", TIGHTENS, "planning the source again after a crash at a boundary parks where it continued, or with more reasons")
CONTINUATION_BOUNDARY_RECOVERY_CHANGED = _rule("CONTINUATION_BOUNDARY_RECOVERY_CHANGED", BREAKING, "startup recovery takes other steps or leaves another terminal event or header after a crash at a boundary")
CONTINUATION_BOUNDARY_REWORDED = _rule("CONTINUATION_BOUNDARY_REWORDED", NEUTRAL, "a crash boundary's text changed")
CONTINUATION_LIFECYCLE_CHANGED = _rule("CONTINUATION_LIFECYCLE_CHANGED", BREAKING, "the continuation's lifecycle (its states or transitions) changed: the executor or recovery may now write in another order")
ORACLE_CHANGED = _rule("ORACLE_CHANGED", BREAKING, "matches_oracle compares plans with another oracle (a weaker one lets a wrong spec through)")
SCOPE_REWORDED = _rule("SCOPE_REWORDED", NEUTRAL, "the phase boundary's text changed")
WIRE_UNKNOWN_KEYS_RELAXED = _rule("WIRE_UNKNOWN_KEYS_RELAXED", BY_EVIDENCE, "rows with undeclared keys are read instead of refused")
WIRE_UNKNOWN_KEYS_TIGHTENED = _rule("WIRE_UNKNOWN_KEYS_TIGHTENED", BY_EVIDENCE, "rows with undeclared keys are refused")
WIRE_FIELD_ADDED = _rule("WIRE_FIELD_ADDED", BY_EVIDENCE, "a row may carry a new optional field (rows the reader refused are now read)")
WIRE_FIELD_REMOVED = _rule("WIRE_FIELD_REMOVED", BY_EVIDENCE, "a field is no longer part of a row (rows carrying it are refused)")
WIRE_FIELD_MADE_REQUIRED = _rule("WIRE_FIELD_MADE_REQUIRED", BY_EVIDENCE, "a field is now required (rows without it are refused)")
WIRE_FIELD_MADE_OPTIONAL = _rule("WIRE_FIELD_MADE_OPTIONAL", BY_EVIDENCE, "a field may now be absent (rows the reader refused are now read)")
WIRE_FIELD_TYPE_CHANGED = _rule("WIRE_FIELD_TYPE_CHANGED", BY_EVIDENCE, "a field holds another type")
WIRE_ENUM_NARROWED = _rule("WIRE_ENUM_NARROWED", BY_EVIDENCE, "a field allows fewer values (rows with the others are refused)")
WIRE_ENUM_WIDENED = _rule("WIRE_ENUM_WIDENED", BY_EVIDENCE, "a field allows more values (rows the reader refused are now read)")
WIRE_CONTENT_KIND_REMOVED = _rule("WIRE_CONTENT_KIND_REMOVED", BY_EVIDENCE, "a content kind is no longer read (rows carrying it are refused)")
WIRE_CONTENT_KIND_ADDED = _rule("WIRE_CONTENT_KIND_ADDED", BY_EVIDENCE, "a new content kind, which takes no part in tool state, is read")
WIRE_TOOL_CONTENT_KIND_ADDED = _rule("WIRE_TOOL_CONTENT_KIND_ADDED", BY_EVIDENCE, "a new content kind that opens or settles tool calls is read")
WIRE_TOOL_CALL_CHANGED = _rule("WIRE_TOOL_CALL_CHANGED", BY_EVIDENCE, "which fields of a content kind name a tool call changed")
WIRE_TERMINAL_CHANGED = _rule("WIRE_TERMINAL_CHANGED", BY_EVIDENCE, "what makes an event terminal changed")
WIRE_PARTIAL_FLAG_CHANGED = _rule("WIRE_PARTIAL_FLAG_CHANGED", BY_EVIDENCE, "what makes an event partial changed")
WIRE_REWORDED = _rule("WIRE_REWORDED", NEUTRAL, "a description in the wire format changed")
WIRE_REFUSAL_ADDED = _rule("WIRE_REFUSAL_ADDED", BY_EVIDENCE, "rows where a test holds are refused (corruption: no plan)")
WIRE_REFUSAL_REMOVED = _rule("WIRE_REFUSAL_REMOVED", BY_EVIDENCE, "rows a test refused are read again (the projector decides them)")
# A contract in the contract language (spec/contract.yaml, generator/language/review.py).
LANGUAGE_ROWS_CHANGED = _rule("LANGUAGE_ROWS_CHANGED", BY_EVIDENCE, "what a row is changed (its id, run, tag, kinds or fields)")
LANGUAGE_UNKNOWN_KEYS_READ = _rule("LANGUAGE_UNKNOWN_KEYS_READ", BY_EVIDENCE, "rows holding keys no kind declares, refused as corrupt, are read past and decided")
LANGUAGE_CLASS_CHANGED = _rule("LANGUAGE_CLASS_CHANGED", BY_EVIDENCE, "a class of rows was added, removed or tests rows otherwise")
LANGUAGE_ITEM_CHANGED = _rule("LANGUAGE_ITEM_CHANGED", BY_EVIDENCE, "an item's key, states or entries changed")
LANGUAGE_CHECK_CHANGED = _rule("LANGUAGE_CHECK_CHANGED", BY_EVIDENCE, "a check over the whole prefix was added, removed or tests otherwise")
LANGUAGE_REPLAY_CHANGED = _rule("LANGUAGE_REPLAY_CHANGED", BY_EVIDENCE, "which rows are replayed changed")
LANGUAGE_NAME_ADDED = _rule("LANGUAGE_NAME_ADDED", BY_EVIDENCE, "a diagnostic or reason was added")
LANGUAGE_NAME_CHANGED = _rule("LANGUAGE_NAME_CHANGED", BREAKING_AT_LEAST, "a diagnostic or reason was removed, renamed or given another reason")
LANGUAGE_WORDS_CHANGED = _rule("LANGUAGE_WORDS_CHANGED", BREAKING, "the decision's words (proceed, stop) changed")
LANGUAGE_SCENARIO_CHANGED = _rule("LANGUAGE_SCENARIO_CHANGED", BY_EVIDENCE, "a scenario was added, removed, or says another decision after some row")
LANGUAGE_REWORDED = _rule("LANGUAGE_REWORDED", NEUTRAL, "a description, message, meaning or the summary changed")
EVIDENCE_UNEXPLAINED_WEAKENING = _rule("EVIDENCE_UNEXPLAINED_WEAKENING", WEAKENS, "ledgers decide less safely and no other rule explains it")
WAIVER_ADDED = _rule("WAIVER_ADDED", WEAKENS, "the change adds a waiver of one of its own findings: a waiver waives only once a "
                     "reviewer has approved it on the base branch")

RULES: dict[str, Rule] = {rule.id: rule for rule in [
    FAILPOINT_REMOVED,
    FAILPOINT_ADDED,
    FAILPOINT_PREFIX_LATER,
    FAILPOINT_PREFIX_EARLIER,
    FAILPOINT_PREFIX_RENAMED,
    FAILPOINT_BOUNDARY_REWORDED,
    FAILPOINT_NOTE_CHANGED,
    OUTCOME_REMOVED,
    OUTCOME_ADDED,
    OUTCOME_REWORDED,
    LEDGER_EVENTS_CHANGED,
    PREFIX_REMOVED,
    PREFIX_ADDED,
    PREFIX_MOVED,
    DECISION_REMOVED,
    DECISION_ADDED,
    DECISION_DISPOSITION_RELAXED,
    DECISION_DISPOSITION_TIGHTENED,
    DECISION_REASON_DROPPED,
    DECISION_REASON_ADDED,
    DECISION_DIAGNOSTIC_DROPPED,
    DECISION_DIAGNOSTIC_ADDED,
    DECISION_REASON_REPLACED,
    DECISION_DIAGNOSTIC_REPLACED,
    DECISION_STATUS_RELAXED,
    DECISION_STATUS_TIGHTENED,
    DECISION_STATUS_CHANGED,
    DECISION_REPLAY_WIDENED,
    DECISION_REPLAY_NARROWED,
    DECISION_REPLAY_REORDERED,
    DECISION_TERMINAL_FACT_DROPPED,
    DECISION_TERMINAL_FACT_ADDED,
    DECISION_REWORDED,
    HIGH_WATER_DIAGNOSTIC_CHANGED,
    LEDGER_RULE_REWORDED,
    CORRUPTION_KIND_REMOVED,
    CORRUPTION_KIND_ADDED,
    CORRUPTION_KIND_REWORDED,
    INITIAL_STATE_CHANGED,
    STATE_ADDED,
    STATE_REMOVED,
    STATE_STATUS_CHANGED,
    STATE_VERIFICATION_DROPPED,
    STATE_VERIFICATION_ADDED,
    STATE_AT_END_DROPPED,
    STATE_AT_END_ADDED,
    STATE_AT_END_CHANGED,
    STATE_MADE_FINAL,
    STATE_MADE_NOT_FINAL,
    STATE_REWORDED,
    EVENT_KIND_CHANGED,
    EVENT_KIND_REWORDED,
    FACT_CHANGED,
    ROW_CHECK_CHANGED,
    SEMANTICS_CHANGED,
    REPLAY_HIDDEN_CHANGED,
    RULE_ANOMALY_BECAME_TRANSITION,
    RULE_TRANSITION_BECAME_ANOMALY,
    RULE_RETARGETED,
    RULE_ANOMALY_CHANGED,
    RULE_ADDED,
    RULE_REMOVED,
    RULES_REORDERED,
    DIAGNOSTIC_REMOVED,
    DIAGNOSTIC_RENAMED,
    DIAGNOSTIC_ADDED,
    DIAGNOSTIC_REASON_CHANGED,
    DIAGNOSTIC_REWORDED,
    AFTER_TERMINAL_DIAGNOSTIC_CHANGED,
    REASON_REMOVED,
    REASON_RENAMED,
    REASON_ADDED,
    REASON_REWORDED,
    REASONS_REORDERED,
    DIRECTIVE_CHANGED,
    SCHEMA_CHANGED,
    INVARIANT_REMOVED,
    INVARIANT_ADDED,
    INVARIANT_EXEMPTION_ADDED,
    INVARIANT_EXEMPTION_REMOVED,
    INVARIANT_REWORDED,
    RUN_LOOP_CHANGED,
    ORACLE_CHANGED,
    CONTINUATION_ADDED,
    CONTINUATION_REMOVED,
    CONTINUATION_CHANGED,
    CONTINUATION_REWORDED,
    CONTINUATION_CRASH_ADDED,
    CONTINUATION_CRASH_REMOVED,
    CONTINUATION_BOUNDARY_ADDED,
    CONTINUATION_BOUNDARY_REMOVED,
    CONTINUATION_BOUNDARY_MOVED,
    CONTINUATION_BOUNDARY_REPLAN_RELAXED,
    CONTINUATION_BOUNDARY_REPLAN_TIGHTENED,
    CONTINUATION_BOUNDARY_RECOVERY_CHANGED,
    CONTINUATION_BOUNDARY_REWORDED,
    CONTINUATION_LIFECYCLE_CHANGED,
    SCOPE_REWORDED,
    WIRE_UNKNOWN_KEYS_RELAXED,
    WIRE_UNKNOWN_KEYS_TIGHTENED,
    WIRE_FIELD_ADDED,
    WIRE_FIELD_REMOVED,
    WIRE_FIELD_MADE_REQUIRED,
    WIRE_FIELD_MADE_OPTIONAL,
    WIRE_FIELD_TYPE_CHANGED,
    WIRE_ENUM_NARROWED,
    WIRE_ENUM_WIDENED,
    WIRE_CONTENT_KIND_REMOVED,
    WIRE_CONTENT_KIND_ADDED,
    WIRE_TOOL_CONTENT_KIND_ADDED,
    WIRE_TOOL_CALL_CHANGED,
    WIRE_TERMINAL_CHANGED,
    WIRE_PARTIAL_FLAG_CHANGED,
    WIRE_REWORDED,
    WIRE_REFUSAL_ADDED,
    WIRE_REFUSAL_REMOVED,
    LANGUAGE_ROWS_CHANGED,
    LANGUAGE_UNKNOWN_KEYS_READ,
    LANGUAGE_CLASS_CHANGED,
    LANGUAGE_ITEM_CHANGED,
    LANGUAGE_CHECK_CHANGED,
    LANGUAGE_REPLAY_CHANGED,
    LANGUAGE_NAME_ADDED,
    LANGUAGE_NAME_CHANGED,
    LANGUAGE_WORDS_CHANGED,
    LANGUAGE_SCENARIO_CHANGED,
    LANGUAGE_REWORDED,
    EVIDENCE_UNEXPLAINED_WEAKENING,
    WAIVER_ADDED,
]}
