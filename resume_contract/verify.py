"""Bounded model checking of the generated projector: every ledger up to a length, every declared invariant.

The checks live in `invariants` (where `generate` and `check` also run them, on the spec in memory); this
module runs them on the generated code, deeper, sharing the first letters out over worker processes. For
each ledger the plan is computed by the generated table (twice), by the generated python-statemachine class
and by the independent oracle. The shortest violating ledger found is reported, and written as JSONL for
`resume-contract plan`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from resume_contract_generated.catalog import INVARIANTS
from resume_contract_generated.projector_table import (
    AFTER_TERMINAL_DIAGNOSTIC,
    STEP,
    TABLE,
)

from .events import decode_event, encode_event
from .explore import ALPHABET, build, count_words
from .interrupts import stoppable_pool
from .invariants import (
    Subject,
    SubtreeResult,
    Violation,
    merge,
    shortest_first,
    verify_subtree,
)
from .reference import build_resume_plan_with_machine

__all__ = ["REACHABLE_STEPS", "VerifyResult", "Violation", "counterexample_rows", "verify"]

# Table entries no ledger can reach: an unknown call id has no call to compare a name with, and a call is
# never compared with anything (the spec's `when` applies to responses only).
_CALL_KINDS = frozenset(kind for (content, _), kind in TABLE.event_kinds.items() if TABLE.tool_contents[content].opens)
REACHABLE_STEPS = frozenset(
    (state, kind, names_match)
    for state, kind, names_match in STEP
    if names_match or (state != TABLE.initial_state and kind not in _CALL_KINDS)
)
ANOMALIES = frozenset(anomaly for _, anomaly in STEP.values() if anomaly is not None) | {AFTER_TERMINAL_DIAGNOSTIC}


def generated_subject() -> Subject:
    """The generated code (looked up when called, so a test can swap the table for a broken one)."""
    return Subject(TABLE, decode_event, ANOMALIES, machine=build_resume_plan_with_machine)


def verify_generated_subtree(first: int | None, depth: int, invariants: Mapping[str, tuple[str, ...]]) -> SubtreeResult:
    """One worker's share: the subtree under `first`, checked on the generated code (picklable arguments only)."""
    return verify_subtree(first, depth, invariants, generated_subject())


@dataclass(frozen=True)
class VerifyResult:
    depth: int
    explored: int
    seconds: float
    steps_reached: int
    steps_total: int
    distinct_plans: int
    invariants: tuple[str, ...]
    violations: tuple[Violation, ...]


def verify(
    depth: int, workers: int = 1, on_progress: Callable[[int, int], None] | None = None
) -> VerifyResult:
    """Explore every ledger up to `depth` events and check the spec's invariants on each."""
    invariants = dict(INVARIANTS)
    started = time.perf_counter()
    firsts: list[int | None] = [None] + (list(range(len(ALPHABET))) if depth > 0 else [])
    if workers > 1 and depth >= 4:
        with stoppable_pool(workers) as pool:
            results = pool.map(verify_generated_subtree, firsts, [depth] * len(firsts), [invariants] * len(firsts))
            subtree_results = _with_progress(results, len(firsts), on_progress)
    else:
        subtree_results = _with_progress((verify_generated_subtree(f, depth, invariants) for f in firsts), len(firsts), on_progress)
    merged = merge(subtree_results)
    assert merged.explored == count_words(depth)
    violations = shortest_first(merged)
    return VerifyResult(
        depth=depth,
        explored=merged.explored,
        seconds=time.perf_counter() - started,
        steps_reached=len(merged.steps_reached & REACHABLE_STEPS),
        steps_total=len(REACHABLE_STEPS),
        distinct_plans=len(merged.plans),
        invariants=tuple(invariants),
        violations=violations,
    )


def _with_progress(results, total: int, on_progress: Callable[[int, int], None] | None) -> list[SubtreeResult]:
    collected = []
    for done, result in enumerate(results, 1):
        collected.append(result)
        if on_progress:
            on_progress(done, total)
    return collected


def counterexample_rows(violation: Violation) -> bytes:
    """The violating ledger as JSONL rows, for `resume-contract plan`."""
    return b"".join(encode_event(event) + b"\n" for event in build(violation.word))
