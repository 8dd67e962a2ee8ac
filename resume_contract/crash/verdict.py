"""Judge what the crash harness observed against the decision table in the generated catalog.

The harness (`harness`) only observes; this says whether each case's reopened plan is the one the contract
requires, and `report` lays the verdicts out for `resume-contract crash`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..contract import Contract, active
from ..core.summary import PlanSummary
from .harness import CrashObservation, canonical_prefix

Failpoint = Any  # a failpoint of the contract's catalog (`Contract.catalog.RUNTIME_RESUME_FAILPOINTS`)


def expected_from_catalog(prefix: str, outcome: str, contract: Contract | None = None) -> dict[str, object]:
    """The decision table's expectations for one prefix and outcome, from the generated catalog."""
    contract = contract or active()
    committed = tuple(event.id for event in canonical_prefix(outcome, prefix, contract))
    return {"committed_event_ids": committed, **contract.catalog.DECISIONS[prefix].summary(outcome)._asdict()}


def mismatches(observation: CrashObservation, expected: dict[str, object]) -> list[str]:
    """Every harness problem and every way the reopened plan differs from `expected`; empty means verified."""
    problems = list(observation.problems)
    plan = observation.plan
    if plan is None:
        return problems or ["no plan was made"]
    actual = {"committed_event_ids": observation.reopened_ids, **PlanSummary.of(plan)._asdict()}
    for key, want in expected.items():
        got = actual[key]
        if (tuple(want) if isinstance(want, list) else want) != got:
            problems.append(f"{key}: expected {want!r}, got {got!r}")
    return problems


def torn_write_mismatches(observation: CrashObservation, expected: dict[str, object]) -> list[str]:
    """`mismatches` of a torn-write case, which must also report the torn row as corruption where the
    committed rows end."""
    problems = mismatches(observation, expected)
    corruption = observation.corruption
    if corruption is None or corruption.offset != observation.committed_bytes:
        problems.append("the torn row was not reported as corruption at the committed offset")
    return problems


@dataclass(frozen=True)
class CaseVerdict:
    """One failpoint x outcome: its SIGKILL and real-boundary observations and their problems (none: verified)."""

    failpoint: Failpoint
    outcome: str
    crashed: CrashObservation
    sigkill_problems: list[str]
    boundary_problems: list[str]


@dataclass(frozen=True)
class TornVerdict:
    """A kill in the middle of a row after one committed prefix, and its problems (none: verified)."""

    prefix: str
    observation: CrashObservation
    problems: list[str]


def judge_catalog(
    cases: Sequence[tuple[Failpoint, str]],
    torn_cases: Sequence[tuple[str, str]],
    observations: Sequence[CrashObservation],
    contract: Contract | None = None,
) -> tuple[list[CaseVerdict], list[TornVerdict]]:
    """Judge `run_catalog`'s observations: those of the SIGKILL cases, then of the real-boundary cases (both
    one per failpoint x outcome in `cases`), then of the torn writes (one per (prefix, outcome) in `torn_cases`)."""
    verdicts = []
    for index, (failpoint, outcome) in enumerate(cases):
        expected = expected_from_catalog(failpoint.committed_prefix, outcome, contract)
        crashed, looped = observations[index], observations[len(cases) + index]
        verdicts.append(CaseVerdict(failpoint, outcome, crashed, mismatches(crashed, expected), mismatches(looped, expected)))
    torn = [
        TornVerdict(prefix, observation, torn_write_mismatches(observation, expected_from_catalog(prefix, outcome, contract)))
        for (prefix, outcome), observation in zip(torn_cases, observations[2 * len(cases) :])
    ]
    return verdicts, torn
