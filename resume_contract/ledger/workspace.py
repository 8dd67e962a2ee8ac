"""Read and plan one run of a workspace as the reference store does: its JSONL ledger merged with the partial
streaming snapshots beside it (`snapshots` reads them, `merge` says where they go).

Layout of a run: `<workspace>/sessions/<S>/runs/<R>/runtime-events.jsonl`, and `runtime-partials/<key>.partial`.
Merged snapshots are events: they are in `runtimeEvents` and count in the high-water. They are partial events,
which take no part in tool state and are never replayed, so a plan is the plan of the JSONL alone but for its
high-water and its `runtimeEvents`: `plan_run` walks the JSONL in bounded memory, as `plan_ledger` does, and
reads each snapshot's row back from its file when the rows are written.
"""

from __future__ import annotations

import os
import weakref
from pathlib import Path
from typing import NamedTuple

import msgspec

from ..contract import Contract, active
from ..core.plan import ResumePlan
from ..core.walk import Walk
from ..errors import EscapesWorkspace, LedgerCorruption, LedgerMissing
from ..system.open_files import OpenFileTable
from .bytes import CHUNK_BYTES, StrPath
from .chunk import Chunk
from .committed_file import LEDGER_NAME, open_committed
from .containment import check_contained, open_directory, open_in
from .file_plan import LedgerRows, PlannedFile, walk_ledger
from .merge import JsonlWatch, MergedRows, Placed, merged
from .reader import CommittedLedger
from .snapshots import PARTIALS_DIR, Snapshot, read_row, read_snapshots
from .sqlite_layout import holds_store
from .store import ledger_path, ledger_text, read_ledger


def run_directory(workspace: StrPath, session_id: str, run_id: str) -> Path:
    """The run's directory, after checking that the workspace, the session and the run all exist."""
    path = ledger_path(Path(workspace), session_id, run_id)
    run_dir = path.parent
    workspace = Path(workspace)
    if not workspace.is_dir():
        raise LedgerMissing(f"{workspace}: no such workspace directory")
    if not (workspace / "sessions" / session_id).is_dir():
        raise LedgerMissing(f"{workspace}: no session {session_id!r} (no directory sessions/{session_id})")
    if not run_dir.is_dir():
        raise LedgerMissing(f"{workspace}: session {session_id!r} has no run {run_id!r} (no directory {run_dir})")
    check_contained(workspace, run_dir)  # sessions/, sessions/<S>, runs/, runs/<R>: none may be a symlink
    return run_dir


def read_run(
    workspace: StrPath, session_id: str, run_id: str, *, refuse_live: bool | OpenFileTable = False, contract: Contract | None = None
) -> CommittedLedger:
    """One run's committed events as the reference store reads them (JSONL and partial snapshots merged), all
    held in memory; `plan_run` plans a run without holding it."""
    contract = contract or active()
    if holds_store(workspace):
        from .sqlite_plan import read_store_run

        return read_store_run(workspace, session_id, run_id, contract=contract)
    run = (session_id, run_id)
    run_fd, path = _open_run(Path(workspace), session_id, run_id)
    try:
        _ledger_in(run_fd, path)
        ledger = read_ledger(path, refuse_live=refuse_live, run=run, directory_fd=run_fd, contract=contract)
        partials = _partials_in(run_fd, path)
    finally:
        os.close(run_fd)
    if partials is None:
        return ledger
    run_dir = Path(path).parent
    try:
        snapshots = read_snapshots(partials, run_dir / PARTIALS_DIR, run, contract)
        if not snapshots:
            return ledger
        watch = JsonlWatch(snapshots)
        watch(Chunk(0, 0, b"", list(ledger.events)))
        placed = watch.placed(path, len(ledger.events))
        events, rows = merged(ledger.events, ledger.rows, placed, lambda snapshot: read_row(partials, run_dir / PARTIALS_DIR, snapshot, run, contract))
    finally:
        os.close(partials)
    return CommittedLedger(ledger.path, tuple(events), tuple(rows))


