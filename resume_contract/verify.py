"""Bounded model checking of the projector: every ledger up to a length, every invariant the spec declares.

Ledgers are every word over `explore.ALPHABET` up to `depth` events, walked depth-first so each ledger's
parent (the ledger one event shorter) is known when it is checked; the first letters are shared out over
worker processes. For each ledger the plan is computed by the generated table (twice), by the generated
python-statemachine class and by the independent oracle, and each declared invariant is checked. The
shortest violating ledger found is reported, and written as JSONL for `resume-contract plan`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import msgspec
from resume_contract_generated.catalog import INVARIANTS
from resume_contract_generated.projector_table import (
    AFTER_TERMINAL_DIAGNOSTIC,
    STEP,
    TABLE,
)

from .events import RuntimeEvent, encode_event
from .explore import ALPHABET, build, count_words, spell
from .interrupts import stoppable_pool
from .oracle import decide
from .plan import build_resume_plan
from .projection import ResumePlan, project
from .reference import build_resume_plan_with_machine

# Table entries no ledger can reach: an unknown call id has no call to compare a name with, and a call is
# never compared with anything (the spec's `when` applies to responses only).
_CALL_KINDS = frozenset(kind for (content, _), kind in TABLE.event_kinds.items() if TABLE.tool_contents[content].opens)
REACHABLE_STEPS = frozenset(
    (state, kind, names_match)
    for state, kind, names_match in STEP
    if names_match or (state != TABLE.initial_state and kind not in _CALL_KINDS)
)
ANOMALIES = frozenset(anomaly for _, anomaly in STEP.values() if anomaly is not None) | {AFTER_TERMINAL_DIAGNOSTIC}
# Ledgers this short are also checked against an expected high-water one past their length.
HIGH_WATER_CHECK_MAX_LENGTH = 3


@dataclass(frozen=True)
class Violation:
    invariant: str
    word: tuple[int, ...]
    expected_high_water: int | None
    message: str

    @property
    def ledger(self) -> str:
        return spell(self.word)


@dataclass
class SubtreeResult:
    explored: int = 0
    steps_reached: set[tuple[str, str, bool]] = field(default_factory=set)
    plans: set[tuple[object, ...]] = field(default_factory=set)
    violations: dict[str, Violation] = field(default_factory=dict)


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


@dataclass(frozen=True)
class Letter:
    """One alphabet letter at one position: its event, its row and its JSON values (for the oracle)."""

    event: RuntimeEvent
    row: msgspec.Raw
    wire: dict


def _letter(symbol_index: int, position: int) -> Letter:
    symbol = ALPHABET[symbol_index]
    event = symbol.build(f"e{position}")
    return Letter(event, msgspec.Raw(encode_event(event)), symbol.wire(f"e{position}"))


def _check(
    word: tuple[int, ...],
    letters: list[Letter],
    expected_high_water: int | None,
    invariants: Mapping[str, tuple[str, ...]],
    parent_anomalous: bool,
    result: SubtreeResult,
) -> bool:
    """Check one ledger; record violations in `result`; return whether its plan holds a rejecting anomaly."""
    trace: list[tuple[str, str, bool]] = []
    events = [letter.event for letter in letters]
    rows = [letter.row for letter in letters]
    snapshot = tuple(events)
    plan = project(events, TABLE, expected_high_water, trace, rows)
    result.steps_reached.update(trace)
    result.plans.add((plan.disposition, plan.rejection_reasons, tuple(op.status for op in plan.operations)))
    exempt = set(invariants.get("monotonic_evidence", ()))
    anomalous = any(d.code in ANOMALIES and d.code not in exempt for d in plan.diagnostics)

    def fail(invariant: str, message: str) -> None:
        previous = result.violations.get(invariant)
        if previous is None or (len(word), word) < (len(previous.word), previous.word):
            result.violations[invariant] = Violation(invariant, word, expected_high_water, message)

    if "deterministic_and_pure" in invariants:
        again = build_resume_plan(events, expected_high_water, rows=rows)
        if again != plan or msgspec.json.encode(again) != msgspec.json.encode(plan):
            fail("deterministic_and_pure", "projecting twice gave different plans")
        if tuple(events) != snapshot or any(a is not b for a, b in zip(events, snapshot)):
            fail("deterministic_and_pure", "projection changed its input")
    if "fail_closed" in invariants and plan.disposition == "safe_replay":
        if plan.rejection_reasons or plan.requires_verification or any(op.status == "indeterminate" for op in plan.operations):
            fail("fail_closed", "safe_replay with a rejection reason, an indeterminate operation or something to verify")
    replay_indexes = replayed_indexes(rows, plan)
    if "replay_well_formed" in invariants:
        problem = replay_problem(events, replay_indexes)
        if problem:
            fail("replay_well_formed", problem)
    if "high_water_counts_committed_rows" in invariants and plan.source_runtime_event_high_water != len(events):
        fail("high_water_counts_committed_rows", f"high-water {plan.source_runtime_event_high_water} for {len(events)} rows")
    if "table_matches_machine" in invariants:
        if build_resume_plan_with_machine(events, expected_high_water, memoize=True, rows=rows) != plan:
            fail("table_matches_machine", "the python-statemachine class gives another plan than the table")
    if "matches_oracle" in invariants:
        oracle = decide([letter.wire for letter in letters], expected_high_water)
        ours = (
            plan.disposition,
            tuple((op.tool_call_id, op.status) for op in plan.operations),
            tuple(events[index].id for index in replay_indexes),
            plan.requires_verification,
        )
        theirs = (oracle.disposition, oracle.statuses, oracle.replay_ids, oracle.requires_verification)
        if ours != theirs or not oracle.required_reasons <= set(plan.rejection_reasons):
            fail("matches_oracle", f"projector {ours[0]} {list(ours[1])} replay {list(ours[2])}; oracle {theirs[0]} {list(theirs[1])} replay {list(theirs[2])} reasons ⊇ {sorted(oracle.required_reasons)}")
    if "monotonic_evidence" in invariants and parent_anomalous and plan.disposition != "blocked":
        fail("monotonic_evidence", "the ledger one event shorter holds a rejecting anomaly, but this one is safe_replay")
    return anomalous


def replayed_indexes(rows: Sequence[msgspec.Raw], plan: ResumePlan) -> list[int]:
    """The ledger position of each replayed row (-1 for a row that is not one of the ledger's own)."""
    position = {id(row): index for index, row in enumerate(rows)}
    return [position.get(id(row), -1) for row in plan.replay_runtime_events]


def replay_problem(events: Sequence[RuntimeEvent], indexes: list[int]) -> str | None:
    """What is wrong with a plan's provider replay, or None: the replay_well_formed invariant."""
    if -1 in indexes or indexes != sorted(set(indexes)):
        return "replay is not a subsequence of the ledger"
    replay = [events[index] for index in indexes]
    if any(getattr(event, TABLE.partial_attribute) for event in replay):
        return "replay holds a partial event"
    calls: dict[str, str | None] = {}
    answered: set[str] = set()
    for event in replay:
        read = TABLE.tool_contents.get(getattr(event.content, "KIND", None))  # type: ignore[arg-type]
        if read is None:
            continue
        call_id = getattr(event.content, read.call_id)
        name = getattr(event.content, read.tool_name) if read.tool_name else None
        if read.opens:
            calls[call_id] = name
        else:
            if call_id not in calls or (name is not None and calls[call_id] != name):
                return f"replayed response {event.id} has no matching call before it"
            answered.add(call_id)
    unanswered = set(calls) - answered
    if unanswered:
        return f"replayed call(s) {sorted(unanswered)} have no matching response after them"
    return None


def verify_subtree(first: int | None, depth: int, invariants: Mapping[str, tuple[str, ...]]) -> SubtreeResult:
    """Check every ledger starting with letter `first` (None: only the empty ledger), up to `depth` events."""
    result = SubtreeResult()
    cache = [[_letter(symbol, position) for symbol in range(len(ALPHABET))] for position in range(1, depth + 1)]
    if first is None:
        result.explored += 1
        _check((), [], None, invariants, False, result)
        return result
    word: list[int] = [first]
    events: list[Letter] = [cache[0][first]]

    def visit(parent_anomalous: bool) -> None:
        key = tuple(word)
        result.explored += 1
        anomalous = _check(key, events, None, invariants, parent_anomalous, result)
        if len(word) <= HIGH_WATER_CHECK_MAX_LENGTH:
            _check(key, events, len(events) + 1, invariants, False, result)
        if len(word) == depth:
            return
        for letter in range(len(ALPHABET)):
            word.append(letter)
            events.append(cache[len(word) - 1][letter])
            visit(anomalous)
            word.pop()
            events.pop()

    visit(False)
    return result


def verify(
    depth: int, workers: int = 1, on_progress: Callable[[int, int], None] | None = None
) -> VerifyResult:
    """Explore every ledger up to `depth` events and check the spec's invariants on each."""
    invariants = dict(INVARIANTS)
    started = time.perf_counter()
    firsts: list[int | None] = [None] + (list(range(len(ALPHABET))) if depth > 0 else [])
    merged = SubtreeResult()
    if workers > 1 and depth >= 4:
        with stoppable_pool(workers) as pool:
            results = pool.map(verify_subtree, firsts, [depth] * len(firsts), [invariants] * len(firsts))
            subtree_results = _with_progress(results, len(firsts), on_progress)
    else:
        subtree_results = _with_progress((verify_subtree(f, depth, invariants) for f in firsts), len(firsts), on_progress)
    for part in subtree_results:
        merged.explored += part.explored
        merged.steps_reached |= part.steps_reached
        merged.plans |= part.plans
        for name, violation in part.violations.items():
            current = merged.violations.get(name)
            if current is None or (len(violation.word), violation.word) < (len(current.word), current.word):
                merged.violations[name] = violation
    assert merged.explored == count_words(depth)
    violations = sorted(merged.violations.values(), key=lambda v: (len(v.word), v.word, v.invariant))
    return VerifyResult(
        depth=depth,
        explored=merged.explored,
        seconds=time.perf_counter() - started,
        steps_reached=len(merged.steps_reached & REACHABLE_STEPS),
        steps_total=len(REACHABLE_STEPS),
        distinct_plans=len(merged.plans),
        invariants=tuple(invariants),
        violations=tuple(violations),
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
