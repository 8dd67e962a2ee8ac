"""Lay out the judged crash cases (`verdict`) as `resume-contract crash` prints them: a table row per
failpoint x outcome, a line per torn write, and every failure."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .verdict import CaseVerdict, TornVerdict

TABLE_HEADER = ("ID", "outcome", "boundary", "committed prefix", "decision", "reasons", "sigkill", "real boundary")
CONTINUATION_HEADER = ("boundary", "committed when killed", "planning again", "recovery", "left", "sigkill")
SQLITE_HEADER = ("ID", "outcome", "boundary", "committed prefix", "decision", "reasons", "sigkill")


@dataclass
class CatalogRun:
    """`resume-contract crash`: a table row per failpoint x outcome, a line per torn write, and timings."""

    table: list[tuple[str, ...]]
    torn_lines: list[str]
    failures: list[tuple[str, str]]
    cases: int
    seconds: float
    spawn_seconds: float
    # A row per crash boundary of a continuation (CONTINUATION_HEADER first), when the contract declares them.
    continuation_table: list[tuple[str, ...]] = field(default_factory=list)
    # A row per SQLite store boundary x outcome (SQLITE_HEADER first), when the contract declares the store.
    sqlite_table: list[tuple[str, ...]] = field(default_factory=list)

    @property
    def failed_cases(self) -> int:
        return len({case for case, _ in self.failures})


def catalog_report(
    verdicts: list[CaseVerdict], torn: list[TornVerdict]
) -> tuple[list[tuple[str, ...]], list[str], list[tuple[str, str]]]:
    """(table, torn-write lines, failures as (case, problem)) of the judged crash cases, in case order."""
    table: list[tuple[str, ...]] = [TABLE_HEADER]
    failures: list[tuple[str, str]] = []
    for verdict in verdicts:
        case = f"{verdict.failpoint.id} {verdict.outcome}"
        failures += [(f"{case} sigkill", problem) for problem in verdict.sigkill_problems]
        failures += [(f"{case} real boundary", problem) for problem in verdict.boundary_problems]
        table.append(_case_row(verdict))
    torn_lines = []
    for write in torn:
        failures += [(f"torn write after {write.prefix}", problem) for problem in write.problems]
        torn_lines.append(_torn_line(write))
    return table, torn_lines, failures


def _verified(problems: list[str]) -> str:
    return "FAILED" if problems else "verified"


def _case_row(verdict: CaseVerdict) -> tuple[str, ...]:
    failpoint, plan = verdict.failpoint, verdict.crashed.plan
    return (
        failpoint.id,
        verdict.outcome,
        failpoint.boundary,
        failpoint.committed_prefix,
        plan.disposition if plan else "no plan",
        ", ".join(plan.rejection_reasons) if plan and plan.rejection_reasons else "-",
        _verified(verdict.sigkill_problems),
        _verified(verdict.boundary_problems),
    )


def _torn_line(write: TornVerdict) -> str:
    observation = write.observation
    corruption = observation.corruption
    return (
        f"torn write after {write.prefix}: {_verified(write.problems)} "
        f"(corruption at byte {corruption.offset if corruption else '?'}, {observation.attempts} "
        f"attempt{'s' if observation.attempts != 1 else ''}, repaired, plan {observation.plan.disposition if observation.plan else 'none'})"
    )


def continuation_report(judged: list[tuple[Any, Any, list[str]]]) -> tuple[list[tuple[str, ...]], list[tuple[str, str]]]:
    """(table, failures as (case, problem)) of the continuation cases, each (boundary, observation, problems)."""
    table: list[tuple[str, ...]] = [CONTINUATION_HEADER]
    failures: list[tuple[str, str]] = []
    for boundary, observation, problems in judged:
        failures += [(f"{boundary.id} continuation", problem) for problem in problems]
        reasons = ", ".join(observation.replan_reasons) or "-"
        left = f"{'+'.join(observation.terminal_events) or 'no'} terminal event, header {observation.header_status or 'none'}"
        table.append((
            boundary.id,
            observation.state or "?",
            f"{observation.replan_disposition or '?'} [{reasons}]",
            ", ".join(observation.recovery_steps) or "nothing to do",
            left,
            _verified(problems),
        ))
    return table, failures


def sqlite_report(judged: list[tuple[Any, str, Any, list[str]]]) -> tuple[list[tuple[str, ...]], list[tuple[str, str]]]:
    """(table, failures as (case, problem)) of the SQLite store's cases, each (boundary, outcome, observation, problems)."""
    table: list[tuple[str, ...]] = [SQLITE_HEADER]
    failures: list[tuple[str, str]] = []
    for boundary, outcome, observation, problems in judged:
        failures += [(f"{boundary.id} {outcome} sqlite", problem) for problem in problems]
        plan = observation.plan
        table.append((
            boundary.id,
            outcome,
            boundary.boundary,
            boundary.committed_prefix,
            plan.disposition if plan is not None else "?",
            ", ".join(plan.rejection_reasons) if plan is not None and plan.rejection_reasons else "-",
            _verified(problems),
        ))
    return table, failures