def plan_run(
    workspace: StrPath,
    session_id: str,
    run_id: str,
    expected_high_water: int | None = None,
    *,
    refuse_live: bool | OpenFileTable = False,
    processes: int = 1,
    chunk_bytes: int = CHUNK_BYTES,
    contract: Contract | None = None,
) -> ResumePlan:
    """One run's plan (of `read_run`'s events), in bounded memory: the JSONL is walked a chunk at a time and
    its rows, the snapshots' among them, are read back when written. A run with snapshots is walked in one
    process (`processes` is for one without, the usual case)."""
    contract = contract or active()
    if holds_store(workspace):  # the reference's canonical store since 2026-08: the workspace's ledgers are its rows
        from .sqlite_plan import plan_store_run

        return plan_store_run(workspace, session_id, run_id, expected_high_water, contract=contract)
    walked = _walk_run(Path(workspace), session_id, run_id, refuse_live, processes, chunk_bytes, contract)
    source, walk, placed, partials = walked
    rows = LedgerRows(source, source.rows)
    if not placed:
        return walk.plan(walked.high_water, expected_high_water, rows, rows.without)
    assert partials is not None
    run = (session_id, run_id)
    merged_rows = MergedRows(rows, placed, lambda snapshot: partials.row(snapshot, run, contract))
    return walk.plan(walked.high_water, expected_high_water, merged_rows, rows.without)


def walk_run(
    workspace: StrPath, session_id: str, run_id: str, *, refuse_live: bool | OpenFileTable = False, contract: Contract | None = None,
    sessions: OpenSessions | None = None,
) -> tuple[Walk, int]:
    """One run's walk, every event fed, and its high-water: what `plan_run` plans from, for a caller that wants
    only the verdict (`Walk.verdict`), not the operations and rows (the workspace audit). `sessions`: the run
    is opened in its session's `runs/` kept open there, if it is that workspace's."""
    where = workspace if isinstance(workspace, Path) else Path(workspace)  # (the audit's, for `sessions is`)
    walked = _walk_run(where, session_id, run_id, refuse_live, 1, CHUNK_BYTES, contract or active(), sessions, rows_read=False)
    return walked.walk, walked.high_water


class OpenSessions:
    """The `sessions/<S>/runs/` directory of the session last asked for, kept open: an audit opens the runs of
    a session one after another, each then one step below it rather than five (the workspace, `sessions/`,
    `<S>`, `runs/`, `<R>`), every step opened as `_open_run` opens it, never through a link. Closed by `close`.
    (A session directory renamed while its runs are audited is read where it was when opened, as a run's own
    directory always was once opened.)"""

    def __init__(self, workspace: StrPath) -> None:
        self.workspace = workspace if isinstance(workspace, Path) else Path(workspace)
        self._session: str | None = None
        self._fd = -1

    def runs_of(self, session_id: str) -> int:
        """The open `runs/` of `session_id` (the id checked by the caller); raises OSError or EscapesWorkspace."""
        if session_id != self._session:
            self.close()
            self._fd = open_directory(self.workspace, ("sessions", session_id, "runs"))
            self._session = session_id
        return self._fd

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
        self._session, self._fd = None, -1


class _WalkedRun(NamedTuple):
    source: PlannedFile
    walk: Walk
    placed: Placed
    partials: _Partials | None

    @property
    def high_water(self) -> int:
        """The run's events: its JSONL rows and the snapshots merged among them."""
        return self.source.rows + len(self.placed)


