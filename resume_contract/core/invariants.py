"""The contract's invariants, checked on every small ledger: one home for the checks, whoever runs them.

Ledgers are every word up to a depth over the subject's alphabet (`explore`: derived from its table and
decoding model, with the oracle's own terminal statuses and flag, letters both read alike explored once), walked depth-first so each ledger's parent
(the ledger one event shorter) is known when it is checked. A `Subject` is what is checked: `verify` checks
the generated code (and its python-statemachine class); `generate` and `check` check a spec before anything
is generated from it, with its table and wire model built in memory. This module imports no generated code,
so a broken generated/ never stops `generate` from replacing it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NamedTuple

import msgspec

from .explore import Alphabet, Letter, letters_of, projector_view
from .oracle import END_FLAG, TERMINAL, Reading, decide, reading
from .plan import ResumePlan
from .project import project
from .table import ProjectorTable
from .wire import WireModel, encode_json

RuntimeEvent = Any  # an event of whichever decoding model the subject reads rows with

# Ledgers this short are also checked against an expected high-water one past their length.
HIGH_WATER_CHECK_MAX_LENGTH = 3


@dataclass(frozen=True)
class Subject:
    """What the invariants are checked on: a projector table, the wire format that reads its rows, its anomalies.

    `verify` checks the generated code (and also its python-statemachine class, `machine`); `generate` and
    `check` check a spec before anything is generated from it, with the table and wire model built in memory.
    """

    table: ProjectorTable
    model: WireModel
    anomalies: frozenset[str]
    machine: Callable[..., ResumePlan] | None = None
    # The independent oracle `matches_oracle` compares with: the packaged Phase 0 one (oracle.py), or the one a
    # project keeps beside its spec (`oracle:` in spec/invariants.yaml), with the same `decide`.
    oracle: Callable[..., Any] = decide
    oracle_file: str | None = None  # where `oracle` is written, relative to the project (None: the packaged one)

    @cached_property
    def alphabet(self) -> Alphabet:
        return checked_alphabet(self.table, self.model)

    @cached_property
    def unjudged(self) -> tuple[str, ...]:
        """The letters the oracle cannot judge: tool events of a content kind the contract's text does not name."""
        return tuple(letter.name for letter in self.alphabet.representatives if _oracle_blind(self, letter))


def packaged_oracle(edition: str) -> Callable[..., Any]:
    """The packaged oracle's `decide` for an edition of maka's contract (spec/invariants.yaml `packaged_oracle`)."""
    if edition == "recovery-facts":
        from .oracle_recovery import decide_recovery

        return decide_recovery
    return decide


def _oracle_blind(subject: Subject, letter: Letter) -> bool:
    # The walk's reading of a tool event has five parts, six for a result it keeps (walk_reads.reading); the oracle's
    # names no tool.
    view = projector_view(subject.table, subject.model)(letter)
    return isinstance(view, tuple) and len(view) in (5, 6) and reading(letter.wire("e1")).tool is None


class SelfAdvised(str):
    """A violation message that already says how to fix it: the generic advice (fix a rule, or change the
    invariant on purpose) would mislead, as when a reason was renamed away from the oracle's names."""


@dataclass(frozen=True)
class Violation:
    invariant: str
    word: tuple[int, ...]
    expected_high_water: int | None
    message: str
    ledger: str  # the word, spelt
    rows: tuple[bytes, ...]  # the word's rows, as JSON


@dataclass
class SubtreeResult:
    explored: int = 0
    steps_reached: set[tuple[str, str, bool]] = field(default_factory=set)
    plans: set[tuple[object, ...]] = field(default_factory=set)
    violations: dict[str, Violation] = field(default_factory=dict)


def checked_alphabet(table: ProjectorTable, model: WireModel) -> Alphabet:
    """What the invariants explore: every letter of the contract, and an event with each status and flag the
    oracle calls terminal (so a spec that stops calling one terminal meets the oracle's meaning); letters that
    neither the projector nor the oracle tells apart are one class."""
    letters = letters_of(table, model, statuses=TERMINAL, flags=(END_FLAG,))
    return Alphabet.reduced(letters, [projector_view(table, model), lambda letter: reading(letter.wire("e1"))])


@dataclass(frozen=True)
class Placed:
    """One alphabet letter at one position: its event, its row and its JSON values (for the oracle)."""

    event: RuntimeEvent
    row: msgspec.Raw
    wire: dict
    reading: Reading
    unjudged: bool  # a tool event the oracle does not know (`Subject.unjudged`)


def _placed(symbol: int, position: int, subject: Subject) -> Placed:
    letter: Letter = subject.alphabet.letter(symbol)
    wire = letter.wire(f"e{position}")
    row = encode_json(wire)
    return Placed(subject.model.decode_row(row), msgspec.Raw(row), wire, reading(wire), letter.name in subject.unjudged)


class _Case(NamedTuple):
    """One ledger checked: its letters, events and rows, and the plan projected from them."""

    letters: list[Placed]
    events: list[RuntimeEvent]
    rows: list[msgspec.Raw]
    snapshot: tuple[RuntimeEvent, ...]  # the events as they were before projecting
    expected_high_water: int | None
    plan: ResumePlan
    replay_indexes: list[int]
    parent_anomalous: bool
    subject: Subject


