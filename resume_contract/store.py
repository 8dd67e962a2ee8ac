"""The file-backed RuntimeEventStore: one append-only JSONL ledger per run, crash-safe and strict.

Layout: `<workspace>/sessions/<sessionId>/runs/<runId>/runtime-events.jsonl`.

Commit point: `append` returns only after the whole row, newline included, has been handed to the OS through
one O_APPEND descriptor. A process killed after that keeps the row (the page cache survives the process); a
process killed during the write leaves a torn tail, which reading reports as corruption and never as a fact.
Power-loss durability is beyond Phase 0: `durable=True` also fsyncs the file and its directory.

One writer per ledger: the writer holds an exclusive `flock` on the ledger file for as long as it is open, so
a second writer fails at once, and the kernel drops the lock when the writer dies, even by SIGKILL.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from .events import RuntimeEvent, encode_event
from .reader import (
    CORRUPTION_KINDS,
    DUPLICATE_EVENT_ID,
    FOREIGN_ROW,
    INVALID_UTF8,
    TORN_ROW,
    CommittedLedger,
    LedgerCorruption,
    RunIdentity,
    decode_ledger,
    decode_rows,
)
from .wire import DUPLICATE_KEY, INVALID_EVENT, INVALID_JSON

__all__ = [
    "CORRUPTION_KINDS",
    "DUPLICATE_EVENT_ID",
    "DUPLICATE_KEY",
    "FOREIGN_ROW",
    "INVALID_EVENT",
    "INVALID_JSON",
    "INVALID_UTF8",
    "TORN_ROW",
    "CommittedLedger",
    "LedgerCorruption",
    "RuntimeEventStore",
    "decode_ledger",
    "read_ledger",
    "repair_ledger",
]

LEDGER_NAME = "runtime-events.jsonl"
_ID_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,128}")

# Crash-harness hook: hand each row to the OS in pieces of at most this many bytes, the way a signal or a
# slow device splits a large write, so a kill can land mid-row. None (always, outside the harness): one piece.
WRITE_PIECE_BYTES: int | None = None

if sys.platform == "win32":  # pragma: no cover - CI here is Linux; the branch keeps the store portable
    import msvcrt

    def _try_lock(fd: int, exclusive: bool) -> bool:
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK if exclusive else msvcrt.LK_NBRLCK, 1)
            return True
        except OSError:
            return False

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(fd: int, exclusive: bool) -> bool:
        try:
            fcntl.flock(fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
            return True
        except OSError as error:
            if error.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                return False
            raise

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


class StoreError(Exception):
    """Base class of the store's refusals."""


class InvalidLedgerId(StoreError, ValueError):
    """A session or run id that could leave the workspace or is not a plain name."""


class LedgerLocked(StoreError):
    """Another live writer (or repair) holds this ledger."""


class LedgerInUse(StoreError):
    """A live writer holds the ledger: it is a running run, not a crashed one, and may end mid-row."""


class TornTail(StoreError):
    """The ledger ends mid-row; appends are refused until `repair` quarantines the torn bytes."""


class DuplicateEventId(StoreError):
    """A different event with an id already in the ledger."""


@dataclass(frozen=True)
class RepairResult:
    """What `repair` did: where the torn bytes went and how many, or nothing when there was no torn tail."""

    path: Path
    quarantine: Path | None
    torn_bytes: int
    committed_bytes: int


def check_ledger_id(kind: str, value: str) -> str:
    """Refuse anything but `^[A-Za-z0-9_-]{1,128}$`, before any path is built from it."""
    if not isinstance(value, str) or _ID_PATTERN.fullmatch(value) is None:
        raise InvalidLedgerId(f"invalid {kind} id {value!r}: must match ^[A-Za-z0-9_-]{{1,128}}$")
    return value


