"""The review's rules for spec/projector.yaml: states, event kinds, rules, diagnostics, reasons, the directive.

A mixin of the review's collector (`review._Collector`), whose `add` records a change, whose `_keyed` reports
removed and added entries (leaving out renamed ones) and returns the keys both sides share, and whose
`renames` (`review_renames`) says which changed references only follow a rename.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import Mark
from ..spec.model import EventKind, Spec, State
from . import rules
from .renames import Renames
from .text import reworded


class ProjectorChanges:
    # Provided by the collector this is mixed into.
    base: Spec
    head: Spec
    renames: Renames
    add: Callable[..., None]
    _keyed: Callable[..., list[str]]

    def projector(self) -> None:
        base, head = self.base.projector, self.head.projector
        if base.initial != head.initial:
            self.add(rules.INITIAL_STATE_CHANGED, f"initial state {base.initial} -> {head.initial}", *self._in_projector("initial"))
        self._states()
        self._event_kinds()
        self._expressions()
        self.rules()
        self._diagnostics()
        if base.after_terminal_anomaly != head.after_terminal_anomaly and not self.renames.diagnostic_follows(base.after_terminal_anomaly, head.after_terminal_anomaly):
            self.add(rules.AFTER_TERMINAL_DIAGNOSTIC_CHANGED, f"after the terminal event: {base.after_terminal_anomaly or 'nothing raised'} -> {head.after_terminal_anomaly or 'nothing raised'}", *self._in_projector("ledger_anomalies"))
        self._reasons()
        self._directive()

    def _in_projector(self, *path: str) -> tuple[Mark, Mark]:
        """Where `path` is written in each side's spec/projector.yaml."""
        return self.base.location("projector", *path), self.head.location("projector", *path)

    def _states(self) -> None:
        old_states = {state.name: state for state in self.base.projector.states}
        new_states = {state.name: state for state in self.head.projector.states}
        for key in self._keyed(rules.STATE_REMOVED, rules.STATE_ADDED, "state", old_states, new_states, lambda k: old_states[k].mark, lambda k: new_states[k].mark):
            self._state(key, old_states[key], new_states[key])

    def _state(self, key: str, old: State, new: State) -> None:
        where = (old.mark, new.mark)
        if old.status != new.status:
            self.add(rules.STATE_STATUS_CHANGED, f"state '{key}': status {old.status} -> {new.status}", *where)
        if old.requires_verification != new.requires_verification:
            self.add(rules.STATE_VERIFICATION_DROPPED if old.requires_verification else rules.STATE_VERIFICATION_ADDED, f"state '{key}': requires_verification {str(old.requires_verification).lower()} -> {str(new.requires_verification).lower()}", *where)
        if old.at_end != new.at_end and not self.renames.diagnostic_follows(old.at_end, new.at_end):
            rule = rules.STATE_AT_END_DROPPED if new.at_end is None else rules.STATE_AT_END_ADDED if old.at_end is None else rules.STATE_AT_END_CHANGED
            self.add(rule, f"state '{key}': at_end {old.at_end or 'none'} -> {new.at_end or 'none'}", *where)
        if old.final != new.final:
            self.add(rules.STATE_MADE_FINAL if new.final else rules.STATE_MADE_NOT_FINAL, f"state '{key}': final {str(old.final).lower()} -> {str(new.final).lower()}", *where)
        if old.description != new.description:
            self.add(rules.STATE_REWORDED, f"state '{key}': {reworded(old.description, new.description)}", *where, values=(old.description, new.description))

    def _event_kinds(self) -> None:
        old_events = {event.name: event for event in self.base.projector.events}
        new_events = {event.name: event for event in self.head.projector.events}
        for key in old_events.keys() | new_events.keys():
            old_event, new_event = old_events.get(key), new_events.get(key)
            if old_event is None or new_event is None or _matches(old_event) != _matches(new_event):
                self.add(rules.EVENT_KIND_CHANGED, f"event kind '{key}' changed", old_event.mark if old_event else None, new_event.mark if new_event else None, values=(old_event, new_event))
            elif old_event.description != new_event.description:
                self.add(rules.EVENT_KIND_REWORDED, f"event kind '{key}': {reworded(old_event.description, new_event.description)}", old_event.mark, new_event.mark, values=(old_event.description, new_event.description))

    def _expressions(self) -> None:
        """The run's facts, the row checks and the semantics they are read under (each decided by the ledgers)."""
        base, head = self.base.projector, self.head.projector
        if base.semantics != head.semantics:
            self.add(rules.SEMANTICS_CHANGED, f"semantics {base.semantics} -> {head.semantics}", *self._in_projector("semantics"))
        old_facts, new_facts = {name: text for name, (text, _) in base.facts}, {name: text for name, (text, _) in head.facts}
        for name in sorted(old_facts.keys() | new_facts.keys()):
            old, new = old_facts.get(name), new_facts.get(name)
            if old != new:
                where = (self.base.location("projector", "facts", name) if old else None, self.head.location("projector", "facts", name) if new else None)
                self.add(rules.FACT_CHANGED, f"fact '{name}': {old or '(none)'} -> {new or '(none)'}", *where, values=(old, new))
        old_checks = {(check.when[0], check.anomaly, check.skip): check for check in base.row_checks}
        new_checks = {(check.when[0], check.anomaly, check.skip): check for check in head.row_checks}
        for key in old_checks.keys() - new_checks.keys():
            self.add(rules.ROW_CHECK_CHANGED, f"row check removed: {key[0]} raises {key[1]}{' (skip)' * key[2]}", old_checks[key].mark, None, values=key if key[2] else key[:2])
        for key in sorted(new_checks.keys() - old_checks.keys()):
            self.add(rules.ROW_CHECK_CHANGED, f"row check added: {key[0]} raises {key[1]}{' (skip)' * key[2]}", None, new_checks[key].mark, values=key if key[2] else key[:2])
        # The ledger scan (rows diagnosed rather than refused) and the diagnostics' order: judged by the ledgers.
        for name in ("duplicate_id", "foreign_row", "operations_first", "listed_last"):
            if (before := getattr(base, name)) != (after := getattr(head, name)):
                place = ("ledger_anomalies", name) if name in ("duplicate_id", "foreign_row") else ("diagnostic_order",)
                marks = (self.base.location("projector", *place), self.head.location("projector", *place))
                self.add(rules.ROW_CHECK_CHANGED, f"{name}: {before} -> {after}", *marks, values=(name, before, after))
        old_hidden, new_hidden = (None if p.hidden is None else (p.hidden.when[0], p.hidden.anomaly) for p in (base, head))
        if old_hidden != new_hidden:
            said = [f"{hidden[0]} (a half-hidden pair raises {hidden[1] or 'nothing'})" if hidden else "(none)" for hidden in (old_hidden, new_hidden)]
            where = (base.hidden.mark if base.hidden else None, head.hidden.mark if head.hidden else None)
            self.add(rules.REPLAY_HIDDEN_CHANGED, f"replay: hidden rows {said[0]} -> {said[1]}", *where, values=(old_hidden, new_hidden))

    def _diagnostics(self) -> None:
        old_diagnostics = {d.code: d for d in self.base.projector.diagnostics}
        new_diagnostics = {d.code: d for d in self.head.projector.diagnostics}
        renamed = self.renames.diagnostics
        shared = self._keyed(rules.DIAGNOSTIC_REMOVED, rules.DIAGNOSTIC_ADDED, "diagnostic", old_diagnostics, new_diagnostics, lambda k: old_diagnostics[k].mark, lambda k: new_diagnostics[k].mark, renamed)
        for old_code, new_code in renamed.items():
            old, new = old_diagnostics[old_code], new_diagnostics[new_code]
            self.add(rules.DIAGNOSTIC_RENAMED, f"diagnostic '{old_code}' renamed to '{new_code}'", old.mark, new.mark, subject=old_code)
        for old_code, new_code in [(key, key) for key in shared] + list(renamed.items()):
            old, new = old_diagnostics[old_code], new_diagnostics[new_code]
            if old.reason != new.reason and not self.renames.reason_follows(old.reason, new.reason):
                self.add(rules.DIAGNOSTIC_REASON_CHANGED, f"diagnostic '{new_code}': reason {old.reason} -> {new.reason}", old.mark, new.mark)
            if old.message != new.message:
                self.add(rules.DIAGNOSTIC_REWORDED, f"diagnostic '{new_code}': message '{old.message}' -> '{new.message}'", old.mark, new.mark)

    def _reasons(self) -> None:
        old_reasons, new_reasons = dict(self.base.projector.reasons), dict(self.head.projector.reasons)
        renamed = self.renames.reasons
        old_mark = lambda k: self.base.location("projector", "reasons", k)  # noqa: E731
        new_mark = lambda k: self.head.location("projector", "reasons", k)  # noqa: E731
        shared = self._keyed(rules.REASON_REMOVED, rules.REASON_ADDED, "reason", old_reasons, new_reasons, old_mark, new_mark, renamed)
        for old_name, new_name in renamed.items():
            self.add(rules.REASON_RENAMED, f"reason '{old_name}' renamed to '{new_name}'", old_mark(old_name), new_mark(new_name), subject=old_name)
        for old_name, new_name in [(key, key) for key in shared] + list(renamed.items()):
            if old_reasons[old_name] != new_reasons[new_name]:
                self.add(rules.REASON_REWORDED, f"reason '{new_name}': {reworded(old_reasons[old_name], new_reasons[new_name])}", old_mark(old_name), new_mark(new_name), values=(old_reasons[old_name], new_reasons[new_name]))
        # Order compares by the head's names, a renamed reason in its old place.
        if [renamed.get(k, k) for k in old_reasons if renamed.get(k, k) in new_reasons] != [k for k in new_reasons if k in old_reasons or k in renamed.values()]:
            self.add(rules.REASONS_REORDERED, "rejection reasons are listed in another order", *self._in_projector("reasons"))

    def _directive(self) -> None:
        base, head = self.base.projector.directive, self.head.projector.directive
        if base == head:
            return
        # It is what the operator is told to do: no change of its text is provably safe (text kept can be
        # contradicted by text added before or after it), so every change is a weakening until a waiver bound to
        # this exact text accepts it.
        self.add(rules.DIRECTIVE_CHANGED, f"the operator is told something else: {reworded(base, head)}", *self._in_projector("directive"), values=(base, head))

    def rules(self) -> None:
        def named(spec_rules):
            return {f"{r.source} on {r.event}" + (f" when {r.when}" if r.when else ""): r for r in spec_rules}

        base, head = named(self.base.projector.rules), named(self.head.projector.rules)
        for key in self._keyed(rules.RULE_REMOVED, rules.RULE_ADDED, "rule", base, head, lambda k: base[k].mark, lambda k: head[k].mark):
            old, new = base[key], head[key]
            if old.anomaly is not None and new.anomaly is None:
                self.add(rules.RULE_ANOMALY_BECAME_TRANSITION, f"{key}: anomaly {', '.join(old.codes)} -> transition to {new.target}", old.mark, new.mark)
            elif old.anomaly is None and new.anomaly is not None:
                self.add(rules.RULE_TRANSITION_BECAME_ANOMALY, f"{key}: transition to {old.target} -> anomaly {', '.join(new.codes)}", old.mark, new.mark)
            elif old.target != new.target:  # (an anomaly may move the state too: where to is compared as a transition's)
                self.add(rules.RULE_RETARGETED, f"{key}: transition to {old.target} -> {new.target}", old.mark, new.mark)
            if old.anomaly is not None and new.anomaly is not None and _codes_changed_by(self.renames, old.codes, new.codes):
                self.add(rules.RULE_ANOMALY_CHANGED, f"{key}: anomaly {', '.join(old.codes)} -> {', '.join(new.codes)}", old.mark, new.mark)
        if [k for k in base if k in head] != [k for k in head if k in base]:
            self.add(rules.RULES_REORDERED, "the same rules are listed in another order", self.base.location("projector", "rules"), self.head.location("projector", "rules"))


def _codes_changed_by(renames: Renames, old: tuple[str, ...], new: tuple[str, ...]) -> bool:
    """Whether a rule's diagnostics changed other than by renames the review follows."""
    return len(old) != len(new) or any(a != b and not renames.diagnostic_follows(a, b) for a, b in zip(old, new))


def _matches(event: EventKind) -> tuple[object, ...]:
    """What decides which committed events are of a kind, and what they do: its content kind and error flag, its tests
    and its checks against its operation's call (as written)."""
    against_call = tuple((check.when[0], check.anomaly, check.at) for check in event.against_call)
    return event.content_kind, event.is_error, event.when and event.when[0], event.key and event.key[0], against_call, event.conflict_to