def _check(
    word: tuple[int, ...],
    letters: list[Placed],
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
    case = _Case(letters, events, rows, snapshot, expected_high_water, plan, replayed_indexes(rows, plan), parent_anomalous, subject)
    for invariant, violation in _INVARIANT_CHECKS:
        if invariant in invariants:
            message = violation(case)
            if message is not None:
                previous = result.violations.get(invariant)
                if previous is None or (len(word), word) < (len(previous.word), previous.word):
                    written = tuple(bytes(row) for row in case.rows)
                    result.violations[invariant] = Violation(invariant, word, expected_high_water, message, subject.alphabet.spell(word), written)
    return anomalous


# Each check below returns how one case violates its invariant, or None.


def _deterministic_and_pure(case: _Case) -> str | None:
    again = project(case.events, case.subject.table, case.expected_high_water, rows=case.rows)
    if again != case.plan or msgspec.json.encode(again) != msgspec.json.encode(case.plan):
        return "projecting twice gave different plans"
    if tuple(case.events) != case.snapshot or any(a is not b for a, b in zip(case.events, case.snapshot)):
        return "projection changed its input"
    return None


def _fail_closed(case: _Case) -> str | None:
    plan = case.plan
    if plan.disposition == "safe_replay" and (
        plan.rejection_reasons or plan.requires_verification or any(op.status == "indeterminate" for op in plan.operations)
    ):
        return "safe_replay with a rejection reason, an indeterminate operation or something to verify"
    return None


def _replay_well_formed(case: _Case) -> str | None:
    return replay_problem(case.events, case.replay_indexes, case.subject.table) or None


def _high_water_counts_committed_rows(case: _Case) -> str | None:
    high_water = case.plan.source_runtime_event_high_water
    if high_water != len(case.events):
        return f"high-water {high_water} for {len(case.events)} rows"
    return None


def _table_matches_machine(case: _Case) -> str | None:
    machine = case.subject.machine
    if machine is not None and machine(case.events, case.expected_high_water, memoize=True, rows=case.rows) != case.plan:
        return "the python-statemachine class gives another plan than the table"
    return None


def _matches_oracle(case: _Case) -> str | None:
    if any(letter.unjudged for letter in case.letters):
        # The contract's text names the tool kinds the oracle knows; a kind a spec adds is judged by the other
        # invariants, and by `diff`, which compares it with the spec before it (WIRE_TOOL_CONTENT_KIND_ADDED).
        return None
    plan = case.plan
    wires = [letter.wire for letter in case.letters]
    if case.subject.oracle is decide:  # the packaged oracle takes each letter's reading, already taken
        oracle = decide(wires, case.expected_high_water, [letter.reading for letter in case.letters])
    else:
        oracle = case.subject.oracle(wires, case.expected_high_water)
    ours = (
        plan.disposition,
        tuple((op.tool_call_id, op.status) for op in plan.operations),
        tuple(case.events[index].id for index in case.replay_indexes),
        plan.requires_verification,
    )
    theirs = (oracle.disposition, oracle.statuses, oracle.replay_ids, oracle.requires_verification)
    if ours != theirs:
        return f"projector {ours[0]} {list(ours[1])} replay {list(ours[2])}; oracle {theirs[0]} {list(theirs[1])} replay {list(theirs[2])}"
    if not oracle.required_reasons <= set(plan.rejection_reasons):
        # The oracle names the contract's two reasons itself: a renamed reason ends here.
        return SelfAdvised(
            f"the projector gives reasons {list(plan.rejection_reasons)}, but the independent oracle requires "
            f"{sorted(oracle.required_reasons)} ({_where_the_oracle_names_them(case.subject.oracle_file)}: the oracle "
            "is written by hand on purpose)"
        )
    return None


def _where_the_oracle_names_them(oracle_file: str | None) -> str:
    if oracle_file is not None:
        return f"named in {oracle_file}; if you renamed one of them, rename it there too"
    return (
        "named in the packaged Phase 0 oracle, resume_contract/core/oracle.py; if you renamed one of them, keep an "
        "oracle of your own beside the spec (copy that file into the project, name it in spec/invariants.yaml as "
        "`oracle: <path>`) and rename it there too"
    )


def _monotonic_evidence(case: _Case) -> str | None:
    if case.parent_anomalous and case.plan.disposition != "blocked":
        return "the ledger one event shorter holds a rejecting anomaly, but this one is safe_replay"
    return None


# Each invariant of spec/invariants.yaml with its check, in the order checked.
_INVARIANT_CHECKS: tuple[tuple[str, Callable[[_Case], str | None]], ...] = (
    ("deterministic_and_pure", _deterministic_and_pure),
    ("fail_closed", _fail_closed),
    ("replay_well_formed", _replay_well_formed),
    ("high_water_counts_committed_rows", _high_water_counts_committed_rows),
    ("table_matches_machine", _table_matches_machine),
    ("matches_oracle", _matches_oracle),
    ("monotonic_evidence", _monotonic_evidence),
)


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
    cache = [[_placed(symbol, position, subject) for symbol in range(len(subject.alphabet))] for position in range(1, depth + 1)]
    if first is None:
        result.explored += 1
        _check((), [], None, invariants, False, result, subject)
        return result
    word: list[int] = [first]
    events: list[Placed] = [cache[0][first]]

    def visit(parent_anomalous: bool) -> None:
        key = tuple(word)
        result.explored += 1
        anomalous = _check(key, events, None, invariants, parent_anomalous, result, subject)
        if len(word) <= HIGH_WATER_CHECK_MAX_LENGTH:
            _check(key, events, len(events) + 1, invariants, False, result, subject)
        if len(word) == depth:
            return
        for letter in range(len(subject.alphabet)):
            word.append(letter)
            events.append(cache[len(word) - 1][letter])
            visit(anomalous)
            word.pop()
            events.pop()

    visit(False)
    return result


def violations_of(subject: Subject, invariants: Mapping[str, tuple[str, ...]], depth: int) -> tuple[Violation, ...]:
    """Every invariant's shortest violation over every ledger up to `depth` events, in this process."""
    firsts: list[int | None] = [None] + (list(range(len(subject.alphabet))) if depth > 0 else [])
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
