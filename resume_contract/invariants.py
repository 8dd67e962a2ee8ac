"""The contract's invariants, checked on every small ledger: one home for the checks, whoever runs them.

Ledgers are every word over `explore.ALPHABET` up to a depth, walked depth-first so each ledger's parent
(the ledger one event shorter) is known when it is checked. A `Subject` is what is checked: `verify` checks
the generated code (and its python-statemachine class); `generate` and `check` check a spec before anything
is generated from it, with its table and wire model built in memory. This module imports no generated code,
so a broken generated/ never stops `generate` from replacing it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import msgspec

from .explore import ALPHABET, spell
from .oracle import decide
from .projection import ProjectorTable, ResumePlan, project
from .wire import encode_json

if TYPE_CHECKING:
    from .events import RuntimeEvent

# Ledgers this short are also checked against an expected high-water one past their length.
HIGH_WATER_CHECK_MAX_LENGTH = 3


@dataclass(frozen=True)
class Subject:
    """What the invariants are checked on: a projector table, the wire format that reads its rows, its anomalies.

    `verify` checks the generated code (and also its python-statemachine class, `machine`); `generate` and
    `check` check a spec before anything is generated from it, with the table and wire model built in memory.
    """

    table: ProjectorTable
    decode_row: Callable[[bytes], RuntimeEvent]
    anomalies: frozenset[str]
    machine: Callable[..., ResumePlan] | None = None


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
class Letter:
    """One alphabet letter at one position: its event, its row and its JSON values (for the oracle)."""

    event: RuntimeEvent
    row: msgspec.Raw
    wire: dict


def _letter(symbol_index: int, position: int, subject: Subject) -> Letter:
    wire = ALPHABET[symbol_index].wire(f"e{position}")
    row = encode_json(wire)
    return Letter(subject.decode_row(row), msgspec.Raw(row), wire)


def _check(
    word: tuple[int, ...],
    letters: list[Letter],
    expected_high_water: int | None,
    invariants: Mapping[str, tuple[str, ...]],
    parent_anomalous: bool,
    result: SubtreeResult,
    subject: Subject,
) -> bool:
    """Check one ledger; record violations in `result`; return whether its plan holds a rejecting anomaly."""
    trace: list[tuple[str, str, bool]] = []
    events = [letter.event for letter in letters]
    rows = [letter.row for letter in letters]
    snapshot = tuple(events)
    plan = project(events, subject.table, expected_high_water, trace, rows)
    result.steps_reached.update(trace)
    result.plans.add((plan.disposition, plan.rejection_reasons, tuple(op.status for op in plan.operations)))
    exempt = set(invariants.get("monotonic_evidence", ()))
    anomalous = any(d.code in subject.anomalies and d.code not in exempt for d in plan.diagnostics)

    def fail(invariant: str, message: str) -> None:
        previous = result.violations.get(invariant)
        if previous is None or (len(word), word) < (len(previous.word), previous.word):
            result.violations[invariant] = Violation(invariant, word, expected_high_water, message)

    if "deterministic_and_pure" in invariants:
        again = project(events, subject.table, expected_high_water, rows=rows)
        if again != plan or msgspec.json.encode(again) != msgspec.json.encode(plan):
            fail("deterministic_and_pure", "projecting twice gave different plans")
        if tuple(events) != snapshot or any(a is not b for a, b in zip(events, snapshot)):
            fail("deterministic_and_pure", "projection changed its input")
    if "fail_closed" in invariants and plan.disposition == "safe_replay":
        if plan.rejection_reasons or plan.requires_verification or any(op.status == "indeterminate" for op in plan.operations):
            fail("fail_closed", "safe_replay with a rejection reason, an indeterminate operation or something to verify")
    replay_indexes = replayed_indexes(rows, plan)
    if "replay_well_formed" in invariants:
        problem = replay_problem(events, replay_indexes, subject.table)
        if problem:
            fail("replay_well_formed", problem)
    if "high_water_counts_committed_rows" in invariants and plan.source_runtime_event_high_water != len(events):
        fail("high_water_counts_committed_rows", f"high-water {plan.source_runtime_event_high_water} for {len(events)} rows")
    if "table_matches_machine" in invariants and subject.machine is not None:
        if subject.machine(events, expected_high_water, memoize=True, rows=rows) != plan:
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


def replay_problem(events: Sequence[RuntimeEvent], indexes: list[int], table: ProjectorTable) -> str | None:
    """What is wrong with a plan's provider replay, or None: the replay_well_formed invariant."""
    if -1 in indexes or indexes != sorted(set(indexes)):
        return "replay is not a subsequence of the ledger"
    replay = [events[index] for index in indexes]
    if any(getattr(event, table.partial_attribute) for event in replay):
        return "replay holds a partial event"
    calls: dict[str, str | None] = {}
    answered: set[str] = set()
    for event in replay:
        read = table.tool_contents.get(getattr(event.content, "KIND", None))  # type: ignore[arg-type]
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


def verify_subtree(
    first: int | None, depth: int, invariants: Mapping[str, tuple[str, ...]], subject: Subject
) -> SubtreeResult:
    """Check every ledger starting with letter `first` (None: only the empty ledger), up to `depth` events."""
    result = SubtreeResult()
    cache = [[_letter(symbol, position, subject) for symbol in range(len(ALPHABET))] for position in range(1, depth + 1)]
    if first is None:
        result.explored += 1
        _check((), [], None, invariants, False, result, subject)
        return result
    word: list[int] = [first]
    events: list[Letter] = [cache[0][first]]

    def visit(parent_anomalous: bool) -> None:
        key = tuple(word)
        result.explored += 1
        anomalous = _check(key, events, None, invariants, parent_anomalous, result, subject)
        if len(word) <= HIGH_WATER_CHECK_MAX_LENGTH:
            _check(key, events, len(events) + 1, invariants, False, result, subject)
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


def violations_of(subject: Subject, invariants: Mapping[str, tuple[str, ...]], depth: int) -> tuple[Violation, ...]:
    """Every invariant's shortest violation over every ledger up to `depth` events, in this process."""
    firsts: list[int | None] = [None] + (list(range(len(ALPHABET))) if depth > 0 else [])
    return shortest_first(merge(verify_subtree(first, depth, invariants, subject) for first in firsts))


def merge(parts: Iterable[SubtreeResult]) -> SubtreeResult:
    merged = SubtreeResult()
    for part in parts:
        merged.explored += part.explored
        merged.steps_reached |= part.steps_reached
        merged.plans |= part.plans
        for name, violation in part.violations.items():
            current = merged.violations.get(name)
            if current is None or (len(violation.word), violation.word) < (len(current.word), current.word):
                merged.violations[name] = violation
    return merged


def shortest_first(merged: SubtreeResult) -> tuple[Violation, ...]:
    return tuple(sorted(merged.violations.values(), key=lambda v: (len(v.word), v.word, v.invariant)))
