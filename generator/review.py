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
from typing import Any

from .errors import Mark
from .review_evidence import LedgerEvidence, collect_evidence, evidence_why
from .review_rules import BY_EVIDENCE, CLASSES, NEUTRAL, RULES, TIGHTENS, WEAKENS
from .review_text import reworded, scope_changes
from .review_wire import WireChanges
from .spec_model import Decision, Spec, State


@dataclass(frozen=True)
class Change:
    rule: str
    change_class: str
    message: str
    base: Mark | None
    head: Mark | None
    # One line on why it has its class: the rule's meaning, or what the ledgers showed.
    why: str = ""


@dataclass(frozen=True)
class Review:
    changes: tuple[Change, ...]
    evidence: tuple[LedgerEvidence, ...]
    ledgers_explored: int
    depth: int
    # (index of a change, its waiver) and the waivers that matched nothing: see review_waivers.py.
    waived: tuple[tuple[int, Any], ...] = ()
    stale_waivers: tuple[Any, ...] = ()

    @property
    def counts(self) -> dict[str, int]:
        return {name: sum(1 for change in self.changes if change.change_class == name) for name in CLASSES}

    @property
    def unwaived_counts(self) -> dict[str, int]:
        """`counts` without the waived changes: what `--fail-on` goes by."""
        waived = dict(self.waived)
        return {name: sum(1 for i, c in enumerate(self.changes) if c.change_class == name and i not in waived) for name in CLASSES}

    def waiver_of(self, index: int) -> Any:
        return dict(self.waived).get(index)

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
    evidence, explored = collect_evidence(base, head, depth)
    effects = {item.effect for item in evidence}
    evidence_class = WEAKENS if WEAKENS in effects else TIGHTENS if TIGHTENS in effects else NEUTRAL
    by_ledgers = evidence_why(evidence, evidence_class, explored, depth)
    changes = [
        Change(change.rule, change.change_class, change.message, change.base, change.head, f"rule: {RULES[change.rule][1]}")
        if change.change_class != BY_EVIDENCE
        else Change(change.rule, evidence_class, change.message, change.base, change.head, by_ledgers)
        for change in collector.changes
    ]
    if WEAKENS in effects and not any(change.change_class == WEAKENS for change in changes):
        changes.append(Change("EVIDENCE_UNEXPLAINED_WEAKENING", WEAKENS, "some ledgers decide less safely (see the ledgers below)", None, None, by_ledgers))
    order = {name: index for index, name in enumerate(CLASSES)}
    changes.sort(key=lambda change: (order[change.change_class], _place(change), change.rule, change.message))
    return Review(tuple(changes), tuple(evidence), explored, depth)


def _place(change: Change) -> tuple[int, Mark | None]:
    mark = change.head or change.base
    return (0, mark) if mark is not None else (1, None)


