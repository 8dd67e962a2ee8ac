"""Bounded model checking of the generated projector: every ledger up to a length, every declared invariant
(and, for a contract with a continuation decision, Phase 1's invariants over its explored situations).

The checks live in `invariants` (where `generate` and `check` also run them, on the spec in memory); this
module runs them on the generated code, deeper, sharing the first letters out over worker processes. For
each ledger the plan is computed by the generated table (twice), by the generated python-statemachine class
and by the independent oracle. The shortest violating ledger found is reported, and written as JSONL for
`resume-contract plan`.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..contract import Contract, active
from ..core.explore import Alphabet
from ..core.invariants import (
    Subject,
    SubtreeResult,
    Violation,
    checked_alphabet,
    merge,
    packaged_oracle,
    shortest_first,
    verify_subtree,
)
from ..core.table import ProjectorTable
from ..system.interrupts import stoppable_pool
from .continuation_verify import ContinuationResult, verify_continuation
from .reference import build_resume_plan_with_machine


def reachable_steps(table: ProjectorTable) -> frozenset[tuple[str, str, bool]]:
    """The table entries a ledger can reach. A run walks one set of event kinds (its facts choose which of the kinds
    split off by a test each content kind is: every choice is a run someone may write), and only the states those
    kinds lead to; an unknown call id has no call to compare a name with, and a call or an action event is never
    compared with anything (the spec's `when` applies to responses only)."""
    uncompared = {action.kind for action in table.action_kinds}
    choices: dict[tuple[str, bool], list[str]] = {shape: [kind] for shape, kind in table.event_kinds.items()}
    for shape, kind, _ in table.kind_guards:
        choices.setdefault(shape, []).insert(-1, kind)
    for (content, _), kinds in choices.items():
        if table.tool_contents[content].opens:
            uncompared.update(kinds)
    reached: set[tuple[str, str, bool]] = set()
    for chosen in itertools.product(*choices.values()):
        kinds = [*chosen, *(action.kind for action in table.action_kinds)]
        entries = [(kind, names_match) for kind in kinds for names_match in (True, False) if names_match or kind not in uncompared]
        states, todo = {table.initial_state}, [table.initial_state]
        while todo:
            state = todo.pop()
            for kind, names_match in entries:
                if (state, kind, names_match) in table.step and (names_match or state != table.initial_state):
                    reached.add((state, kind, names_match))
                    target = table.step[(state, kind, names_match)][0]
                    if target not in states:
                        states.add(target)
                        todo.append(target)
    return frozenset(reached)


def generated_subject(contract: Contract) -> Subject:
    """The generated code of `contract`: its table, its decoding model and its python-statemachine class, checked
    against the oracle its spec names (the packaged Phase 0 one when it names none)."""
    machine = functools.partial(build_resume_plan_with_machine, contract=contract)
    edition = packaged_oracle(getattr(contract.catalog, "PACKAGED_ORACLE", "tool-boundary"))
    subject = Subject(contract.table, contract.model, contract.table.anomalies, machine=machine, oracle=edition)
    oracle_file = contract.file(contract.catalog.ORACLE)  # a regular file inside the project, never through a link
    if oracle_file is None or contract.root is None:
        return subject
    from resume_contract_generator.spec.oracle_file import load_project_module  # the project's own oracle

    decide = load_project_module(contract.root, contract.catalog.ORACLE, "oracle").decide
    return dataclasses.replace(subject, oracle=decide, oracle_file=contract.catalog.ORACLE)


def verify_generated_subtree(first: int | None, depth: int, invariants: Mapping[str, tuple[str, ...]], contract: Contract) -> SubtreeResult:
    """One worker's share: the subtree under `first`, checked on the generated code (picklable arguments only)."""
    return verify_subtree(first, depth, invariants, generated_subject(contract))


@dataclass(frozen=True)
class VerifyResult:
    depth: int
    alphabet: Alphabet
    explored: int
    seconds: float
    steps_reached: int
    steps_total: int
    distinct_plans: int
    invariants: tuple[str, ...]
    violations: tuple[Violation, ...]
    unjudged: tuple[str, ...] = ()  # letters the oracle does not know (`Subject.unjudged`)
    continuation: ContinuationResult | None = None  # Phase 1's invariants (None: the contract has no Phase 1)

    @property
    def failed(self) -> bool:
        return bool(self.violations) or (self.continuation is not None and bool(self.continuation.violations))


def verify(
    depth: int, workers: int = 1, on_progress: Callable[[int, int], None] | None = None, *, contract: Contract | None = None
) -> VerifyResult:
    """Explore every ledger up to `depth` events and check the spec's invariants on each (on `contract`, by
    default the bound one). More than one worker re-binds the contract in each by its package's name."""
    contract = contract or active()
    invariants = dict(contract.catalog.INVARIANTS)
    started = time.perf_counter()
    alphabet = explored_alphabet(contract)
    firsts: list[int | None] = [None] + (list(range(len(alphabet))) if depth > 0 else [])
    if workers > 1 and depth >= 4:
        with stoppable_pool(workers) as pool:
            results = pool.map(verify_generated_subtree, firsts, [depth] * len(firsts), [invariants] * len(firsts), [contract] * len(firsts))
            subtree_results = _with_progress(results, len(firsts), on_progress)
    else:
        subtree_results = _with_progress((verify_generated_subtree(f, depth, invariants, contract) for f in firsts), len(firsts), on_progress)
    merged = merge(subtree_results)
    assert merged.explored == alphabet.count(depth)
    violations = shortest_first(merged)
    reachable = reachable_steps(contract.table)
    return VerifyResult(
        depth=depth,
        alphabet=alphabet,
        explored=merged.explored,
        seconds=time.perf_counter() - started,
        steps_reached=len(merged.steps_reached & reachable),
        steps_total=len(reachable),
        distinct_plans=len(merged.plans),
        invariants=tuple(invariants),
        violations=violations,
        unjudged=generated_subject(contract).unjudged,
        continuation=verify_continuation(contract),
    )


def _with_progress(results, total: int, on_progress: Callable[[int, int], None] | None) -> list[SubtreeResult]:
    collected = []
    for done, result in enumerate(results, 1):
        collected.append(result)
        if on_progress:
            on_progress(done, total)
    return collected


def explored_alphabet(contract: Contract | None = None) -> Alphabet:
    """The alphabet `verify` explores for `contract` (by default the bound one)."""
    contract = contract or active()
    return checked_alphabet(contract.table, contract.model)


def counterexample_rows(violation: Violation) -> bytes:
    """The violating ledger as JSONL rows, for `resume-contract plan`."""
    return b"".join(row + b"\n" for row in violation.rows)
