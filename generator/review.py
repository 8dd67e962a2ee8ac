"""A contract change as a reviewer needs it: every semantic change, named, located and classified by safety.

In the style of `buf breaking`: each rule has a stable name and a class —
- `weakens-safety`: can turn a `blocked` decision into `safe_replay`, or loses evidence;
- `tightens`: the reverse;
- `neutral`: wording, messages, reordering with no effect (never the directive: it is what the operator is
  told to do, so a changed directive weakens safety unless it only adds text).

Rules whose effect is not obvious on their own are classed `by-evidence`: both specs' projectors run over the
canonical ledgers and every ledger up to `depth` events (`resume_contract.explore`), and the change takes the
class of what actually moved. If the ledgers show a weakening that no rule explains, an
`EVIDENCE_UNEXPLAINED_WEAKENING` change says so: nothing weakens silently.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

import msgspec

from resume_contract.explore import spell, wires, words
from resume_contract.projection import ProjectorTable, ResumePlan, project
from resume_contract.wire import RowRefused, WireModel, encode_json

from .errors import Mark
from .spec_model import Spec, WireField
from .validate import projector_table, wire_model

WEAKENS = "weakens-safety"
TIGHTENS = "tightens"
NEUTRAL = "neutral"
BY_EVIDENCE = "by-evidence"
CLASSES = (WEAKENS, TIGHTENS, NEUTRAL)

# Every rule, its class and what it means: the README and the JSON output list them from here.
RULES: dict[str, tuple[str, str]] = {
    "FAILPOINT_REMOVED": (WEAKENS, "a failpoint is no longer covered"),
    "FAILPOINT_ADDED": (TIGHTENS, "a new failpoint is covered"),
    "FAILPOINT_PREFIX_LATER": (WEAKENS, "a failpoint claims a later (longer) committed prefix"),
    "FAILPOINT_PREFIX_EARLIER": (TIGHTENS, "a failpoint claims an earlier (shorter) committed prefix"),
    "FAILPOINT_PREFIX_RENAMED": (BY_EVIDENCE, "a failpoint names another prefix of the same length"),
    "FAILPOINT_BOUNDARY_REWORDED": (NEUTRAL, "a failpoint's boundary text changed"),
    "FAILPOINT_NOTE_CHANGED": (NEUTRAL, "a failpoint's note changed"),
    "OUTCOME_REMOVED": (WEAKENS, "a tool outcome is no longer exercised"),
    "OUTCOME_ADDED": (TIGHTENS, "a new tool outcome is exercised"),
    "OUTCOME_REWORDED": (NEUTRAL, "an outcome's description changed"),
    "LEDGER_EVENTS_CHANGED": (BY_EVIDENCE, "the canonical ledger's events changed"),
    "PREFIX_REMOVED": (BY_EVIDENCE, "a committed prefix was removed"),
    "PREFIX_ADDED": (BY_EVIDENCE, "a committed prefix was added"),
    "PREFIX_MOVED": (BY_EVIDENCE, "a prefix ends at another event"),
    "DECISION_REMOVED": (WEAKENS, "a prefix lost its required decision"),
    "DECISION_ADDED": (TIGHTENS, "a prefix gained a required decision"),
    "DECISION_DISPOSITION_RELAXED": (WEAKENS, "a prefix's decision went from blocked to safe_replay"),
    "DECISION_DISPOSITION_TIGHTENED": (TIGHTENS, "a prefix's decision went from safe_replay to blocked"),
    "DECISION_REASON_DROPPED": (WEAKENS, "a decision no longer requires a rejection reason"),
    "DECISION_REASON_ADDED": (TIGHTENS, "a decision requires a new rejection reason"),
    "DECISION_DIAGNOSTIC_DROPPED": (WEAKENS, "a decision no longer requires a diagnostic"),
    "DECISION_DIAGNOSTIC_ADDED": (TIGHTENS, "a decision requires a new diagnostic"),
    "DECISION_STATUS_RELAXED": (WEAKENS, "an operation the decision called indeterminate is now settled"),
    "DECISION_STATUS_TIGHTENED": (TIGHTENS, "a settled operation is now indeterminate"),
    "DECISION_STATUS_CHANGED": (WEAKENS, "the operations a decision records changed"),
    "DECISION_REPLAY_WIDENED": (WEAKENS, "provider replay keeps events it used to drop"),
    "DECISION_REPLAY_NARROWED": (TIGHTENS, "provider replay drops events it used to keep"),
    "DECISION_REPLAY_REORDERED": (NEUTRAL, "provider replay keeps the same events in another order"),
    "DECISION_TERMINAL_FACT_DROPPED": (WEAKENS, "the terminal fact is no longer required"),
    "DECISION_TERMINAL_FACT_ADDED": (TIGHTENS, "the terminal fact is now required"),
    "DECISION_REWORDED": (NEUTRAL, "a decision's summary or same-as reference changed"),
    "HIGH_WATER_DIAGNOSTIC_CHANGED": (BY_EVIDENCE, "a high-water mismatch raises another diagnostic"),
    "LEDGER_RULE_REWORDED": (NEUTRAL, "a ledger rule's text changed"),
    "CORRUPTION_KIND_REMOVED": (WEAKENS, "a kind of storage corruption is no longer named"),
    "CORRUPTION_KIND_ADDED": (TIGHTENS, "a new kind of storage corruption is named"),
    "CORRUPTION_KIND_REWORDED": (NEUTRAL, "a corruption kind's description changed"),
    "INITIAL_STATE_CHANGED": (BY_EVIDENCE, "the projector starts in another state"),
    "STATE_ADDED": (BY_EVIDENCE, "the projector has a new state"),
    "STATE_REMOVED": (BY_EVIDENCE, "the projector lost a state"),
    "STATE_STATUS_CHANGED": (BY_EVIDENCE, "a state reports another operation status"),
    "STATE_VERIFICATION_DROPPED": (WEAKENS, "a state no longer requires verification"),
    "STATE_VERIFICATION_ADDED": (TIGHTENS, "a state now requires verification"),
    "STATE_AT_END_DROPPED": (WEAKENS, "a state left at the end of a prefix no longer raises a diagnostic"),
    "STATE_AT_END_ADDED": (TIGHTENS, "a state left at the end of a prefix now raises a diagnostic"),
    "STATE_AT_END_CHANGED": (BY_EVIDENCE, "a state left at the end of a prefix raises another diagnostic"),
    "STATE_MADE_FINAL": (WEAKENS, "a state now settles its operation, so its call and response are replayed"),
    "STATE_MADE_NOT_FINAL": (TIGHTENS, "a state no longer settles its operation"),
    "STATE_REWORDED": (NEUTRAL, "a state's description changed"),
    "EVENT_KIND_CHANGED": (BY_EVIDENCE, "an event kind matches other committed events"),
    "EVENT_KIND_REWORDED": (NEUTRAL, "an event kind's description changed"),
    "RULE_ANOMALY_BECAME_TRANSITION": (WEAKENS, "an anomaly is now a normal transition"),
    "RULE_TRANSITION_BECAME_ANOMALY": (TIGHTENS, "a normal transition is now an anomaly"),
    "RULE_RETARGETED": (BY_EVIDENCE, "a transition leads to another state"),
    "RULE_ANOMALY_CHANGED": (BY_EVIDENCE, "an anomaly raises another diagnostic"),
    "RULE_ADDED": (BY_EVIDENCE, "a rule was added"),
    "RULE_REMOVED": (BY_EVIDENCE, "a rule was removed"),
    "RULES_REORDERED": (NEUTRAL, "the same rules are listed in another order"),
    "DIAGNOSTIC_REMOVED": (WEAKENS, "a diagnostic no longer exists"),
    "DIAGNOSTIC_ADDED": (NEUTRAL, "a diagnostic was defined (the rules that raise it are classed on their own)"),
    "DIAGNOSTIC_REASON_CHANGED": (BY_EVIDENCE, "a diagnostic rejects with another reason"),
    "DIAGNOSTIC_REWORDED": (NEUTRAL, "a diagnostic's message changed"),
    "AFTER_TERMINAL_DIAGNOSTIC_CHANGED": (BY_EVIDENCE, "an event after the terminal event raises another diagnostic"),
    "REASON_REMOVED": (BY_EVIDENCE, "a rejection reason was removed"),
    "REASON_ADDED": (BY_EVIDENCE, "a rejection reason was added"),
    "REASON_REWORDED": (NEUTRAL, "a reason's description changed"),
    "REASONS_REORDERED": (NEUTRAL, "rejection reasons are listed in another order"),
    "DIRECTIVE_CHANGED": (WEAKENS, "what the operator is told to do about an indeterminate operation changed"),
    "DIRECTIVE_EXTENDED": (TIGHTENS, "the directive keeps its text and adds to it"),
    "SCHEMA_CHANGED": (WEAKENS, "the JSON Schema a spec file is checked against changed (a relaxed one lets specs through)"),
    "INVARIANT_REMOVED": (WEAKENS, "verify no longer proves an invariant"),
    "INVARIANT_ADDED": (TIGHTENS, "verify proves a new invariant"),
    "INVARIANT_EXEMPTION_ADDED": (WEAKENS, "an invariant exempts another diagnostic"),
    "INVARIANT_EXEMPTION_REMOVED": (TIGHTENS, "an invariant exempts one diagnostic fewer"),
    "INVARIANT_REWORDED": (NEUTRAL, "an invariant's description changed"),
    "SCOPE_REWORDED": (NEUTRAL, "the phase boundary's text changed"),
    "WIRE_UNKNOWN_KEYS_RELAXED": (WEAKENS, "rows with undeclared keys are read instead of refused"),
    "WIRE_UNKNOWN_KEYS_TIGHTENED": (TIGHTENS, "rows with undeclared keys are refused"),
    "WIRE_FIELD_ADDED": (NEUTRAL, "a row may carry a new optional field (rows the reader refused are now read)"),
    "WIRE_FIELD_REMOVED": (TIGHTENS, "a field is no longer part of a row (rows carrying it are refused)"),
    "WIRE_FIELD_MADE_REQUIRED": (TIGHTENS, "a field is now required (rows without it are refused)"),
    "WIRE_FIELD_MADE_OPTIONAL": (NEUTRAL, "a field may now be absent (rows the reader refused are now read)"),
    "WIRE_FIELD_TYPE_CHANGED": (BY_EVIDENCE, "a field holds another type"),
    "WIRE_ENUM_NARROWED": (TIGHTENS, "a field allows fewer values (rows with the others are refused)"),
    "WIRE_ENUM_WIDENED": (NEUTRAL, "a field allows more values (rows the reader refused are now read)"),
    "WIRE_CONTENT_KIND_REMOVED": (TIGHTENS, "a content kind is no longer read (rows carrying it are refused)"),
    "WIRE_CONTENT_KIND_ADDED": (NEUTRAL, "a new content kind is read (a tool kind must also be a projector event)"),
    "WIRE_TOOL_CALL_CHANGED": (BY_EVIDENCE, "which fields of a content kind name a tool call changed"),
    "WIRE_TERMINAL_CHANGED": (BY_EVIDENCE, "what makes an event terminal changed"),
    "WIRE_PARTIAL_FLAG_CHANGED": (BY_EVIDENCE, "what makes an event partial changed"),
    "WIRE_REWORDED": (NEUTRAL, "a description in the wire format changed"),
    "EVIDENCE_UNEXPLAINED_WEAKENING": (WEAKENS, "ledgers decide less safely and no other rule explains it"),
}


@dataclass(frozen=True)
class Change:
    rule: str
    change_class: str
    message: str
    base: Mark | None
    head: Mark | None


@dataclass(frozen=True)
class Decided:
    """The parts of a plan a reviewer compares."""

    disposition: str
    rejection_reasons: tuple[str, ...]
    diagnostics: tuple[str, ...]
    statuses: tuple[str, ...]
    replay: tuple[str, ...]

    def __str__(self) -> str:
        text = self.disposition
        if self.rejection_reasons:
            text += f" [{', '.join(self.rejection_reasons)}]"
        if self.statuses:
            text += f"; operations {', '.join(self.statuses)}"
        if self.diagnostics:
            text += f"; diagnostics {', '.join(self.diagnostics)}"
        return text


@dataclass(frozen=True)
class LedgerEvidence:
    label: str
    rows: tuple[bytes, ...]
    base: Decided
    head: Decided
    effect: str


@dataclass(frozen=True)
class Review:
    changes: tuple[Change, ...]
    evidence: tuple[LedgerEvidence, ...]
    ledgers_explored: int
    depth: int

    @property
    def counts(self) -> dict[str, int]:
        return {name: sum(1 for change in self.changes if change.change_class == name) for name in CLASSES}

    @property
    def verdict(self) -> str:
        counts = self.counts
        return next((name for name in CLASSES if counts[name]), "no change")


def review(base: Spec, head: Spec, depth: int = 4) -> Review:
    """Every semantic change from `base` to `head`, classified; evidence from ledgers up to `depth` events."""
    collector = _Collector(base, head)
    collector.failpoints()
    collector.wire()
    collector.ledger()
    collector.decisions()
    collector.projector()
    collector.invariants()
    collector.scope()
    collector.schemas()
    evidence, explored = _evidence(base, head, depth)
    effects = {item.effect for item in evidence}
    evidence_class = WEAKENS if WEAKENS in effects else TIGHTENS if TIGHTENS in effects else NEUTRAL
    changes = [
        Change(change.rule, evidence_class if change.change_class == BY_EVIDENCE else change.change_class, change.message, change.base, change.head)
        for change in collector.changes
    ]
    if WEAKENS in effects and not any(change.change_class == WEAKENS for change in changes):
        changes.append(Change("EVIDENCE_UNEXPLAINED_WEAKENING", WEAKENS, "some ledgers decide less safely (see the ledgers below)", None, None))
    order = {name: index for index, name in enumerate(CLASSES)}
    changes.sort(key=lambda change: (order[change.change_class], _place(change), change.rule, change.message))
    return Review(tuple(changes), tuple(evidence), explored, depth)


def _place(change: Change) -> tuple[int, Mark | None]:
    mark = change.head or change.base
    return (0, mark) if mark is not None else (1, None)


class _Collector:
    def __init__(self, base: Spec, head: Spec) -> None:
        self.base = base
        self.head = head
        self.changes: list[Change] = []

    def add(self, rule: str, message: str, base: Mark | None, head: Mark | None) -> None:
        self.changes.append(Change(rule, RULES[rule][0], message, base, head))

    def _keyed(self, rule_removed: str, rule_added: str, what: str, base: dict, head: dict, base_mark, head_mark) -> list[str]:
        for key in base:
            if key not in head:
                self.add(rule_removed, f"{what} '{key}' removed", base_mark(key), None)
        for key in head:
            if key not in base:
                self.add(rule_added, f"{what} '{key}' added", None, head_mark(key))
        return [key for key in base if key in head]

    def failpoints(self) -> None:
        base = {fp.id: fp for fp in self.base.failpoints}
        head = {fp.id: fp for fp in self.head.failpoints}
        for key in self._keyed("FAILPOINT_REMOVED", "FAILPOINT_ADDED", "failpoint", base, head, lambda k: base[k].mark, lambda k: head[k].mark):
            old, new = base[key], head[key]
            where = (old.mark, new.mark)
            if old.committed_prefix != new.committed_prefix:
                old_length = self.base.ledger.prefix(old.committed_prefix).length
                new_length = self.head.ledger.prefix(new.committed_prefix).length
                rule = "FAILPOINT_PREFIX_LATER" if new_length > old_length else "FAILPOINT_PREFIX_EARLIER" if new_length < old_length else "FAILPOINT_PREFIX_RENAMED"
                self.add(rule, f"failpoint {key}: committed prefix {old.committed_prefix} -> {new.committed_prefix}", *where)
            if old.boundary != new.boundary:
                self.add("FAILPOINT_BOUNDARY_REWORDED", f"failpoint {key}: boundary '{old.boundary}' -> '{new.boundary}'", *where)
            if old.note != new.note:
                self.add("FAILPOINT_NOTE_CHANGED", f"failpoint {key}: note changed", *where)

    def wire(self) -> None:
        base, head = self.base.wire, self.head.wire
        loc_b = lambda *path: self.base.location("runtime_event", *path)  # noqa: E731
        loc_h = lambda *path: self.head.location("runtime_event", *path)  # noqa: E731
        if base.unknown_keys != head.unknown_keys:
            rule = "WIRE_UNKNOWN_KEYS_RELAXED" if head.unknown_keys == "ignore" else "WIRE_UNKNOWN_KEYS_TIGHTENED"
            self.add(rule, f"unknown keys: {base.unknown_keys} -> {head.unknown_keys}", loc_b("unknown_keys"), loc_h("unknown_keys"))
        self._wire_fields("event", base.fields, head.fields, ("fields",))
        old_kinds = {kind.name: kind for kind in base.content_kinds}
        new_kinds = {kind.name: kind for kind in head.content_kinds}
        for key in self._keyed("WIRE_CONTENT_KIND_REMOVED", "WIRE_CONTENT_KIND_ADDED", "content kind", old_kinds, new_kinds, lambda k: old_kinds[k].mark, lambda k: new_kinds[k].mark):
            old, new = old_kinds[key], new_kinds[key]
            self._wire_fields(f"content kind '{key}'", old.fields, new.fields, ("content", "kinds", key, "fields"))
            if old.tool_call != new.tool_call:
                self.add("WIRE_TOOL_CALL_CHANGED", f"content kind '{key}': tool_call {old.tool_call} -> {new.tool_call}", old.mark, new.mark)
            if old.description != new.description:
                self.add("WIRE_REWORDED", f"content kind '{key}': description changed", old.mark, new.mark)
        if (base.terminal_statuses, base.terminal_flag_field, base.terminal_flag_key) != (head.terminal_statuses, head.terminal_flag_field, head.terminal_flag_key):
            self.add("WIRE_TERMINAL_CHANGED", "what makes an event terminal changed", loc_b("terminal"), loc_h("terminal"))
        if base.partial_flag != head.partial_flag:
            self.add("WIRE_PARTIAL_FLAG_CHANGED", f"partial flag {base.partial_flag} -> {head.partial_flag}", loc_b("partial_flag"), loc_h("partial_flag"))

    def _wire_fields(self, owner: str, base: tuple[WireField, ...], head: tuple[WireField, ...], path: tuple[str, ...]) -> None:
        old = {field.name: field for field in base}
        new = {field.name: field for field in head}
        for key in self._keyed("WIRE_FIELD_REMOVED", "WIRE_FIELD_ADDED", f"{owner}: field", old, new, lambda k: old[k].mark, lambda k: new[k].mark):
            before, after = old[key], new[key]
            where = (before.mark, after.mark)
            if before.required != after.required:
                rule = "WIRE_FIELD_MADE_REQUIRED" if after.required else "WIRE_FIELD_MADE_OPTIONAL"
                self.add(rule, f"{owner}: field '{key}' {'now required' if after.required else 'now optional'}", *where)
            if before.type != after.type:
                self.add("WIRE_FIELD_TYPE_CHANGED", f"{owner}: field '{key}' type {before.type} -> {after.type}", *where)
            if before.enum != after.enum:
                lost = [value for value in before.enum if value not in after.enum] if before.enum else ["(any)"]
                gained = [value for value in after.enum if value not in before.enum] if after.enum else ["(any)"]
                if lost and after.enum:
                    self.add("WIRE_ENUM_NARROWED", f"{owner}: field '{key}' no longer allows {', '.join(lost)}", *where)
                if gained and before.enum:
                    self.add("WIRE_ENUM_WIDENED", f"{owner}: field '{key}' now allows {', '.join(gained)}", *where)
            if before.description != after.description:
                self.add("WIRE_REWORDED", f"{owner}: field '{key}': description changed", *where)

    def ledger(self) -> None:
        base, head = self.base.ledger, self.head.ledger
        old_outcomes, new_outcomes = dict(base.outcomes), dict(head.outcomes)
        loc_b = lambda *path: self.base.location("ledger", *path)  # noqa: E731
        loc_h = lambda *path: self.head.location("ledger", *path)  # noqa: E731
        for key in self._keyed("OUTCOME_REMOVED", "OUTCOME_ADDED", "outcome", old_outcomes, new_outcomes, lambda k: loc_b("outcomes", k), lambda k: loc_h("outcomes", k)):
            if old_outcomes[key] != new_outcomes[key]:
                self.add("OUTCOME_REWORDED", f"outcome '{key}': description changed", loc_b("outcomes", key), loc_h("outcomes", key))
        shared = [outcome for outcome in old_outcomes if outcome in new_outcomes]
        old_events = [(event.name, tuple(event.wire(o) for o in shared)) for event in base.events]
        new_events = [(event.name, tuple(event.wire(o) for o in shared)) for event in head.events]
        if [_canonical(e) for e in old_events] != [_canonical(e) for e in new_events]:
            self.add("LEDGER_EVENTS_CHANGED", "the canonical ledger's events changed", loc_b("events"), loc_h("events"))
        old_prefixes = {prefix.name: prefix for prefix in base.prefixes}
        new_prefixes = {prefix.name: prefix for prefix in head.prefixes}
        for key in self._keyed("PREFIX_REMOVED", "PREFIX_ADDED", "prefix", old_prefixes, new_prefixes, lambda k: old_prefixes[k].mark, lambda k: new_prefixes[k].mark):
            if old_prefixes[key].through != new_prefixes[key].through:
                self.add("PREFIX_MOVED", f"prefix '{key}': through {old_prefixes[key].through or '(no event)'} -> {new_prefixes[key].through or '(no event)'}", old_prefixes[key].mark, new_prefixes[key].mark)

    def decisions(self) -> None:
        base = {d.prefix: d for d in self.base.decisions}
        head = {d.prefix: d for d in self.head.decisions}
        outcomes = [o for o in self.base.ledger.outcome_names if o in self.head.ledger.outcome_names]
        for key in self._keyed("DECISION_REMOVED", "DECISION_ADDED", "decision for prefix", base, head, lambda k: base[k].mark, lambda k: head[k].mark):
            old, new = base[key], head[key]
            where = (self.base.location("decisions", "prefixes", key, "disposition"), self.head.location("decisions", "prefixes", key, "disposition"))
            if old.disposition != new.disposition:
                rule = "DECISION_DISPOSITION_RELAXED" if new.disposition == "safe_replay" else "DECISION_DISPOSITION_TIGHTENED"
                self.add(rule, f"prefix '{key}': {old.disposition} -> {new.disposition}", *where)
            self._set_change(key, "rejection_reasons", "reason", old.rejection_reasons, new.rejection_reasons, "DECISION_REASON_DROPPED", "DECISION_REASON_ADDED")
            self._set_change(key, "diagnostics", "diagnostic", old.diagnostics, new.diagnostics, "DECISION_DIAGNOSTIC_DROPPED", "DECISION_DIAGNOSTIC_ADDED")
            for outcome in outcomes:
                before, after = old.statuses(outcome), new.statuses(outcome)
                if before != after:
                    if len(before) == len(after) and all(b == a or b == "indeterminate" for b, a in zip(before, after)):
                        rule = "DECISION_STATUS_RELAXED"
                    elif len(before) == len(after) and all(b == a or a == "indeterminate" for b, a in zip(before, after)):
                        rule = "DECISION_STATUS_TIGHTENED"
                    else:
                        rule = "DECISION_STATUS_CHANGED"
                    self.add(rule, f"prefix '{key}' ({outcome}): operations [{', '.join(before)}] -> [{', '.join(after)}]", self._loc_b(key, "operation_statuses"), self._loc_h(key, "operation_statuses"))
            if old.replay != new.replay:
                gained = [name for name in new.replay if name not in old.replay]
                lost = [name for name in old.replay if name not in new.replay]
                if gained:
                    self.add("DECISION_REPLAY_WIDENED", f"prefix '{key}': replay now keeps {', '.join(gained)}", self._loc_b(key, "replay"), self._loc_h(key, "replay"))
                if lost:
                    self.add("DECISION_REPLAY_NARROWED", f"prefix '{key}': replay now drops {', '.join(lost)}", self._loc_b(key, "replay"), self._loc_h(key, "replay"))
                if not gained and not lost:
                    self.add("DECISION_REPLAY_REORDERED", f"prefix '{key}': replay order changed", self._loc_b(key, "replay"), self._loc_h(key, "replay"))
            if old.terminal_fact != new.terminal_fact:
                rule = "DECISION_TERMINAL_FACT_DROPPED" if old.terminal_fact else "DECISION_TERMINAL_FACT_ADDED"
                self.add(rule, f"prefix '{key}': terminal fact {'no longer' if old.terminal_fact else 'now'} required", self._loc_b(key, "terminal_fact"), self._loc_h(key, "terminal_fact"))
            if (old.summary, old.same_tool_decision_as) != (new.summary, new.same_tool_decision_as):
                self.add("DECISION_REWORDED", f"prefix '{key}': summary changed", self._loc_b(key, "summary"), self._loc_h(key, "summary"))
        old_rules, new_rules = self.base.ledger_rules, self.head.ledger_rules
        hw = (self.base.location("decisions", "ledger_rules", "high_water_mismatch"), self.head.location("decisions", "ledger_rules", "high_water_mismatch"))
        if old_rules.high_water_diagnostic != new_rules.high_water_diagnostic:
            self.add("HIGH_WATER_DIAGNOSTIC_CHANGED", f"high-water mismatch: {old_rules.high_water_diagnostic} -> {new_rules.high_water_diagnostic}", *hw)
        if (old_rules.high_water_rule, old_rules.corruption_rule) != (new_rules.high_water_rule, new_rules.corruption_rule):
            self.add("LEDGER_RULE_REWORDED", "a ledger rule's text changed", *hw)
        old_kinds, new_kinds = dict(old_rules.corruption_kinds), dict(new_rules.corruption_kinds)
        kind_b = lambda k: self.base.location("decisions", "ledger_rules", "storage_corruption", "kinds", k)  # noqa: E731
        kind_h = lambda k: self.head.location("decisions", "ledger_rules", "storage_corruption", "kinds", k)  # noqa: E731
        for key in self._keyed("CORRUPTION_KIND_REMOVED", "CORRUPTION_KIND_ADDED", "corruption kind", old_kinds, new_kinds, kind_b, kind_h):
            if old_kinds[key] != new_kinds[key]:
                self.add("CORRUPTION_KIND_REWORDED", f"corruption kind '{key}': description changed", kind_b(key), kind_h(key))

    def _loc_b(self, prefix: str, field: str) -> Mark:
        return self.base.location("decisions", "prefixes", prefix, field)

    def _loc_h(self, prefix: str, field: str) -> Mark:
        return self.head.location("decisions", "prefixes", prefix, field)

    def _set_change(self, prefix: str, field: str, what: str, old: Iterable[str], new: Iterable[str], dropped: str, added: str) -> None:
        old, new = list(old), list(new)
        for item in old:
            if item not in new:
                self.add(dropped, f"prefix '{prefix}': {what} {item} no longer required", self._loc_b(prefix, field), self._loc_h(prefix, field))
        for item in new:
            if item not in old:
                self.add(added, f"prefix '{prefix}': {what} {item} now required", self._loc_b(prefix, field), self._loc_h(prefix, field))

    def projector(self) -> None:
        base, head = self.base.projector, self.head.projector
        loc_b = lambda *path: self.base.location("projector", *path)  # noqa: E731
        loc_h = lambda *path: self.head.location("projector", *path)  # noqa: E731
        if base.initial != head.initial:
            self.add("INITIAL_STATE_CHANGED", f"initial state {base.initial} -> {head.initial}", loc_b("initial"), loc_h("initial"))
        old_states = {state.name: state for state in base.states}
        new_states = {state.name: state for state in head.states}
        for key in self._keyed("STATE_REMOVED", "STATE_ADDED", "state", old_states, new_states, lambda k: old_states[k].mark, lambda k: new_states[k].mark):
            old, new = old_states[key], new_states[key]
            where = (old.mark, new.mark)
            if old.status != new.status:
                self.add("STATE_STATUS_CHANGED", f"state '{key}': status {old.status} -> {new.status}", *where)
            if old.requires_verification != new.requires_verification:
                self.add("STATE_VERIFICATION_DROPPED" if old.requires_verification else "STATE_VERIFICATION_ADDED", f"state '{key}': requires_verification {str(old.requires_verification).lower()} -> {str(new.requires_verification).lower()}", *where)
            if old.at_end != new.at_end:
                rule = "STATE_AT_END_DROPPED" if new.at_end is None else "STATE_AT_END_ADDED" if old.at_end is None else "STATE_AT_END_CHANGED"
                self.add(rule, f"state '{key}': at_end {old.at_end or 'none'} -> {new.at_end or 'none'}", *where)
            if old.final != new.final:
                self.add("STATE_MADE_FINAL" if new.final else "STATE_MADE_NOT_FINAL", f"state '{key}': final {str(old.final).lower()} -> {str(new.final).lower()}", *where)
            if old.description != new.description:
                self.add("STATE_REWORDED", f"state '{key}': description changed", *where)
        old_events = {event.name: event for event in base.events}
        new_events = {event.name: event for event in head.events}
        for key in old_events.keys() | new_events.keys():
            old_event, new_event = old_events.get(key), new_events.get(key)
            if old_event is None or new_event is None or (old_event.content_kind, old_event.is_error) != (new_event.content_kind, new_event.is_error):
                self.add("EVENT_KIND_CHANGED", f"event kind '{key}' changed", old_event.mark if old_event else None, new_event.mark if new_event else None)
            elif old_event.description != new_event.description:
                self.add("EVENT_KIND_REWORDED", f"event kind '{key}': description changed", old_event.mark, new_event.mark)
        self.rules()
        old_diagnostics = {d.code: d for d in base.diagnostics}
        new_diagnostics = {d.code: d for d in head.diagnostics}
        for key in self._keyed("DIAGNOSTIC_REMOVED", "DIAGNOSTIC_ADDED", "diagnostic", old_diagnostics, new_diagnostics, lambda k: old_diagnostics[k].mark, lambda k: new_diagnostics[k].mark):
            old, new = old_diagnostics[key], new_diagnostics[key]
            if old.reason != new.reason:
                self.add("DIAGNOSTIC_REASON_CHANGED", f"diagnostic '{key}': reason {old.reason} -> {new.reason}", old.mark, new.mark)
            if old.message != new.message:
                self.add("DIAGNOSTIC_REWORDED", f"diagnostic '{key}': message '{old.message}' -> '{new.message}'", old.mark, new.mark)
        if base.after_terminal_anomaly != head.after_terminal_anomaly:
            self.add("AFTER_TERMINAL_DIAGNOSTIC_CHANGED", f"after the terminal event: {base.after_terminal_anomaly} -> {head.after_terminal_anomaly}", loc_b("ledger_anomalies"), loc_h("ledger_anomalies"))
        old_reasons, new_reasons = dict(base.reasons), dict(head.reasons)
        for key in self._keyed("REASON_REMOVED", "REASON_ADDED", "reason", old_reasons, new_reasons, lambda k: loc_b("reasons", k), lambda k: loc_h("reasons", k)):
            if old_reasons[key] != new_reasons[key]:
                self.add("REASON_REWORDED", f"reason '{key}': description changed", loc_b("reasons", key), loc_h("reasons", key))
        if [k for k in old_reasons if k in new_reasons] != [k for k in new_reasons if k in old_reasons]:
            self.add("REASONS_REORDERED", "rejection reasons are listed in another order", loc_b("reasons"), loc_h("reasons"))
        if base.directive != head.directive:
            where = (loc_b("directive"), loc_h("directive"))
            if base.directive in head.directive:
                self.add("DIRECTIVE_EXTENDED", f"the directive only adds text: '{base.directive}' -> '{head.directive}'", *where)
            else:
                # It is what the operator is told to do: any other change could tell them to do less.
                self.add("DIRECTIVE_CHANGED", f"the operator is told something else: '{base.directive}' -> '{head.directive}'", *where)

    def rules(self) -> None:
        def named(rules):
            return {f"{r.source} on {r.event}" + (f" when {r.when}" if r.when else ""): r for r in rules}

        base, head = named(self.base.projector.rules), named(self.head.projector.rules)
        for key in self._keyed("RULE_REMOVED", "RULE_ADDED", "rule", base, head, lambda k: base[k].mark, lambda k: head[k].mark):
            old, new = base[key], head[key]
            if old.anomaly is not None and new.target is not None:
                self.add("RULE_ANOMALY_BECAME_TRANSITION", f"{key}: anomaly {old.anomaly} -> transition to {new.target}", old.mark, new.mark)
            elif old.target is not None and new.anomaly is not None:
                self.add("RULE_TRANSITION_BECAME_ANOMALY", f"{key}: transition to {old.target} -> anomaly {new.anomaly}", old.mark, new.mark)
            elif old.target != new.target:
                self.add("RULE_RETARGETED", f"{key}: transition to {old.target} -> {new.target}", old.mark, new.mark)
            elif old.anomaly != new.anomaly:
                self.add("RULE_ANOMALY_CHANGED", f"{key}: anomaly {old.anomaly} -> {new.anomaly}", old.mark, new.mark)
        if [k for k in base if k in head] != [k for k in head if k in base]:
            self.add("RULES_REORDERED", "the same rules are listed in another order", self.base.location("projector", "rules"), self.head.location("projector", "rules"))

    def invariants(self) -> None:
        base = {i.name: i for i in self.base.invariants}
        head = {i.name: i for i in self.head.invariants}
        for key in self._keyed("INVARIANT_REMOVED", "INVARIANT_ADDED", "invariant", base, head, lambda k: base[k].mark, lambda k: head[k].mark):
            old, new = base[key], head[key]
            for code in new.exempt_diagnostics:
                if code not in old.exempt_diagnostics:
                    self.add("INVARIANT_EXEMPTION_ADDED", f"invariant '{key}' now exempts {code}", old.mark, new.mark)
            for code in old.exempt_diagnostics:
                if code not in new.exempt_diagnostics:
                    self.add("INVARIANT_EXEMPTION_REMOVED", f"invariant '{key}' no longer exempts {code}", old.mark, new.mark)
            if old.description != new.description:
                self.add("INVARIANT_REWORDED", f"invariant '{key}': description changed", old.mark, new.mark)

    def schemas(self) -> None:
        base, head = dict(self.base.schemas), dict(self.head.schemas)
        for name in base.keys() | head.keys():
            if base.get(name) == head.get(name):
                continue
            mark = Mark(f"spec/schema/{name}.schema.json", 1, 1)
            self.add("SCHEMA_CHANGED", f"spec/schema/{name}.schema.json changed: specs are checked against other rules", mark, mark)

    def scope(self) -> None:
        if self.base.scope != self.head.scope:
            self.add("SCOPE_REWORDED", "the phase boundary changed", self.base.location("scope", "summary"), self.head.location("scope", "summary"))


def _canonical(item: tuple[str, tuple[str, ...]]) -> tuple[str, tuple[object, ...]]:
    return item[0], tuple(json.loads(wire) for wire in item[1])


CORRUPT = "corrupt"


def _decided(plan: ResumePlan) -> Decided:
    return Decided(
        plan.disposition,
        plan.rejection_reasons,
        tuple(d.code for d in plan.diagnostics),
        tuple(op.status for op in plan.operations),
        plan.replay_event_ids,
    )


def _decide(model: WireModel, table: ProjectorTable, rows: tuple[bytes, ...], expected_high_water: int | None) -> Decided:
    """One side's decision on a ledger, read by that side's own decoding model (a refused row: `corrupt`)."""
    try:
        events = [model.decode_row(row) for row in rows]
    except RowRefused as refused:
        return Decided(CORRUPT, (refused.kind,), (), (), ())
    return _decided(project(events, table, expected_high_water, rows=[msgspec.Raw(row) for row in rows]))


def _loosens(before: Decided, after: Decided) -> bool:
    """Whether `after` replays more readily or keeps less evidence than `before`."""
    if CORRUPT in (before.disposition, after.disposition):
        # A row one side refuses and the other reads: reading it is the looser side.
        return before.disposition == CORRUPT and after.disposition != CORRUPT
    return (
        (before.disposition == "blocked" and after.disposition == "safe_replay")
        or bool(set(before.rejection_reasons) - set(after.rejection_reasons))
        or bool(set(before.diagnostics) - set(after.diagnostics))
        or bool(set(after.replay) - set(before.replay))
        or before.statuses.count("indeterminate") > after.statuses.count("indeterminate")
    )


def effect(base: Decided, head: Decided) -> str:
    """How one ledger's decision moved; a mixed move counts as weakening (fail closed)."""
    if _loosens(base, head):
        return WEAKENS
    return TIGHTENS if _loosens(head, base) else NEUTRAL


