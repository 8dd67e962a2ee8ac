"""The file-backed RuntimeEventStore: one append-only JSONL ledger per run, crash-safe and strict.

Layout: `<workspace>/sessions/<sessionId>/runs/<runId>/runtime-events.jsonl`.

Commit point: `append` returns only after the whole row, newline included, has been handed to the OS through
one O_APPEND descriptor. A process killed after that keeps the row (the page cache survives the process); a
process killed during the write leaves a torn tail, which reading reports as corruption and never as a fact.
Power-loss durability is beyond Phase 0: `durable=True` also fsyncs the file and its directory.

One writer per ledger: the writer holds an exclusive `flock` on the ledger file for as long as it is open, so
a second writer fails (after a bounded wait: a reader's probe never makes a writer fail), and the kernel drops
the lock when the writer dies, even by SIGKILL. An append cut short, for any reason and at any moment (an
OSError, a Ctrl-C raised as the row's write() returns, before the writer could count the bytes), is decided
from the file: none of its row there, it was not appended; all of it, it is committed and an exact retry
returns False; part of it, the writer is poisoned: nothing more is appended after torn bytes.

Containment: the store never follows a symlink below its workspace (see `containment`).
"""

from __future__ import annotations

import operator
import os
import stat
from itertools import accumulate
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..contract import Contract, active
from ..errors import (
    DuplicateEventId,
    LedgerLocked,
    NotALedger,
    TornTail,
)
from ..system.open_files import OpenFileTable
from .bytes import StrPath, file_reader, last_row_end, read_all, row_at
from .committed_file import LEDGER_NAME, open_committed, path_text, run_identity
from .committed_ids import CommittedIds
from .containment import open_directory, open_in, refuse_other_names, split_below
from .ids import check_ledger_id
from .locks import lock_for_writing, unlock
from .reader import CommittedLedger, RunIdentity, decode_rows, scan_ledger
from .row_check import checked_row

if TYPE_CHECKING:
    from .repair import RepairResult

def ledger_path(workspace: StrPath, session_id: str, run_id: str) -> Path:
    """The ledger file of one run, after both ids are checked."""
    return Path(ledger_text(workspace, session_id, run_id))


def ledger_text(workspace: StrPath, session_id: str, run_id: str) -> str:
    """`str(ledger_path(...))`, made without pathlib (an audit opens thousands of runs), after both ids are checked."""
    check_ledger_id("session", session_id)
    check_ledger_id("run", run_id)
    return path_text(os.path.join(workspace, "sessions", session_id, "runs", run_id, LEDGER_NAME))


def read_ledger(
    path: StrPath,
    *,
    refuse_live: bool | OpenFileTable = False,
    run: RunIdentity | None = None,
    workspace: StrPath | None = None,
    directory_fd: int | None = None,
    contract: Contract | None = None,
) -> CommittedLedger:
    """Read a ledger strictly, writing nothing; anything illegal raises LedgerCorruption.

    Only an existing regular file is a ledger (an empty one is the empty prefix): a missing path or a dangling
    symlink raises LedgerMissing, a directory or FIFO NotALedger. `run` is the (sessionId, runId) every row
    must carry; without it, the run directory's when the file sits at `sessions/<S>/runs/<R>/...`, else the
    first row's. With `workspace`, no step of the path below it may be a symlink (EscapesWorkspace).
    With `refuse_live` and `directory_fd`, see `open_committed`.
    """
    path = Path(path)
    with open_committed(path, refuse_live=refuse_live, workspace=workspace, directory_fd=directory_fd) as fd:
        data = read_all(fd)
    contract = contract or active()
    events, rows = decode_rows(path, data, run=run or run_identity(path.absolute()), model=contract.model, tolerate=contract.table.tolerated)
    return CommittedLedger(path, events, rows)