def ledger_path(workspace: Path, session_id: str, run_id: str) -> Path:
    """The ledger file of one run, after both ids are checked."""
    check_ledger_id("session", session_id)
    check_ledger_id("run", run_id)
    return Path(workspace) / "sessions" / session_id / "runs" / run_id / LEDGER_NAME


class LedgerMissing(StoreError, FileNotFoundError):
    """An explicit ledger path that does not exist: a typo must never read as an empty, safe prefix."""


def run_identity(path: Path) -> RunIdentity | None:
    """(sessionId, runId) of a ledger stored at `.../sessions/<S>/runs/<R>/runtime-events.jsonl`, else None."""
    parts = Path(path).parts
    if len(parts) >= 5 and parts[-1] == LEDGER_NAME and parts[-3] == "runs" and parts[-5] == "sessions":
        return parts[-4], parts[-2]
    return None


def read_ledger(path: Path, *, refuse_live: bool = False, run: RunIdentity | None = None) -> CommittedLedger:
    """Read a ledger strictly, writing nothing; anything illegal raises LedgerCorruption.

    Only an existing file is a ledger (an empty one is the empty prefix): a missing path or a dangling
    symlink raises LedgerMissing. `run` is the (sessionId, runId) every row must carry; without it, the
    run directory's when the file sits at `sessions/<S>/runs/<R>/runtime-events.jsonl`, else the first row's. With `refuse_live`, a ledger whose writer is still alive raises LedgerInUse instead of
    being read: its last row may be in flight, and a running run is not a crashed one. (The check takes and
    at once releases a shared lock, so it never holds up a writer; it changes neither the bytes nor the mtime.)
    """
    path = Path(path)
    try:
        if refuse_live and _has_live_writer(path):
            raise LedgerInUse(f"{path}: a live process is writing this ledger; plan it once that process has stopped")
        data = path.read_bytes()
    except FileNotFoundError:
        if os.path.lexists(path):
            raise LedgerMissing(f"{path}: a symlink to a file that does not exist") from None
        raise LedgerMissing(f"{path}: no such ledger") from None
    events, rows = decode_rows(path, data, run=run or run_identity(path.absolute()))
    return CommittedLedger(path, events, rows)


def _has_live_writer(path: Path) -> bool:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        if not _try_lock(fd, exclusive=False):
            return True
        _unlock(fd)
        return False
    finally:
        os.close(fd)


class _Writer:
    """An open, locked ledger: its descriptor and the digests of the rows already in it, by event id."""

    def __init__(self, path: Path, durable: bool) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.durable = durable
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o644)
        if not _try_lock(self.fd, exclusive=True):
            os.close(self.fd)
            raise LedgerLocked(f"{path}: another process is writing this ledger (one writer per ledger)")
        self.poisoned: str | None = None
        try:
            data = path.read_bytes()
            if data and not data.endswith(b"\n"):
                torn_at = data.rfind(b"\n") + 1
                raise TornTail(f"{path}: the ledger ends in a torn row at byte {torn_at}; run `resume-contract repair` first")
            events, rows = decode_rows(path, data, run=run_identity(path))
            self.digests = {event.id: _row_digest(event, row) for event, row in zip(events, rows)}
        except BaseException:
            self.close()
            raise
        if durable:
            _fsync_directory(path.parent)

    def append(self, event: RuntimeEvent) -> bool:
        if self.poisoned is not None:
            raise TornTail(self.poisoned)
        row = encode_event(event)
        digest = _digest(row)
        existing = self.digests.get(event.id)
        if existing is not None:
            if existing == digest:
                return False  # an exact retry of a committed event
            raise DuplicateEventId(f"{self.path}: event id {event.id!r} is already in the ledger with different content")
        payload = row + b"\n"
        written = 0
        try:
            piece = WRITE_PIECE_BYTES or len(payload)
            while written < len(payload):
                written += os.write(self.fd, payload[written : written + piece])
            if self.durable:
                os.fsync(self.fd)
        except OSError as error:
            if written:
                self.poisoned = f"{self.path}: an append failed after {written} of {len(payload)} bytes ({error}); run `resume-contract repair`"
            raise
        self.digests[event.id] = digest
        return True

    def close(self) -> None:
        if self.fd >= 0:
            try:
                _unlock(self.fd)
            finally:
                os.close(self.fd)
                self.fd = -1


