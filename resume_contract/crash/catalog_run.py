"""`resume-contract crash`: every selected failpoint x outcome through the harnesses, judged and laid out.

The harness (`harness`) observes; `verdict` judges each observation against the catalog's decision table;
`report` lays the verdicts out. Bare interpreter spawns are timed last, with the same workers, for scale.
"""

from __future__ import annotations

import functools
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from ..contract import Contract, active
from .continuation_harness import continuation_mismatches, expected_from_catalog, run_continuation_case
from .harness import CrashObservation, run_boundary_case, run_crash_case, run_in_parallel, run_torn_write_case
from .report import CatalogRun, catalog_report, continuation_report, sqlite_report
from .sqlite_harness import run_sqlite_case
from .verdict import expected_from_catalog as expected_plan
from .verdict import judge_catalog, mismatches


def _bare_spawn() -> CrashObservation:
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return CrashObservation("bare", "", "")


def run_catalog(
    failpoint: str | None, outcome: str | None, *, torn: bool = True, workers: int | None = None, contract: Contract | None = None
) -> CatalogRun:
    """Every selected failpoint x outcome through the SIGKILL and real-boundary harnesses, plus torn writes,
    judged against the catalog's decision table (`verdict`), and each selected crash boundary of a
    continuation (`continuation_harness`, judged against its catalog); then as many bare interpreter spawns,
    for scale; and each selected SQLite store boundary x outcome (`sqlite_harness`), when the contract declares the
    store. `failpoint` selects one Phase 0 failpoint, one continuation boundary or one SQLite boundary by id."""
    contract = contract or active()
    catalog = contract.catalog
    failpoints = [fp for fp in catalog.RUNTIME_RESUME_FAILPOINTS if failpoint in (None, fp.id)]
    lifecycle = contract.continuation_boundaries
    boundaries = [b for b in (lifecycle.BOUNDARIES if lifecycle is not None else ()) if failpoint in (None, b.id)]
    outcomes = [name for name in catalog.OUTCOMES if outcome in (None, name)]
    cases = [(fp, name) for fp in failpoints for name in outcomes]
    prefixes = list(dict.fromkeys(fp.committed_prefix for fp in failpoints)) if torn else []
    torn_cases = [(prefix, outcomes[0]) for prefix in prefixes]
    jobs: list[Callable[[], Any]] = [functools.partial(run_crash_case, fp.id, name, fp.committed_prefix, contract=contract) for fp, name in cases]
    jobs += [functools.partial(run_boundary_case, fp.id, name, fp.committed_prefix, contract=contract) for fp, name in cases]
    jobs += [functools.partial(run_torn_write_case, prefix, name, contract=contract) for prefix, name in torn_cases]
    phase0_jobs = len(jobs)
    jobs += [functools.partial(run_continuation_case, b.id, contract=contract) for b in boundaries]
    sqlite_boundaries = [b for b in getattr(catalog, "SQLITE_FAILPOINTS", ()) if failpoint in (None, b.id)]
    sqlite_cases = [(b, name) for b in sqlite_boundaries for name in outcomes]
    sqlite_start = len(jobs)
    jobs += [functools.partial(run_sqlite_case, b.id, name, b.committed_prefix, contract=contract) for b, name in sqlite_cases]

    started = time.perf_counter()
    observations = run_in_parallel(jobs, workers)
    seconds = time.perf_counter() - started
    table, torn_lines, failures = catalog_report(*judge_catalog(cases, torn_cases, observations[:phase0_jobs], contract))
    judged = [
        (b, observed, continuation_mismatches(observed, expected_from_catalog(b.id, contract)))
        for b, observed in zip(boundaries, observations[phase0_jobs:sqlite_start])
    ]
    continuation_table, continuation_failures = continuation_report(judged)
    sqlite_table, sqlite_failures = sqlite_report([
        (b, name, observed, mismatches(observed, expected_plan(b.committed_prefix, name, contract)))
        for (b, name), observed in zip(sqlite_cases, observations[sqlite_start:])
    ])

    spawn_started = time.perf_counter()
    run_in_parallel([_bare_spawn] * len(jobs), workers)
    spawn_seconds = time.perf_counter() - spawn_started
    return CatalogRun(
        table, torn_lines, failures + continuation_failures + sqlite_failures, len(jobs), seconds, spawn_seconds,
        continuation_table if boundaries else [], sqlite_table if sqlite_cases else [],
    )
