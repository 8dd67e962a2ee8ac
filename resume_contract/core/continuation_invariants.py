"""The Phase 1 invariants: what every continuation decision must satisfy, whatever the situation.

The spec says which are required (`invariants:` in spec/continuation.yaml, as spec/invariants.yaml does for
Phase 0); this module owns what each one means. `resume-contract verify` decides the spec's named situations and
their one-input variations (the review's explored situations) with the generated continuation table and checks
each decision here. A check returns what is wrong, or None.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .continuation import ABSENT, ContinuationPlan, DecisionContext, decide_continuation
from .continuation_table import ContinuationTable
from .project import project
from .table import ProjectorTable

Decide = Callable[[], ContinuationPlan]


def _phase0(events: Sequence[Any], facts: Mapping[str, Any], projector: ProjectorTable, table: ContinuationTable) -> Any:
    context = DecisionContext(events, facts, table)
    expected = next((value for path in table.expected_high_water if (value := context.value(path)) is not ABSENT), None)
    return project(events, projector, expected)


def continues_only_on_a_clean_phase0(plan: ContinuationPlan, events: Sequence[Any], facts: Mapping[str, Any], projector: ProjectorTable, table: ContinuationTable) -> str | None:
    if plan.disposition != table.proceed:
        return None
    phase0 = _phase0(events, facts, projector, table)
    if phase0.disposition != table.proceeds_on or phase0.requires_verification or phase0.rejection_reasons:
        return f"continues on a Phase 0 plan that is {phase0.disposition} (requires verification: {str(phase0.requires_verification).lower()}, reasons {list(phase0.rejection_reasons)})"
    return None


def disposition_matches_reasons(plan: ContinuationPlan, events: Sequence[Any], facts: Mapping[str, Any], projector: ProjectorTable, table: ContinuationTable) -> str | None:
    if plan.disposition not in (table.proceed, table.stop):
        return f"decides {plan.disposition!r}, which is neither {table.proceed!r} nor {table.stop!r}"
    if plan.disposition == table.stop and not plan.rejection_reasons:
        return f"{table.stop}s without a reason"
    if plan.disposition == table.proceed and plan.rejection_reasons:
        return f"{table.proceed}s with reasons {list(plan.rejection_reasons)}"
    if (plan.continuation is not None) != (plan.disposition == table.proceed):
        return f"{plan.disposition} {'with' if plan.continuation is not None else 'without'} a continuation payload"
    return None


def reasons_declared(plan: ContinuationPlan, events: Sequence[Any], facts: Mapping[str, Any], projector: ProjectorTable, table: ContinuationTable) -> str | None:
    reasons = set(table.remedies) | {reason for reason, _ in projector.diagnostics.values()}
    codes = set(table.diagnostics) | set(projector.diagnostics)
    undeclared = [reason for reason in plan.rejection_reasons if reason not in reasons]
    unknown = [d.code for d in plan.diagnostics if d.code not in codes]
    if undeclared or unknown:
        return f"undeclared reasons {undeclared}, diagnostics {unknown}"
    return None


def fresh_identity(plan: ContinuationPlan, events: Sequence[Any], facts: Mapping[str, Any], projector: ProjectorTable, table: ContinuationTable) -> str | None:
    # A payload field read from a fresh id (input.continuationIdentity.F) never equals the one read from the
    # source's (source.F): a continuation that reuses the source's invocation, run or turn id is not fresh.
    if plan.continuation is None:
        return None
    fresh = {path.rpartition(".")[2]: name for name, path in table.continuation.items() if isinstance(path, str) and path.startswith("input.continuationIdentity.")}
    source = {path.partition(".")[2]: name for name, path in table.continuation.items() if isinstance(path, str) and path.startswith("source.")}
    reused = [fresh[field] for field in fresh if field in source and plan.continuation[fresh[field]] == plan.continuation[source[field]]]
    return f"continues with {', '.join(reused)} equal to the source's" if reused else None


CHECKS: Mapping[str, Callable[..., str | None]] = {
    "continues_only_on_a_clean_phase0": continues_only_on_a_clean_phase0,
    "disposition_matches_reasons": disposition_matches_reasons,
    "reasons_declared": reasons_declared,
    "fresh_identity": fresh_identity,
}


def check_decision(
    required: Sequence[str], events: Sequence[Any], facts: Mapping[str, Any], projector: ProjectorTable, table: ContinuationTable
) -> list[tuple[str, str]]:
    """(invariant, what is wrong) for each required invariant the decision of `events` under `facts` breaks.
    `deterministic_and_pure`, if required, decides twice and checks the facts were left as they were."""
    given = copy.deepcopy(dict(facts))
    plan = decide_continuation(events, facts, projector, table)
    broken = []
    for name in required:
        if name == "deterministic_and_pure":
            again = decide_continuation(events, facts, projector, table)
            if again != plan or dict(facts) != given:
                broken.append((name, "deciding twice gave another decision, or changed the facts"))
            continue
        problem = CHECKS[name](plan, events, facts, projector, table)
        if problem is not None:
            broken.append((name, problem))
    return broken


KNOWN = ("deterministic_and_pure", *CHECKS)