def _evidence(base: Spec, head: Spec, depth: int) -> tuple[list[LedgerEvidence], int]:
    sides = [
        (wire_model(spec.wire), projector_table(spec.projector, spec.ledger_rules, spec.wire)) for spec in (base, head)
    ]
    ledgers: list[tuple[str, tuple[bytes, ...]]] = []
    canonical: dict[tuple[str, ...], list[str]] = {}
    for spec in (base, head):
        for prefix in spec.ledger.prefixes:
            for outcome in spec.ledger.outcome_names:
                wire_rows = tuple(event.wire(outcome) for event in spec.ledger.events[: prefix.length])
                names = ", ".join(event.name for event in spec.ledger.events[: prefix.length]) or "(empty)"
                labels = canonical.setdefault(wire_rows, [f"canonical {prefix.name}", names])
                if outcome not in labels[2:]:
                    labels.append(outcome)
    for wire_rows, (prefix_label, names, *outcomes) in canonical.items():
        ledgers.append((f"{prefix_label} ({', '.join(outcomes)}): {names}", tuple(row.encode("utf-8") for row in wire_rows)))
    for word in words(depth):
        ledgers.append((spell(word), tuple(encode_json(value) for value in wires(word))))
    # Each canonical ledger once more, reopened where the caller expected one more event than it holds.
    checked = [(label, rows, None) for label, rows in ledgers]
    checked += [
        (f"{label.partition(':')[0]} with expected high-water {len(rows) + 1}", rows, len(rows) + 1)
        for label, rows in ledgers
        if label.startswith("canonical")
    ]
    changed = []
    for label, rows, expected_high_water in checked:
        before, after = (_decide(model, table, rows, expected_high_water) for model, table in sides)
        if before != after:
            changed.append(LedgerEvidence(label, rows, before, after, effect(before, after)))
    # The canonical ledgers first (a reviewer knows them), then the explored ones; each smallest first.
    changed.sort(key=lambda item: (not item.label.startswith("canonical"), len(item.rows)))
    return changed, len(checked)