def _digest(row: bytes) -> bytes:
    return hashlib.blake2b(row, digest_size=16).digest()


def _row_digest(event: RuntimeEvent, row: object) -> bytes:
    # An exact retry is the same event, whoever wrote the row: compare canonical encodings. A row whose
    # strings hold lone surrogates has none; its own bytes stand in (a retry then differs, and is refused).
    try:
        return _digest(encode_event(event))
    except UnicodeEncodeError:
        return _digest(bytes(row))  # type: ignore[call-overload]


def _fsync_directory(directory: Path) -> None:
    if sys.platform == "win32":  # pragma: no cover - directories cannot be fsynced there
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class RuntimeEventStore:
    """Appends to, reads and repairs the ledgers under one workspace."""

    def __init__(self, workspace: Path, *, durable: bool = False) -> None:
        self.workspace = Path(workspace)
        self.durable = durable
        self._writers: dict[Path, _Writer] = {}

    def __enter__(self) -> RuntimeEventStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def path(self, session_id: str, run_id: str) -> Path:
        return ledger_path(self.workspace, session_id, run_id)

    def append(self, event: RuntimeEvent) -> bool:
        """Commit one event to its run's ledger; return False when it was an exact retry already committed.

        Returns only once the whole row is written (the commit point). Raises InvalidLedgerId, LedgerLocked,
        TornTail, DuplicateEventId or LedgerCorruption, having written nothing.
        """
        if not isinstance(event, RuntimeEvent):
            raise TypeError(f"append takes a RuntimeEvent, not {type(event).__name__}")
        path = self.path(event.session_id, event.run_id)
        writer = self._writers.get(path)
        if writer is None:
            writer = self._writers[path] = _Writer(path, self.durable)
        return writer.append(event)

    def read(self, session_id: str, run_id: str) -> CommittedLedger:
        """The committed events of one run's JSONL ledger (never writes; a missing ledger is LedgerMissing)."""
        return read_ledger(self.path(session_id, run_id), run=(session_id, run_id))

    def repair(self, session_id: str, run_id: str) -> RepairResult:
        """Move a torn tail to a quarantine file beside the ledger, then truncate to the last complete row."""
        return repair_ledger(self.path(session_id, run_id), durable=self.durable)

    def close(self) -> None:
        for writer in self._writers.values():
            writer.close()
        self._writers.clear()


def repair_ledger(path: Path, *, durable: bool = True) -> RepairResult:
    """Quarantine a torn tail; nothing is lost (the bytes are kept) and nothing else is changed."""
    path = Path(path)
    fd = os.open(path, os.O_RDWR | getattr(os, "O_BINARY", 0))
    try:
        if not _try_lock(fd, exclusive=True):
            raise LedgerLocked(f"{path}: a live process is writing this ledger; stop it before repairing")
        data = path.read_bytes()
        committed = data.rfind(b"\n") + 1
        if committed == len(data):
            return RepairResult(path, None, 0, len(data))
        torn = data[committed:]
        quarantine = path.with_name(f"{path.name}.torn-{committed}-{hashlib.sha256(torn).hexdigest()[:12]}")
        with open(quarantine, "xb") as handle:
            handle.write(torn)
            handle.flush()
            os.fsync(handle.fileno())
        _fsync_directory(path.parent)
        os.ftruncate(fd, committed)
        if durable:
            os.fsync(fd)
        return RepairResult(path, quarantine, len(torn), committed)
    finally:
        try:
            _unlock(fd)
        finally:
            os.close(fd)