class _Writer:
    """An open, locked ledger: its descriptor, its size, and where the row of each event id already in it starts."""

    def __init__(self, workspace: Path, path: Path, durable: bool, contract: Contract, write_piece_bytes: int | None) -> None:
        Path(workspace).mkdir(parents=True, exist_ok=True)
        directories, name = split_below(workspace, path)
        # Every step opened relative to the one before: no symlink is followed, and none can be swapped in
        # between a check and a use.
        self.directory_fd = open_directory(workspace, directories, create=True)
        self.path = path
        self.durable = durable
        self.model = contract.model
        self.write_piece_bytes = write_piece_bytes
        try:
            self.fd = open_in(self.directory_fd, name, os.O_RDWR | os.O_APPEND | os.O_CREAT, path)
        except BaseException:
            os.close(self.directory_fd)
            raise
        try:
            if not stat.S_ISREG(os.fstat(self.fd).st_mode):
                raise NotALedger(f"{path}: not a regular file")
            refuse_other_names(self.fd, path)
        except BaseException:
            os.close(self.fd)
            os.close(self.directory_fd)
            raise
        if not lock_for_writing(self.fd):
            os.close(self.fd)
            os.close(self.directory_fd)
            raise LedgerLocked(f"{path}: another process is writing this ledger (one writer per ledger)")
        self.poisoned: str | None = None
        # The append under way, (event id, its row and newline), until the writer has recorded it: an exception
        # can cut the bookkeeping short anywhere (a SIGINT is raised just after the write() it landed in
        # returns), so what the file holds decides, by `_settle`.
        self.pending: tuple[str, bytes] | None = None
        self.read_at = file_reader(self.fd)
        try:
            self.size = os.fstat(self.fd).st_size  # the bytes of recorded rows: the file's, unless an append was cut short
            if self.size and self.read_at(self.size - 1, 1) != b"\n":
                torn_at = last_row_end(self.read_at, self.size)
                raise TornTail(f"{path}: the ledger ends in a torn row at byte {torn_at}; run `resume-contract repair` first")
            self.ids = CommittedIds()
            for chunk in scan_ledger(path, self.read_at, self.size, run=run_identity(path), model=self.model):
                self.ids.extend(map(_EVENT_ID, chunk.events), accumulate(map(len, chunk.lines[:-1]), _after_newline, initial=chunk.offset))
            self.ids.seal()
        except BaseException:
            self.close()
            raise
        if durable:
            os.fsync(self.directory_fd)

    def append(self, event: Any) -> bool:
        if self.pending is not None:
            self._settle(None)
        if self.poisoned is not None:
            raise TornTail(self.poisoned)
        row = checked_row(self.path, event, self.model)
        for offset in self.ids.offsets_of(event.id):
            committed = self.model.decode_row(row_at(self.read_at, offset, self.size))
            if committed.id == event.id:
                # An exact retry is the same event, whoever wrote the row: canonical encodings are compared.
                if self.model.encode(committed) == row:
                    return False
                raise DuplicateEventId(f"{self.path}: event id {event.id!r} is already in the ledger with different content")
        payload = row + b"\n"
        self.pending = (event.id, payload)
        try:
            piece = self.write_piece_bytes or len(payload)
            written = 0
            while written < len(payload):
                written += os.write(self.fd, payload[written : written + piece])
            if self.durable:
                os.fsync(self.fd)
        except BaseException as error:
            self._settle(error)
            raise
        self._record()
        return True

    def _record(self) -> None:
        # In an order that a cut anywhere leaves settleable: the file's size against `size` says what is left.
        assert self.pending is not None
        event_id, payload = self.pending
        self.ids.add(event_id, self.size)
        self.size += len(payload)
        self.pending = None

    def _settle(self, error: BaseException | None) -> None:
        """Decide an append its bookkeeping did not finish from what reached the file: none of the row (it was
        not appended), all of it (it is committed, and an exact retry returns False), or part (the writer is
        poisoned: nothing more is appended after torn bytes until `repair`)."""
        assert self.pending is not None
        payload = self.pending[1]
        length = len(payload)
        reached = os.fstat(self.fd).st_size - self.size
        if reached == 0:
            self.pending = None
            return
        if reached == length:
            if self.read_at(self.size, length) == payload:  # the writer holds the lock: its own row, whole
                if self.durable:
                    os.fsync(self.fd)
                self._record()
                return
        cause = "interrupted" if error is None else type(error).__name__ + (f": {error}" if str(error) else "")
        self.poisoned = f"{self.path}: an append failed after {reached} of {length} bytes ({cause}); run `resume-contract repair`"
        self.pending = None

    def close(self) -> None:
        if self.fd >= 0:
            try:
                unlock(self.fd)
            finally:
                os.close(self.fd)
                os.close(self.directory_fd)
                self.fd = -1


_EVENT_ID = operator.attrgetter("id")


def _after_newline(offset: int, length: int) -> int:
    return offset + length + 1


class RuntimeEventStore:
    """Appends to, reads and repairs the ledgers under one workspace.

    `write_piece_bytes` hands each row to the OS in pieces of at most that many bytes, the way a signal or a
    slow device splits a large write: the crash harness uses it so that a kill can land mid-row. None (the
    default, and always outside the harness): one piece.
    """

    def __init__(
        self, workspace: StrPath, *, durable: bool = False, contract: Contract | None = None, write_piece_bytes: int | None = None
    ) -> None:
        self.workspace = Path(workspace)
        self.durable = durable
        self.contract = contract or active()
        self.write_piece_bytes = write_piece_bytes
        self._writers: dict[Path, _Writer] = {}

    def __enter__(self) -> RuntimeEventStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def path(self, session_id: str, run_id: str) -> Path:
        return ledger_path(self.workspace, session_id, run_id)

    def append(self, event: Any) -> bool:
        """Commit one event to its run's ledger; return False when it was an exact retry already committed.

        Returns only once the whole row is written (the commit point). What is written is exactly one row that
        the reader reads back as this very event: an event it would not (free JSON that is not one compact
        JSON value, a NaN, a value outside the wire format) raises EventRefused. Raises InvalidLedgerId,
        LedgerLocked, TornTail, DuplicateEventId, EventRefused or LedgerCorruption, having written nothing.
        """
        event_type: Any = self.contract.model.event_type
        if not isinstance(event, event_type):
            raise TypeError(f"append takes a RuntimeEvent, not {type(event).__name__}")
        return self.hold(event.session_id, event.run_id).append(event)

    def hold(self, session_id: str, run_id: str) -> _Writer:
        """Open and lock one run's ledger now (created empty) if it is not yet: from then on the run is live."""
        path = self.path(session_id, run_id)
        if path not in self._writers:
            self._writers[path] = _Writer(self.workspace, path, self.durable, self.contract, self.write_piece_bytes)
        return self._writers[path]

    def read(self, session_id: str, run_id: str) -> CommittedLedger:
        """The committed events of one run's JSONL ledger (never writes; a missing ledger is LedgerMissing)."""
        return read_ledger(self.path(session_id, run_id), run=(session_id, run_id), workspace=self.workspace, contract=self.contract)

    def repair(self, session_id: str, run_id: str) -> RepairResult:
        """Move a torn tail to a quarantine file beside the ledger, then truncate to the last complete row."""
        from .repair import repair_ledger  # (a plan reads through this module, and never repairs)

        return repair_ledger(self.path(session_id, run_id), durable=self.durable, workspace=self.workspace)

    def close(self) -> None:
        for writer in self._writers.values():
            writer.close()
        self._writers.clear()