def _walk_run(
    workspace: Path, session_id: str, run_id: str, refuse_live: bool | OpenFileTable, processes: int, chunk_bytes: int, contract: Contract,
    sessions: OpenSessions | None = None, *, rows_read: bool = True,
) -> _WalkedRun:
    """The run walked; with `rows_read`, its source kept open for its rows to be read back (`plan_run`)."""
    run = (session_id, run_id)
    run_fd, path = _open_run(workspace, session_id, run_id, sessions)
    try:
        _ledger_in(run_fd, path)
        watch: JsonlWatch | None = None
        refused: LedgerCorruption | None = None
        with open_committed(path, refuse_live=refuse_live, directory_fd=run_fd) as fd:
            partials = _Partials.open_in(run_fd, path)
            if partials is not None:
                try:
                    snapshots = read_snapshots(partials.fd, partials.directory, run, contract)
                except LedgerCorruption as corruption:
                    refused, snapshots = corruption, []  # reported once the JSONL is found sound: its corruption comes first
                watch = JsonlWatch(snapshots) if snapshots else None
            source = PlannedFile(path, fd, kept=rows_read)
            walk = walk_ledger(source, run, chunk_bytes, processes, contract, watch)
    finally:
        os.close(run_fd)
    if refused is not None:
        raise refused
    return _WalkedRun(source, walk, watch.placed(path, source.rows) if watch is not None else [], partials)


class _Partials:
    """A run's open `runtime-partials/`, kept open (like the planned JSONL) while a plan may read rows from it."""

    def __init__(self, fd: int, directory: Path) -> None:
        self.fd = fd
        self.directory = directory
        weakref.finalize(self, os.close, fd)

    @classmethod
    def open_in(cls, run_fd: int, ledger: str) -> _Partials | None:
        fd = _partials_in(run_fd, ledger)
        return None if fd is None else cls(fd, Path(ledger).parent / PARTIALS_DIR)

    def row(self, snapshot: Snapshot, run: tuple[str, str], contract: Contract) -> msgspec.Raw:
        return read_row(self.fd, self.directory, snapshot, run, contract)[1]


def _open_run(workspace: Path, session_id: str, run_id: str, sessions: OpenSessions | None = None) -> tuple[int, str]:
    """A descriptor of the run's directory, and the path of its ledger (`ledger_text`, the ids checked): each step
    opened below the workspace, never through a link, once (the ledger and the snapshots are then opened in it,
    where each would walk down again); in `sessions`, when it holds that workspace's."""
    path = ledger_text(workspace, session_id, run_id)
    if sessions is not None and (sessions.workspace is workspace or sessions.workspace == workspace):
        try:
            return os.open(run_id, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=sessions.runs_of(session_id)), path
        except (OSError, EscapesWorkspace):
            pass  # opened step by step below, where what is missing, or a link, is said as it always was
    steps = ("sessions", session_id, "runs", run_id)
    try:
        return open_directory(workspace, steps), path
    except (OSError, EscapesWorkspace):
        run_directory(workspace, session_id, run_id)  # which step is missing, or a link, said as it always was
    return open_directory(workspace, steps), path  # every step is there now (it appeared meanwhile)


def _partials_in(run_fd: int, ledger: str) -> int | None:
    """A descriptor of the run's `runtime-partials/`, opened in its opened directory (that of `ledger`), or None
    when it has none."""
    flags = os.O_RDONLY | os.O_DIRECTORY
    try:
        return os.open(PARTIALS_DIR, flags | os.O_NOFOLLOW, dir_fd=run_fd)  # (most runs have none)
    except FileNotFoundError:
        return None
    except OSError:
        pass
    try:  # opened again, where a link is refused and named (`open_in`); any other error as it comes
        return open_in(run_fd, PARTIALS_DIR, flags, os.path.join(os.path.dirname(ledger), PARTIALS_DIR))
    except FileNotFoundError:
        return None


def _ledger_in(run_fd: int, path: str) -> None:
    """Raise LedgerMissing unless the run's directory (opened) holds its ledger, `path`."""
    try:
        os.lstat(LEDGER_NAME, dir_fd=run_fd)
    except FileNotFoundError:
        raise LedgerMissing(f"{path}: the run has no {LEDGER_NAME}") from None
    except OSError:  # (a run directory that cannot be searched): said as it always was
        if not os.path.lexists(path):
            raise LedgerMissing(f"{path}: the run has no {LEDGER_NAME}") from None
