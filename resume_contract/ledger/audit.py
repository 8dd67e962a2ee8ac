"""Plan every ledger in a workspace at once: after a host crash an operator has thousands of runs.

Ledgers are planned in worker processes (one per core); each worker returns a small summary, never the plan,
so the parent's memory stays flat. Results come back in (session, run) order whatever the scheduling.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from ..contract import Contract, active, build_resume_plan
from ..errors import (
    EscapesWorkspace,
    ExpressionFailed,
    InvalidLedgerId,
    LedgerCorruption,
    LedgerInUse,
    LedgerMissing,
    ResumeContractError,
    StoreError,
)
from ..system.open_files import OpenFileTable
from .bytes import StrPath
from .committed_file import LEDGER_NAME
from .ids import check_ledger_id
from .snapshots import PARTIALS_DIR
from .workspace import OpenSessions, walk_run

CORRUPT = "corrupt"
LIVE = "live"  # a writer still holds the ledger: a running run, not a crashed one
UNREADABLE = "unreadable"
# The refusal an unreadable run carries when a symlink stands where its directory (sessions/, <S>, runs/, <R>) or
# its ledger belongs: never followed, never read, and counted apart (`refused`) so an audit names it as a refusal.
SYMLINK = "symlink"


class RunSummary(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    """One run's outcome: its disposition, or why no plan could be made."""

    session_id: str
    run_id: str
    ledger: str
    status: str
    high_water: int | None = None
    rejection_reasons: tuple[str, ...] = ()
    error: str | None = None
    diagnostics: tuple[str, ...] = ()  # the plan's diagnostic codes: two blocked runs read apart
    to_verify: tuple[str, ...] = ()  # "TOOL call ID" for each call without a committed response (up to VERIFY_LISTED)
    corruption: str | None = None  # the corruption kind, for a corrupt run
    refusal: str | None = None  # SYMLINK, for an unreadable run refused because a link stands where its files belong


VERIFY_LISTED = 5


Job = tuple[Path, str, str, "str | Path"]  # (workspace, session id, run id, ledger path: a str from `discover`)


@dataclass(frozen=True)
class Discovery:
    ledgers: list[Job]
    skipped: list[str]
    # Entries that cannot even be listed without following a symlink out of the workspace.
    unreadable: list[RunSummary] = field(default_factory=list)


def discover(workspace: Path) -> Discovery:
    """Every entry of every `sessions/<S>/runs/`, sorted: each is a run, and each is reported.

    Directories with invalid ids are skipped (and said so); a `sessions`, session or `runs` directory that is a
    symlink is reported unreadable and refused (`refusal`: SYMLINK) rather than listed; anything else is planned,
    and a run whose ledger is missing, a FIFO or a directory comes back from `summarize` as unreadable with its
    cause (a run directory, ledger or snapshots' directory that is a symlink: refused too). Raises
    LedgerMissing when `workspace` has no `sessions/` (an empty one is a workspace with no runs).
    """
    ledgers: list[Job] = []
    skipped: list[str] = []
    unreadable: list[RunSummary] = []
    sessions = workspace / "sessions"
    if not os.path.lexists(sessions):  # a typo (one level too high or too low) must not read as "0 runs", all clear
        raise LedgerMissing(f"{workspace}: no sessions/ directory, so not a workspace (its runs are sessions/<S>/runs/<R>/{LEDGER_NAME})")
    if sessions.is_symlink():
        unreadable.append(RunSummary("", "", str(sessions), UNREADABLE, error=f"{sessions}: {_LINK}", refusal=SYMLINK))
        return Discovery(ledgers, skipped, unreadable)
    for session_dir in sorted(sessions.iterdir()) if sessions.is_dir() else []:
        runs = session_dir / "runs"
        try:
            linked = next((directory for directory in (session_dir, runs) if directory.is_symlink()), None)
            run_ids = sorted(os.listdir(runs)) if linked is None and runs.is_dir() else []  # (the order of sorted Paths)
        except OSError as error:  # (a session this user may not search or list): it is unreadable, the rest audited
            unreadable.append(RunSummary(session_dir.name, "", str(runs), UNREADABLE, error=f"{runs}: cannot be listed: {error.strerror or error}"))
            continue
        if linked is not None:
            unreadable.append(RunSummary(session_dir.name, "", str(linked), UNREADABLE, error=f"{linked}: {_LINK}", refusal=SYMLINK))
            continue
        session_id, listed = session_dir.name, str(runs)
        for run_id in run_ids:
            ledger = os.path.join(listed, run_id, LEDGER_NAME)  # str(runs / run_id / LEDGER_NAME), without pathlib
            try:
                check_ledger_id("session", session_id)
                check_ledger_id("run", run_id)
            except InvalidLedgerId as error:
                skipped.append(f"{ledger}: {error}")
                continue
            ledgers.append((workspace, session_id, run_id, ledger))
    return Discovery(ledgers, skipped, unreadable)


