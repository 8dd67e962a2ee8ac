"""The review of the continuation decision (spec/continuation.yaml).

Added (a run may now be continued: weakens-safety), removed (continue-plan refuses every run: breaking), its
summary reworded (neutral), and, per other top-level part that changed (inputs, ledger facts, checks,
diagnostics, reasons, payload, situations), one `CONTINUATION_CHANGED` finding classed by evidence: both sides
decide the explored situations (`continuation_evidence`), and the finding takes the class of what moved
(core.moves), with the smallest situation that shows it as its proof; neutral when nothing moved.
Marks are left out of the comparison, so moving a line is no change.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..errors import Mark
from ..spec.continuation_model import ContinuationSpec
from ..spec.model import Spec
from . import rules
from .continuation_evidence import Moved, continuation_moves, evidence_class

# (rule, message, base mark, head mark, values, class, why)
Finding = tuple[rules.Rule, str, Mark | None, Mark | None, Any, str, str]
_MARKS = ("mark", "expect_mark")
# ContinuationSpec field -> the key of spec/continuation.yaml it is read from.
_KEYS = {
    "proceed": "dispositions",
    "stop": "dispositions",
    "expected_high_water": "phase0",
    "proceeds_on": "phase0",
    "phase0_after": "phase0",
    "payload_json": "continuation",
    "gates": "planner",
    "planner_json": "planner",
    "planner_situations": "planner",
    "base_event_json": "situations",
}


def continuation_changes(base: Spec, head: Spec) -> list[Finding]:
    """How the continuation decision changed from `base` to `head`, each change classed and explained."""
    old, new = base.continuation, head.continuation
    if old is None and new is None:
        return []
    if old is None or new is None:
        rule = rules.CONTINUATION_ADDED if old is None else rules.CONTINUATION_REMOVED
        message = "spec/continuation.yaml added: a continuation decision" if old is None else "spec/continuation.yaml removed: no continuation decision"
        base_mark, head_mark = (None, _mark(head, None)) if old is None else (_mark(base, None), None)
        return [(rule, message, base_mark, head_mark, None, rule.change_class, f"rule: {rule.meaning}")]
    before, after = _content(old), _content(new)
    changed: dict[str, tuple[Any, Any]] = {}
    for name in before:
        if before[name] != after[name]:
            key = _KEYS.get(name, name)
            previous = changed.get(key, ((), ()))
            changed[key] = (previous[0] + (before[name],), previous[1] + (after[name],))
    if not changed:
        return []
    change_class, why = _classified(base, head) if set(changed) - {"summary"} else (rules.NEUTRAL, "")
    findings: list[Finding] = []
    for key, values in changed.items():
        marks = (_mark(base, key), _mark(head, key))
        if key == "summary":
            rule = rules.CONTINUATION_REWORDED
            findings.append((rule, f"continuation: {key} changed", *marks, values, rule.change_class, f"rule: {rule.meaning}"))
        else:
            findings.append((rules.CONTINUATION_CHANGED, f"continuation: {key} changed", *marks, values, change_class, why))
    return findings


def _classified(base: Spec, head: Spec) -> tuple[str, str]:
    """The class of what moved (core.moves), with the smallest situation that shows it and one of each other class."""
    moved = continuation_moves(base, head)
    strongest = evidence_class(moved)
    if strongest is None:  # (a class no witness shows is not given)
        return rules.NEUTRAL, "no explored situation decides otherwise"
    shown = [next(item for item in moved if item.effect == name) for name in rules.CLASSES if any(item.effect == name for item in moved)]
    return strongest, "; also ".join(f"{item.effect}: {_proof(item)}" if index else _proof(item) for index, item in enumerate(shown))


def _proof(item: Moved) -> str:
    events = item.size[0]
    return f"situation '{item.label}' ({events} event{'s' if events != 1 else ''}): {item.base} -> {item.head} ({item.why})"


def _content(spec: ContinuationSpec) -> dict[str, Any]:
    # An expression fact is its text and the Python it compiles to, not the type inferred for it: a field the wire
    # format gains changes the type of every row an expression reads, and no decision.
    facts = tuple(dataclasses.replace(fact, expression=fact.expression[:2]) if fact.expression is not None else fact for fact in spec.ledger_facts)
    spec = dataclasses.replace(spec, ledger_facts=facts)
    # What generate warns of is not the contract: a warning that goes away (its check added) moves nothing itself.
    return {field.name: _without_marks(getattr(spec, field.name)) for field in dataclasses.fields(spec) if field.name != "warnings"}


def _without_marks(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        # A field at its default is left out too: a field the spec language gains later (a situation's `latest`)
        # does not move the fingerprints, and so the waivers, of findings about parts that do not use it.
        return {
            field.name: _without_marks(getattr(value, field.name))
            for field in dataclasses.fields(value)
            if field.name not in _MARKS and not (field.default is not dataclasses.MISSING and getattr(value, field.name) == field.default)
        }
    if isinstance(value, tuple):
        return tuple(_without_marks(item) for item in value)
    return value


def _mark(spec: Spec, key: str | None) -> Mark:
    return spec.location("continuation", key) if key is not None else Mark("spec/continuation.yaml", 1, 1)