class _Collector(WireChanges):
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

    def ledger(self) -> None:
        base, head = self.base.ledger, self.head.ledger
        old_outcomes, new_outcomes = dict(base.outcomes), dict(head.outcomes)
        loc_b = lambda *path: self.base.location("ledger", *path)  # noqa: E731
        loc_h = lambda *path: self.head.location("ledger", *path)  # noqa: E731
        for key in self._keyed("OUTCOME_REMOVED", "OUTCOME_ADDED", "outcome", old_outcomes, new_outcomes, lambda k: loc_b("outcomes", k), lambda k: loc_h("outcomes", k)):
            if old_outcomes[key] != new_outcomes[key]:
                self.add("OUTCOME_REWORDED", f"outcome '{key}': {reworded(old_outcomes[key], new_outcomes[key])}", loc_b("outcomes", key), loc_h("outcomes", key))
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
        for key in self._keyed("DECISION_REMOVED", "DECISION_ADDED", "decision for prefix", base, head, lambda k: base[k].mark, lambda k: head[k].mark):
            self._decision(key, base[key], head[key])
        self._ledger_rules()

    def _decision(self, key: str, old: Decision, new: Decision) -> None:
        if old.disposition != new.disposition:
            rule = "DECISION_DISPOSITION_RELAXED" if new.disposition == "safe_replay" else "DECISION_DISPOSITION_TIGHTENED"
            self.add(rule, f"prefix '{key}': {old.disposition} -> {new.disposition}", self._loc_b(key, "disposition"), self._loc_h(key, "disposition"))
        self._set_change(key, "rejection_reasons", "reason", old.rejection_reasons, new.rejection_reasons, "DECISION_REASON_DROPPED", "DECISION_REASON_ADDED")
        self._set_change(key, "diagnostics", "diagnostic", old.diagnostics, new.diagnostics, "DECISION_DIAGNOSTIC_DROPPED", "DECISION_DIAGNOSTIC_ADDED")
        self._statuses(key, old, new)
        if old.replay != new.replay:
            self._replay(key, old.replay, new.replay)
        if old.terminal_fact != new.terminal_fact:
            rule = "DECISION_TERMINAL_FACT_DROPPED" if old.terminal_fact else "DECISION_TERMINAL_FACT_ADDED"
            self.add(rule, f"prefix '{key}': terminal fact {'no longer' if old.terminal_fact else 'now'} required", self._loc_b(key, "terminal_fact"), self._loc_h(key, "terminal_fact"))
        if (old.summary, old.same_tool_decision_as) != (new.summary, new.same_tool_decision_as):
            change = reworded(old.summary, new.summary) if old.summary != new.summary else f"same decision as {old.same_tool_decision_as} -> {new.same_tool_decision_as}"
            self.add("DECISION_REWORDED", f"prefix '{key}': {change}", self._loc_b(key, "summary"), self._loc_h(key, "summary"))

    def _statuses(self, key: str, old: Decision, new: Decision) -> None:
        # Only outcomes both sides exercise compare; a removed or added outcome is its own change.
        outcomes = [o for o in self.base.ledger.outcome_names if o in self.head.ledger.outcome_names]
        for outcome in outcomes:
            before, after = old.statuses(outcome), new.statuses(outcome)
            if before != after:
                self.add(_status_rule(before, after), f"prefix '{key}' ({outcome}): operations [{', '.join(before)}] -> [{', '.join(after)}]", self._loc_b(key, "operation_statuses"), self._loc_h(key, "operation_statuses"))

    def _replay(self, key: str, old: tuple[str, ...], new: tuple[str, ...]) -> None:
        gained = [name for name in new if name not in old]
        lost = [name for name in old if name not in new]
        where = (self._loc_b(key, "replay"), self._loc_h(key, "replay"))
        if gained:
            self.add("DECISION_REPLAY_WIDENED", f"prefix '{key}': replay now keeps {', '.join(gained)}", *where)
        if lost:
            self.add("DECISION_REPLAY_NARROWED", f"prefix '{key}': replay now drops {', '.join(lost)}", *where)
        if not gained and not lost:
            self.add("DECISION_REPLAY_REORDERED", f"prefix '{key}': replay order changed", *where)

    def _ledger_rules(self) -> None:
        old_rules, new_rules = self.base.ledger_rules, self.head.ledger_rules
        hw = (self.base.location("decisions", "ledger_rules", "high_water_mismatch"), self.head.location("decisions", "ledger_rules", "high_water_mismatch"))
        if old_rules.high_water_diagnostic != new_rules.high_water_diagnostic:
            self.add("HIGH_WATER_DIAGNOSTIC_CHANGED", f"high-water mismatch: {old_rules.high_water_diagnostic} -> {new_rules.high_water_diagnostic}", *hw)
        if (old_rules.high_water_rule, old_rules.corruption_rule) != (new_rules.high_water_rule, new_rules.corruption_rule):
            pairs = [(old_rules.high_water_rule, new_rules.high_water_rule), (old_rules.corruption_rule, new_rules.corruption_rule)]
            self.add("LEDGER_RULE_REWORDED", "a ledger rule's text: " + "; ".join(reworded(a, b) for a, b in pairs if a != b), *hw)
        old_kinds, new_kinds = dict(old_rules.corruption_kinds), dict(new_rules.corruption_kinds)
        kind_b = lambda k: self.base.location("decisions", "ledger_rules", "storage_corruption", "kinds", k)  # noqa: E731
        kind_h = lambda k: self.head.location("decisions", "ledger_rules", "storage_corruption", "kinds", k)  # noqa: E731
        for key in self._keyed("CORRUPTION_KIND_REMOVED", "CORRUPTION_KIND_ADDED", "corruption kind", old_kinds, new_kinds, kind_b, kind_h):
            if old_kinds[key] != new_kinds[key]:
                self.add("CORRUPTION_KIND_REWORDED", f"corruption kind '{key}': {reworded(old_kinds[key], new_kinds[key])}", kind_b(key), kind_h(key))

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
        if base.initial != head.initial:
            self.add("INITIAL_STATE_CHANGED", f"initial state {base.initial} -> {head.initial}", *self._in_projector("initial"))
        self._states()
        self._event_kinds()
        self.rules()
        self._diagnostics()
        if base.after_terminal_anomaly != head.after_terminal_anomaly:
            self.add("AFTER_TERMINAL_DIAGNOSTIC_CHANGED", f"after the terminal event: {base.after_terminal_anomaly} -> {head.after_terminal_anomaly}", *self._in_projector("ledger_anomalies"))
        self._reasons()
        self._directive()

    def _in_projector(self, *path: str) -> tuple[Mark, Mark]:
        """Where `path` is written in each side's spec/projector.yaml."""
        return self.base.location("projector", *path), self.head.location("projector", *path)

    def _states(self) -> None:
        old_states = {state.name: state for state in self.base.projector.states}
        new_states = {state.name: state for state in self.head.projector.states}
        for key in self._keyed("STATE_REMOVED", "STATE_ADDED", "state", old_states, new_states, lambda k: old_states[k].mark, lambda k: new_states[k].mark):
            self._state(key, old_states[key], new_states[key])

    def _state(self, key: str, old: State, new: State) -> None:
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
            self.add("STATE_REWORDED", f"state '{key}': {reworded(old.description, new.description)}", *where)

    def _event_kinds(self) -> None:
        old_events = {event.name: event for event in self.base.projector.events}
        new_events = {event.name: event for event in self.head.projector.events}
        for key in old_events.keys() | new_events.keys():
            old_event, new_event = old_events.get(key), new_events.get(key)
            if old_event is None or new_event is None or (old_event.content_kind, old_event.is_error) != (new_event.content_kind, new_event.is_error):
                self.add("EVENT_KIND_CHANGED", f"event kind '{key}' changed", old_event.mark if old_event else None, new_event.mark if new_event else None)
            elif old_event.description != new_event.description:
                self.add("EVENT_KIND_REWORDED", f"event kind '{key}': {reworded(old_event.description, new_event.description)}", old_event.mark, new_event.mark)

    def _diagnostics(self) -> None:
        old_diagnostics = {d.code: d for d in self.base.projector.diagnostics}
        new_diagnostics = {d.code: d for d in self.head.projector.diagnostics}
        for key in self._keyed("DIAGNOSTIC_REMOVED", "DIAGNOSTIC_ADDED", "diagnostic", old_diagnostics, new_diagnostics, lambda k: old_diagnostics[k].mark, lambda k: new_diagnostics[k].mark):
            old, new = old_diagnostics[key], new_diagnostics[key]
            if old.reason != new.reason:
                self.add("DIAGNOSTIC_REASON_CHANGED", f"diagnostic '{key}': reason {old.reason} -> {new.reason}", old.mark, new.mark)
            if old.message != new.message:
                self.add("DIAGNOSTIC_REWORDED", f"diagnostic '{key}': message '{old.message}' -> '{new.message}'", old.mark, new.mark)

    def _reasons(self) -> None:
        old_reasons, new_reasons = dict(self.base.projector.reasons), dict(self.head.projector.reasons)
        for key in self._keyed("REASON_REMOVED", "REASON_ADDED", "reason", old_reasons, new_reasons, lambda k: self.base.location("projector", "reasons", k), lambda k: self.head.location("projector", "reasons", k)):
            if old_reasons[key] != new_reasons[key]:
                self.add("REASON_REWORDED", f"reason '{key}': {reworded(old_reasons[key], new_reasons[key])}", *self._in_projector("reasons", key))
        if [k for k in old_reasons if k in new_reasons] != [k for k in new_reasons if k in old_reasons]:
            self.add("REASONS_REORDERED", "rejection reasons are listed in another order", *self._in_projector("reasons"))

    def _directive(self) -> None:
        base, head = self.base.projector.directive, self.head.projector.directive
        if base == head:
            return
        where = self._in_projector("directive")
        if base in head:
            self.add("DIRECTIVE_EXTENDED", f"the directive only adds text: {reworded(base, head)}", *where)
        else:
            # It is what the operator is told to do: any other change could tell them to do less.
            self.add("DIRECTIVE_CHANGED", f"the operator is told something else: {reworded(base, head)}", *where)

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
                self.add("INVARIANT_REWORDED", f"invariant '{key}': {reworded(old.description, new.description)}", old.mark, new.mark)

    def schemas(self) -> None:
        base, head = dict(self.base.schemas), dict(self.head.schemas)
        for name in base.keys() | head.keys():
            if base.get(name) == head.get(name):
                continue
            mark = Mark(f"spec/schema/{name}.schema.json", 1, 1)
            self.add("SCHEMA_CHANGED", f"spec/schema/{name}.schema.json changed: specs are checked against other rules", mark, mark)

    def scope(self) -> None:
        if self.base.scope != self.head.scope:
            self.add("SCOPE_REWORDED", f"the phase boundary: {scope_changes(self.base.scope, self.head.scope)}", self.base.location("scope", "summary"), self.head.location("scope", "summary"))


def _canonical(item: tuple[str, tuple[str, ...]]) -> tuple[str, tuple[object, ...]]:
    return item[0], tuple(json.loads(wire) for wire in item[1])


def _status_rule(before: tuple[str, ...], after: tuple[str, ...]) -> str:
    """Relaxed if only indeterminate operations settled, tightened if only settled ones became indeterminate."""
    same_operations = len(before) == len(after)
    if same_operations and all(b == a or b == "indeterminate" for b, a in zip(before, after)):
        return "DECISION_STATUS_RELAXED"
    if same_operations and all(b == a or a == "indeterminate" for b, a in zip(before, after)):
        return "DECISION_STATUS_TIGHTENED"
    return "DECISION_STATUS_CHANGED"
