"""The last pass: the decision table run against the projector over the canonical ledger.

Both say what each committed prefix decides; where they disagree, each differing field is reported at the
decision, naming the projector rules that fired.
"""

from __future__ import annotations

from typing import Any

from resume_contract.core.plan import ResumePlan
from resume_contract.core.project import project
from resume_contract.core.summary import PlanSummary, label

from ..errors import SpecError
from .model import Decision, Spec
from .tables import canonical_events, decision_summary, rule_steps, table_of

# The decisions.yaml key that states a summary field, where the names differ.
_DECISION_KEYS = {"replay_event_ids": "replay"}


def check_decisions_against_projector(spec: Spec) -> list[SpecError]:
    """Run every canonical prefix through the projector; report each field that contradicts the decision table."""
    table = table_of(spec)
    rule_by_step = {key: rule for rule in spec.projector.rules for key in rule_steps(rule)}
    errors = []
    for decision in spec.decisions:
        prefix = spec.ledger.prefix(decision.prefix)
        for outcome in spec.ledger.outcome_names:
            trace: list[tuple[str, str, bool]] = []
            events = canonical_events(spec, outcome, prefix.length)
            plan = project(events, table, trace=trace)
            fired = [rule_by_step[step] for step in trace]
            deciding = f"the projector ({', '.join(str(rule.mark) for rule in fired)})" if fired else "the projector (no rule fired)"
            for field, expected, actual in _decision_fields(spec, decision, outcome, plan):
                errors.append(
                    SpecError(
                        decision.key_mark(_DECISION_KEYS.get(field, field)),
                        f"prefix '{decision.prefix}' with outcome '{outcome}': the decision table says {label(field)} "
                        f"{_show(expected)} but {deciding} gives {_show(actual)}",
                    )
                )
    return errors


def _show(value: Any) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(str(item) for item in value) + "]"
    return repr(value) if isinstance(value, str) else str(value).lower()


def _decision_fields(spec: Spec, decision: Decision, outcome: str, plan: ResumePlan) -> list[tuple[str, Any, Any]]:
    return decision_summary(spec, decision, outcome).differences(PlanSummary.of(plan))