_LINK = "a symlink inside the workspace; not followed, not read"


def _linked_step(workspace: Path, session_id: str, run_id: str) -> str | None:
    """The first step of the run's path below the workspace that is a symlink (sessions/, <S>, runs/, <R>, its
    ledger or its snapshots' directory), if any: asked only of a run whose opening failed, so an audit of sound runs pays nothing for it."""
    step = str(workspace)
    for part in ("sessions", session_id, "runs", run_id):
        step = os.path.join(step, part)
        if os.path.islink(step):
            return step
        if not os.path.isdir(step):
            return None
    for name in (LEDGER_NAME, PARTIALS_DIR):
        if os.path.islink(os.path.join(step, name)):
            return os.path.join(step, name)
    return None


def summarize(job: Job, contract: Contract | None = None, open_files: OpenFileTable | None = None, sessions: OpenSessions | None = None) -> RunSummary:
    """Read (JSONL and partial snapshots merged) and plan one run (runs in a worker process); `open_files`, the
    processes' open files scanned once for the whole audit (default: scanned for this run); `sessions`, the
    session directory the audit keeps open (see `workspace.OpenSessions`)."""
    workspace, session_id, run_id, path = job
    try:
        walk, high_water = walk_run(workspace, session_id, run_id, refuse_live=open_files or True, contract=contract, sessions=sessions)
        verdict = walk.verdict(high_water, None)
    except LedgerCorruption as error:
        return RunSummary(session_id, run_id, str(path), CORRUPT, error=str(error), corruption=error.kind)
    except LedgerInUse as error:
        return RunSummary(session_id, run_id, str(path), LIVE, error=str(error))
    except (OSError, EscapesWorkspace) as error:
        linked = _linked_step(workspace, session_id, run_id) if isinstance(error, EscapesWorkspace) else None
        if linked is not None:
            return RunSummary(session_id, run_id, str(path), UNREADABLE, error=f"{linked}: {_LINK}", refusal=SYMLINK)
        # Ours name their path; the system's name only the step that failed ("Permission denied: 'r1'").
        said = str(error) if isinstance(error, ResumeContractError) else f"{os.path.dirname(path)}: {error.strerror or error}"
        return RunSummary(session_id, run_id, str(path), UNREADABLE, error=said)
    except MemoryError:
        return RunSummary(session_id, run_id, str(path), UNREADABLE, error=f"{path}: not enough memory to plan this run")
    except ExpressionFailed as error:
        return RunSummary(session_id, run_id, str(path), UNREADABLE, error=f"{path}: nothing was decided: an expression of the contract cannot judge it: {error}")
    return RunSummary(
        session_id,
        run_id,
        str(path),
        verdict.disposition,
        high_water,
        verdict.rejection_reasons,
        diagnostics=tuple(dict.fromkeys(diagnostic.code for diagnostic in verdict.diagnostics)),
        to_verify=tuple(f"{tool_name} call {call_id}" for tool_name, call_id in walk.unsettled(VERIFY_LISTED)),
    )


def _summarize_chunk(jobs: list[Job], contract: Contract, open_files: OpenFileTable) -> list[RunSummary]:
    sessions = OpenSessions(jobs[0][0])
    try:
        return [summarize(job, contract, open_files, sessions) for job in jobs]
    finally:
        sessions.close()


def _died(job: Job, cause: str) -> RunSummary:
    workspace, session_id, run_id, path = job
    return RunSummary(session_id, run_id, str(path), UNREADABLE, error=f"{path}: the worker process planning this run died ({cause})")


