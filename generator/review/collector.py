"""A contract change as a reviewer needs it: every semantic change, named, located and classified by safety.

In the style of `buf breaking`: each rule has a stable name and a class —
- `weakens-safety`: can turn a `blocked` decision into `safe_replay`, or loses evidence;
- `tightens`: the reverse;
- `neutral`: wording, messages, reordering with no effect (never the directive: it is what the operator is
  told to do, so every change of it weakens safety until a waiver bound to its exact text accepts it).

Rules whose effect is not obvious on their own are classed `by-evidence`: both specs' projectors run over the
canonical ledgers and every ledger up to a depth over both sides' alphabets (`evidence`), and the change takes the
class of what actually moved. If the ledgers show a weakening that no rule explains, an
`EVIDENCE_UNEXPLAINED_WEAKENING` change says so: nothing weakens silently.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from resume_contract.core.explore import Alphabet

from ..errors import Mark
from ..spec.model import Decision, Spec
from . import rules
from .continuation import continuation_changes
from .continuation_crash import continuation_crash_changes
from .evidence import Evidence, LedgerEvidence, collect_evidence, evidence_why, naming_why
from .projector import ProjectorChanges
from .renames import find_renames
from .rules import BREAKING, BREAKING_AT_LEAST, BY_EVIDENCE, CLASSES, NEUTRAL, RULES, WEAKENS
from .text import reworded, scope_changes
from .wire import WireChanges


@dataclass(frozen=True)
class Change:
    rule: str
    change_class: str
    message: str
    base: Mark | None
    head: Mark | None
    # One line on why it has its class: the rule's meaning, or what the ledgers showed.
    why: str = ""
    # The name a removal or rename is about (its ledgers are the ones that gave it).
    subject: str = ""
    # The whole base and head values where the message gives only an excerpt (a reworded text), so that the
    # fingerprint tells two rewordings of one text apart.
    values: Any = None

    @property
    def fingerprint(self) -> str:
        """16 hex digits of sha256 over the rule, the message (which names the place and what changed) and the
        whole values: the same for the same change on every run, another for any other change of the place."""
        material = json.dumps([self.rule, self.message, self.values], default=repr, ensure_ascii=False)
        return hashlib.sha256(material.encode("utf-8")).hexdigest()[:16]

    @property
    def finding(self) -> str:
        """`RULE:fingerprint`: what a waiver names to accept exactly this finding."""
        return f"{self.rule}:{self.fingerprint}"


@dataclass(frozen=True)
class Review:
    changes: tuple[Change, ...]
    evidence: tuple[LedgerEvidence, ...]
    ledgers_explored: int
    depth: int
    alphabet: Alphabet
    # (index of a change, its waiver), the waivers that matched nothing (waivers.py); a language contract's: no canonical ledgers
    waived: tuple[tuple[int, Any], ...] = ()
    stale_waivers: tuple[Any, ...] = ()
    language: bool = False

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
        return next((name for name, count in self.counts.items() if count), "no change")


def review(base: Spec, head: Spec, depth: int | None = None) -> Review:
    """Every semantic change from `base` to `head`, classified; evidence from ledgers up to `depth` events
    (None: as deep as `evidence.LEDGER_BUDGET` allows, up to `evidence.DEFAULT_DEPTH`)."""
    collector = _Collector(base, head)
    collector.failpoints()
    collector.wire()
    collector.ledger()
    collector.decisions()
    collector.projector()
    collector.invariants()
    collector.scope()
    collector.project_files()
    collector.schemas()
    for rule, message, old, new, values, change_class, why in [*continuation_changes(base, head), *continuation_crash_changes(base, head)]:
        collector.changes.append(Change(rule.id, change_class, message, old, new, why, values=values))
    evidence = collect_evidence(base, head, depth)
    effects = {item.effect for item in evidence.moved}
    evidence_class = next((name for name in CLASSES if name in effects), NEUTRAL)
    by_ledgers = evidence_why(evidence, evidence_class)
    changes = [_classed(change, evidence_class, by_ledgers, evidence) for change in collector.changes]
    if WEAKENS in effects and not any(change.change_class == WEAKENS for change in changes):
        weaker = [(item.label, item.base, item.head) for item in evidence.moved if item.effect == WEAKENS]
        changes.append(Change(rules.EVIDENCE_UNEXPLAINED_WEAKENING.id, WEAKENS, "some ledgers decide less safely (see the ledgers below)", None, None, by_ledgers, values=weaker))
    changes.sort(key=report_order)
    return Review(tuple(changes), tuple(evidence.moved), evidence.checked, evidence.depth, evidence.alphabet)


def _classed(change: Change, evidence_class: str, by_ledgers: str, evidence: Evidence) -> Change:
    """The change with its final class and why: its rule's class, or the ledgers' (floored for names); a change
    that came with both (the continuation decision's, classed by its own situations) keeps them."""
    if change.why:
        return change
    if change.change_class == BY_EVIDENCE:
        return dataclasses.replace(change, change_class=evidence_class, why=by_ledgers)
    if change.change_class == BREAKING_AT_LEAST and evidence_class == WEAKENS:
        return dataclasses.replace(change, change_class=WEAKENS, why=by_ledgers)
    if change.change_class == BREAKING_AT_LEAST:
        field = "reasons" if change.rule in (rules.REASON_REMOVED.id, rules.REASON_RENAMED.id) else "diagnostics"
        named = naming_why(evidence, change.subject, field) if change.subject else by_ledgers
        return dataclasses.replace(change, change_class=BREAKING, why=f"rule: {RULES[change.rule].meaning}, so consumers matching the old name break; {named}")
    return dataclasses.replace(change, why=f"rule: {RULES[change.rule].meaning}")


_SEVERITY = {name: index for index, name in enumerate(CLASSES)}


def report_order(change: Change) -> tuple[int, tuple[int, Mark | None], str, str]:
    """The order a review lists its changes in: most severe first, then by place, rule and message."""
    return (_SEVERITY[change.change_class], _place(change), change.rule, change.message)


def _place(change: Change) -> tuple[int, Mark | None]:
    mark = change.head or change.base
    return (0, mark) if mark is not None else (1, None)


class _Collector(ProjectorChanges, WireChanges):
    def __init__(self, base: Spec, head: Spec) -> None:
        self.base = base
        self.head = head
        self.renames = find_renames(base, head)
        self.changes: list[Change] = []

    def add(self, rule: rules.Rule, message: str, base: Mark | None, head: Mark | None, subject: str = "", values: Any = None) -> None:
        self.changes.append(Change(rule.id, rule.change_class, message, base, head, subject=subject, values=values))

    def _keyed(self, rule_removed: rules.Rule, rule_added: rules.Rule | Callable[[str], rules.Rule], what: str, base: dict, head: dict, base_mark, head_mark, renamed: dict | None = None,
               added_detail: Callable[[str], str] | None = None) -> list[str]:
        """Report removed and added keys (a renamed pair is the caller's to report); return the shared keys.
        `rule_added` may be a function of the added key; `added_detail(key)` is added to an addition's message."""
        renamed = renamed or {}
        for key in base:
            if key not in head and key not in renamed:
                self.add(rule_removed, f"{what} '{key}' removed", base_mark(key), None, subject=key)
        for key in head:
            if key not in base and key not in renamed.values():
                rule = rule_added(key) if callable(rule_added) else rule_added
                self.add(rule, f"{what} '{key}' added" + (added_detail(key) if added_detail else ""), None, head_mark(key))
        return [key for key in base if key in head]

    def failpoints(self) -> None:
        for what, base_list, head_list in (("failpoint", self.base.failpoints, self.head.failpoints),  # and the SQLite store's
                                           ("SQLite failpoint", self.base.sqlite_failpoints, self.head.sqlite_failpoints)):
            self._failpoints(what, {fp.id: fp for fp in base_list}, {fp.id: fp for fp in head_list})

    def _failpoints(self, what: str, base: dict[str, Any], head: dict[str, Any]) -> None:
        def decided(key: str) -> str:  # what a reviewer needs of a new failpoint: the prefix it leaves, and its decision
            prefix = head[key].committed_prefix
            decision = next((d for d in self.head.decisions if d.prefix == prefix), None)
            if decision is None:
                return f": committed prefix {prefix}, no decision"
            reasons = f" [{', '.join(decision.rejection_reasons)}]" if decision.rejection_reasons else ""
            return f": committed prefix {prefix}, decided {decision.disposition}{reasons}"
        for key in self._keyed(rules.FAILPOINT_REMOVED, rules.FAILPOINT_ADDED, what, base, head, lambda k: base[k].mark, lambda k: head[k].mark,
                               added_detail=decided):
            old, new = base[key], head[key]
            where = (old.mark, new.mark)
            if old.committed_prefix != new.committed_prefix:
                old_length = self.base.ledger.prefix(old.committed_prefix).length
                new_length = self.head.ledger.prefix(new.committed_prefix).length
                rule = rules.FAILPOINT_PREFIX_LATER if new_length > old_length else rules.FAILPOINT_PREFIX_EARLIER if new_length < old_length else rules.FAILPOINT_PREFIX_RENAMED
                self.add(rule, f"{what} {key}: committed prefix {old.committed_prefix} -> {new.committed_prefix}", *where)
            if old.boundary != new.boundary:
                self.add(rules.FAILPOINT_BOUNDARY_REWORDED, f"{what} {key}: boundary '{old.boundary}' -> '{new.boundary}'", *where)
            if old.note != new.note:
                self.add(rules.FAILPOINT_NOTE_CHANGED, f"{what} {key}: note changed", *where, values=(old.note, new.note))

    def ledger(self) -> None:
        base, head = self.base.ledger, self.head.ledger
        old_outcomes, new_outcomes = dict(base.outcomes), dict(head.outcomes)
        loc_b = lambda *path: self.base.location("ledger", *path)  # noqa: E731
        loc_h = lambda *path: self.head.location("ledger", *path)  # noqa: E731
        for key in self._keyed(rules.OUTCOME_REMOVED, rules.OUTCOME_ADDED, "outcome", old_outcomes, new_outcomes, lambda k: loc_b("outcomes", k), lambda k: loc_h("outcomes", k)):
            if old_outcomes[key] != new_outcomes[key]:
                self.add(rules.OUTCOME_REWORDED, f"outcome '{key}': {reworded(old_outcomes[key], new_outcomes[key])}", loc_b("outcomes", key), loc_h("outcomes", key), values=(old_outcomes[key], new_outcomes[key]))
        shared = [outcome for outcome in old_outcomes if outcome in new_outcomes]
        old_events = [(event.name, tuple(event.wire(o) for o in shared)) for event in base.events]
        new_events = [(event.name, tuple(event.wire(o) for o in shared)) for event in head.events]
        if [_canonical(e) for e in old_events] != [_canonical(e) for e in new_events]:
            self.add(rules.LEDGER_EVENTS_CHANGED, "the canonical ledger's events changed", loc_b("events"), loc_h("events"), values=(old_events, new_events))
        old_prefixes = {prefix.name: prefix for prefix in base.prefixes}
        new_prefixes = {prefix.name: prefix for prefix in head.prefixes}
        for key in self._keyed(rules.PREFIX_REMOVED, rules.PREFIX_ADDED, "prefix", old_prefixes, new_prefixes, lambda k: old_prefixes[k].mark, lambda k: new_prefixes[k].mark):
            if old_prefixes[key].through != new_prefixes[key].through:
                self.add(rules.PREFIX_MOVED, f"prefix '{key}': through {old_prefixes[key].through or '(no event)'} -> {new_prefixes[key].through or '(no event)'}", old_prefixes[key].mark, new_prefixes[key].mark)

    def decisions(self) -> None:
        base = {d.prefix: d for d in self.base.decisions}
        head = {d.prefix: d for d in self.head.decisions}
        for key in self._keyed(rules.DECISION_REMOVED, rules.DECISION_ADDED, "decision for prefix", base, head, lambda k: base[k].mark, lambda k: head[k].mark):
            self._decision(key, base[key], head[key])
        self._ledger_rules()

    def _decision(self, key: str, old: Decision, new: Decision) -> None:
        if old.disposition != new.disposition:
            rule = rules.DECISION_DISPOSITION_RELAXED if new.disposition == "safe_replay" else rules.DECISION_DISPOSITION_TIGHTENED
            self.add(rule, f"prefix '{key}': {old.disposition} -> {new.disposition}", self._loc_b(key, "disposition"), self._loc_h(key, "disposition"))
        reason_rules = (rules.DECISION_REASON_REPLACED, rules.DECISION_REASON_DROPPED, rules.DECISION_REASON_ADDED)
        diagnostic_rules = (rules.DECISION_DIAGNOSTIC_REPLACED, rules.DECISION_DIAGNOSTIC_DROPPED, rules.DECISION_DIAGNOSTIC_ADDED)
        self._set_change(key, "rejection_reasons", "reason", old.rejection_reasons, new.rejection_reasons, reason_rules)
        self._set_change(key, "diagnostics", "diagnostic", old.diagnostics, new.diagnostics, diagnostic_rules)
        self._statuses(key, old, new)
        if old.replay != new.replay:
            self._replay(key, old.replay, new.replay)
        if old.terminal_fact != new.terminal_fact:
            rule = rules.DECISION_TERMINAL_FACT_DROPPED if old.terminal_fact else rules.DECISION_TERMINAL_FACT_ADDED
            self.add(rule, f"prefix '{key}': terminal fact {'no longer' if old.terminal_fact else 'now'} required", self._loc_b(key, "terminal_fact"), self._loc_h(key, "terminal_fact"))
        if (old.summary, old.same_tool_decision_as) != (new.summary, new.same_tool_decision_as):
            change = reworded(old.summary, new.summary) if old.summary != new.summary else f"same decision as {old.same_tool_decision_as} -> {new.same_tool_decision_as}"
            self.add(rules.DECISION_REWORDED, f"prefix '{key}': {change}", self._loc_b(key, "summary"), self._loc_h(key, "summary"),
                     values=((old.summary, old.same_tool_decision_as), (new.summary, new.same_tool_decision_as)))

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
            self.add(rules.DECISION_REPLAY_WIDENED, f"prefix '{key}': replay now keeps {', '.join(gained)}", *where)
        if lost:
            self.add(rules.DECISION_REPLAY_NARROWED, f"prefix '{key}': replay now drops {', '.join(lost)}", *where)
        if not gained and not lost:
            self.add(rules.DECISION_REPLAY_REORDERED, f"prefix '{key}': replay order changed", *where)

    def _ledger_rules(self) -> None:
        old_rules, new_rules = self.base.ledger_rules, self.head.ledger_rules
        hw = (self.base.location("decisions", "ledger_rules", "high_water_mismatch"), self.head.location("decisions", "ledger_rules", "high_water_mismatch"))
        if old_rules.high_water_diagnostic != new_rules.high_water_diagnostic and not self.renames.diagnostic_follows(old_rules.high_water_diagnostic, new_rules.high_water_diagnostic):
            self.add(rules.HIGH_WATER_DIAGNOSTIC_CHANGED, f"high-water mismatch: {old_rules.high_water_diagnostic} -> {new_rules.high_water_diagnostic}", *hw)
        if (old_rules.high_water_rule, old_rules.corruption_rule) != (new_rules.high_water_rule, new_rules.corruption_rule):
            pairs = [(old_rules.high_water_rule, new_rules.high_water_rule), (old_rules.corruption_rule, new_rules.corruption_rule)]
            self.add(rules.LEDGER_RULE_REWORDED, "a ledger rule's text: " + "; ".join(reworded(a, b) for a, b in pairs if a != b), *hw, values=tuple(zip(*pairs)))
        old_kinds, new_kinds = dict(old_rules.corruption_kinds), dict(new_rules.corruption_kinds)
        kind_b = lambda k: self.base.location("decisions", "ledger_rules", "storage_corruption", "kinds", k)  # noqa: E731
        kind_h = lambda k: self.head.location("decisions", "ledger_rules", "storage_corruption", "kinds", k)  # noqa: E731
        for key in self._keyed(rules.CORRUPTION_KIND_REMOVED, rules.CORRUPTION_KIND_ADDED, "corruption kind", old_kinds, new_kinds, kind_b, kind_h):
            if old_kinds[key] != new_kinds[key]:
                self.add(rules.CORRUPTION_KIND_REWORDED, f"corruption kind '{key}': {reworded(old_kinds[key], new_kinds[key])}", kind_b(key), kind_h(key), values=(old_kinds[key], new_kinds[key]))

    def _loc_b(self, prefix: str, field: str) -> Mark:
        return self.base.location("decisions", "prefixes", prefix, field)

    def _loc_h(self, prefix: str, field: str) -> Mark:
        return self.head.location("decisions", "prefixes", prefix, field)

    def _set_change(
        self, prefix: str, field: str, what: str, old: Iterable[str], new: Iterable[str], rule: tuple[rules.Rule, rules.Rule, rules.Rule]
    ) -> None:
        """Names a decision no longer / now requires; one that only follows a rename is the rename's finding,
        and one dropped while another is added in its place is a replacement (consumers break, nothing is lost).
        `rule`: the rules of a replaced, a dropped and an added name."""
        replaced, dropped_rule, added_rule = rule
        old, new = list(old), list(new)
        renamed = self.renames.reasons if field == "rejection_reasons" else self.renames.diagnostics
        follows = {item: renamed[item] for item in old if item in renamed and item not in new and renamed[item] in new}
        dropped = [item for item in old if item not in new and item not in follows]
        added = [item for item in new if item not in old and item not in follows.values()]
        where = (self._loc_b(prefix, field), self._loc_h(prefix, field))
        for before, after in zip(dropped, added):
            self.add(replaced, f"prefix '{prefix}': {what} {before} -> {after}", *where)
        for item in dropped[len(added):]:
            self.add(dropped_rule, f"prefix '{prefix}': {what} {item} no longer required", *where)
        for item in added[len(dropped):]:
            self.add(added_rule, f"prefix '{prefix}': {what} {item} now required", *where)

    def invariants(self) -> None:
        base = {i.name: i for i in self.base.invariants}
        head = {i.name: i for i in self.head.invariants}
        for key in self._keyed(rules.INVARIANT_REMOVED, rules.INVARIANT_ADDED, "invariant", base, head, lambda k: base[k].mark, lambda k: head[k].mark):
            old, new = base[key], head[key]
            for code in new.exempt_diagnostics:
                if code not in old.exempt_diagnostics and not any(self._exemption_follows(before, code) for before in old.exempt_diagnostics):
                    self.add(rules.INVARIANT_EXEMPTION_ADDED, f"invariant '{key}' now exempts {code}", old.mark, new.mark)
            for code in old.exempt_diagnostics:
                if code not in new.exempt_diagnostics and not any(self._exemption_follows(code, after) for after in new.exempt_diagnostics):
                    self.add(rules.INVARIANT_EXEMPTION_REMOVED, f"invariant '{key}' no longer exempts {code}", old.mark, new.mark)
            if old.description != new.description:
                self.add(rules.INVARIANT_REWORDED, f"invariant '{key}': {reworded(old.description, new.description)}", old.mark, new.mark, values=(old.description, new.description))

    def _exemption_follows(self, old: str, new: str) -> bool:
        # An exemption follows a rename only when the renamed diagnostic covers the same events as before.
        return self.renames.diagnostic_follows(old, new) and old in self.renames.same_places

    def schemas(self) -> None:
        base, head = dict(self.base.schemas), dict(self.head.schemas)
        for name in base.keys() | head.keys():
            if base.get(name) == head.get(name):
                continue
            mark = Mark(f"spec/schema/{name}.schema.json", 1, 1)
            self.add(rules.SCHEMA_CHANGED, f"spec/schema/{name}.schema.json changed: specs are checked against other rules", mark, mark, values=(base.get(name), head.get(name)))

    def project_files(self) -> None:
        """The run loop and the oracle the spec names (the files themselves are reviewed as the code they are)."""
        if self.base.run_loop != self.head.run_loop:
            where = (self.base.location("failpoints", "run_loop"), self.head.location("failpoints", "run_loop"))
            self.add(rules.RUN_LOOP_CHANGED, f"run loop {self.base.run_loop or '(none)'} -> {self.head.run_loop or '(none)'}", *where)
        for key in ("oracle", "packaged_oracle"):  # (the packaged oracle's edition: the text of the contract it decides by)
            if (old := getattr(self.base, key)) != (new := getattr(self.head, key)):
                self.add(rules.ORACLE_CHANGED, f"{key} {old or '(the packaged one)'} -> {new or '(the packaged one)'}", self.base.location("invariants", key), self.head.location("invariants", key))

    def scope(self) -> None:
        if self.base.scope != self.head.scope:
            self.add(rules.SCOPE_REWORDED, f"the phase boundary: {scope_changes(self.base.scope, self.head.scope)}", self.base.location("scope", "summary"), self.head.location("scope", "summary"), values=(self.base.scope, self.head.scope))


def _canonical(item: tuple[str, tuple[str, ...]]) -> tuple[str, tuple[object, ...]]:
    return item[0], tuple(json.loads(wire) for wire in item[1])


def _status_rule(before: tuple[str, ...], after: tuple[str, ...]) -> rules.Rule:
    """Relaxed if only indeterminate operations settled, tightened if only settled ones became indeterminate."""
    same_operations = len(before) == len(after)
    if same_operations and all(b == a or b == "indeterminate" for b, a in zip(before, after)):
        return rules.DECISION_STATUS_RELAXED
    if same_operations and all(b == a or a == "indeterminate" for b, a in zip(before, after)):
        return rules.DECISION_STATUS_TIGHTENED
    return rules.DECISION_STATUS_CHANGED
