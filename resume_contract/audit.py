"""Plan every ledger in a workspace at once: after a host crash an operator has thousands of runs.

Ledgers are planned in worker processes (one per core); each worker returns a small summary, never the plan,
so the parent's memory stays flat. Results come back in (session, run) order whatever the scheduling.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import msgspec

from .plan import build_resume_plan
from .store import (
    LEDGER_NAME,
    InvalidLedgerId,
    LedgerCorruption,
    LedgerInUse,
    check_ledger_id,
)
from .workspace import read_run

CORRUPT = "corrupt"
LIVE = "live"  # a writer still holds the ledger: a running run, not a crashed one
UNREADABLE = "unreadable"


class RunSummary(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    """One run's outcome: its disposition, or why no plan could be made."""

    session_id: str
    run_id: str
    ledger: str
    status: str
    high_water: int | None = None
    rejection_reasons: tuple[str, ...] = ()
    error: str | None = None


Job = tuple[Path, str, str, Path]  # (workspace, session id, run id, ledger path)


@dataclass(frozen=True)
class Discovery:
    ledgers: list[Job]
    skipped: list[str]


def discover(workspace: Path) -> Discovery:
    """Every `sessions/<id>/runs/<id>/runtime-events.jsonl`, sorted; directories with invalid ids are skipped."""
    ledgers: list[Job] = []
    skipped: list[str] = []
    sessions = workspace / "sessions"
    for session_dir in sorted(sessions.iterdir()) if sessions.is_dir() else []:
        for run_dir in sorted((session_dir / "runs").iterdir()) if (session_dir / "runs").is_dir() else []:
            ledger = run_dir / LEDGER_NAME
            if not ledger.is_file():
                continue
            try:
                check_ledger_id("session", session_dir.name)
                check_ledger_id("run", run_dir.name)
            except InvalidLedgerId as error:
                skipped.append(f"{ledger}: {error}")
                continue
            ledgers.append((workspace, session_dir.name, run_dir.name, ledger))
    return Discovery(ledgers, skipped)


def summarize(job: Job) -> RunSummary:
    """Read (JSONL and partial snapshots merged) and plan one run (runs in a worker process)."""
    workspace, session_id, run_id, path = job
    try:
        ledger = read_run(workspace, session_id, run_id, refuse_live=True)
    except LedgerCorruption as error:
        return RunSummary(session_id, run_id, str(path), CORRUPT, error=str(error))
    except LedgerInUse as error:
        return RunSummary(session_id, run_id, str(path), LIVE, error=str(error))
    except OSError as error:
        return RunSummary(session_id, run_id, str(path), UNREADABLE, error=str(error))
    plan = build_resume_plan(ledger.events, rows=ledger.rows)
    return RunSummary(session_id, run_id, str(path), plan.disposition, ledger.high_water, plan.rejection_reasons)


def audit(
    jobs: list[Job], workers: int, on_progress: Callable[[int, int], None] | None = None
) -> Iterator[RunSummary]:
    """Summaries in job order, planned by `workers` processes (1: in this process)."""
    total = len(jobs)
    if workers <= 1 or total <= 1:
        results: Iterator[RunSummary] = map(summarize, jobs)
        for done, summary in enumerate(results, 1):
            if on_progress:
                on_progress(done, total)
            yield summary
        return
    chunk = max(1, min(64, total // (workers * 8)))
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for done, summary in enumerate(pool.map(summarize, jobs, chunksize=chunk), 1):
            if on_progress:
                on_progress(done, total)
            yield summary


def default_workers() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