def audit(
    jobs: list[Job], workers: int, on_progress: Callable[[int, int], None] | None = None, *, contract: Contract | None = None
) -> Generator[RunSummary, None, None]:
    """Summaries in job order, planned by `workers` processes (1: in this process).

    A worker that dies (killed, out of memory) breaks the pool, and costs only the runs it may have been
    planning: the first chunk left unplanned is planned again one run per fresh process (a run whose process
    dies again is reported unreadable), and the chunks after it go on in a fresh pool.
    """
    contract = contract or active()
    # Once for the whole audit (a scan per run would cost more than planning a small one). A writer that opens
    # a run later and writes while it is read still makes it live: its file changes under the read.
    open_files = OpenFileTable.scan()
    total = len(jobs)
    done = 0
    if workers <= 1 or total <= 1:
        sessions = OpenSessions(jobs[0][0]) if jobs else None
        try:
            for summary in (summarize(job, contract, open_files, sessions) for job in jobs):
                done += 1
                if on_progress:
                    on_progress(done, total)
                yield summary
        finally:
            if sessions is not None:
                sessions.close()
        return
    from concurrent.futures.process import BrokenProcessPool  # (a pool's: an audit in one process never loads it)

    from ..system.interrupts import stoppable_pool

    size = max(1, min(64, total // (workers * 8)))
    chunks = [jobs[start : start + size] for start in range(0, total, size)]
    first = 0  # the first chunk not yet yielded
    while first < len(chunks):
        broken = None
        with stoppable_pool(workers) as pool:
            futures = [pool.submit(_summarize_chunk, chunk, contract, open_files) for chunk in chunks[first:]]
            for index, future in enumerate(futures, start=first):
                try:
                    summaries = future.result()
                except BrokenProcessPool:
                    broken = index  # every later future fails the same way, whichever worker died
                    break
                for summary in summaries:
                    done += 1
                    if on_progress:
                        on_progress(done, total)
                    yield summary
                first = index + 1
        if broken is not None:
            # Before the dead worker's run is known, the earliest chunk it may have held is planned run by run.
            for job in chunks[broken]:
                done += 1
                if on_progress:
                    on_progress(done, total)
                yield _alone(job, contract, open_files)
            first = broken + 1


def _alone(job: Job, contract: Contract, open_files: OpenFileTable) -> RunSummary:
    from concurrent.futures.process import BrokenProcessPool

    from ..system.interrupts import stoppable_pool

    with stoppable_pool(1) as pool:
        try:
            return pool.submit(_summarize_chunk, [job], contract, open_files).result()[0]
        except BrokenProcessPool as error:
            return _died(job, str(error) or "killed")


def audit_store(workspace: StrPath, *, contract: Contract | None = None) -> Iterator[RunSummary]:
    """Every run of the store, planned one after another (each in its own read transaction), in (session, run)
    order, as the reference lists them. Raises StoreError when the store itself is not one this tool reads."""
    from .sqlite_store import SqliteStore  # (sqlite3 is loaded only for a workspace that keeps a store)

    contract = contract or active()
    with SqliteStore(workspace, contract=contract) as store:
        for session_id, run_id, problem in store.listing():
            where = f"{store.path} (session {session_id}, run {run_id})"
            if problem is not None:
                yield RunSummary(session_id, run_id, where, CORRUPT, error=f"{where}: {problem}", corruption="invalid_identity")
                continue
            try:
                ledger = store.read_run(session_id, run_id)
                plan = build_resume_plan(ledger.events, None, rows=ledger.rows, contract=contract)
            except LedgerCorruption as error:
                yield RunSummary(session_id, run_id, where, CORRUPT, error=str(error), corruption=error.kind)
                continue
            except StoreError as error:
                yield RunSummary(session_id, run_id, where, UNREADABLE, error=str(error))
                continue
            yield RunSummary(
                session_id,
                run_id,
                where,
                plan.disposition,
                plan.source_runtime_event_high_water,
                plan.rejection_reasons,
                diagnostics=tuple(dict.fromkeys(diagnostic.code for diagnostic in plan.diagnostics)),
                to_verify=tuple(
                    f"{operation.tool_name} call {operation.tool_call_id}" for operation in plan.operations
                    if operation.response_runtime_event_id is None and operation.status not in contract.table.never_ran_statuses  # (as Walk.unsettled)
                )[:VERIFY_LISTED],
            )
