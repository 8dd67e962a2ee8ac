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
import operator
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import msgspec

from .events import RuntimeEvent, encode_event
from .gcpause import gc_paused

LEDGER_NAME = "runtime-events.jsonl"
_ID_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,128}")

# Crash-harness hook: hand each row to the OS in pieces of at most this many bytes, the way a signal or a
# slow device splits a large write, so a kill can land mid-row. None (always, outside the harness): one piece.
WRITE_PIECE_BYTES: int | None = None
_DECODER = msgspec.json.Decoder(RuntimeEvent)
_UNTYPED = msgspec.json.Decoder()

# Corruption kinds; their names and meanings are the spec's (spec/decisions.yaml, storage_corruption).
TORN_ROW = "torn_row"
INVALID_UTF8 = "invalid_utf8"
INVALID_JSON = "invalid_json"
INVALID_EVENT = "invalid_event"
DUPLICATE_EVENT_ID = "duplicate_event_id"
CORRUPTION_KINDS = (TORN_ROW, INVALID_UTF8, INVALID_JSON, INVALID_EVENT, DUPLICATE_EVENT_ID)

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


class LedgerCorruption(StoreError):
    """A ledger that is not a legal committed prefix; no plan may be made from it."""

    def __init__(self, path: Path, line: int, offset: int, kind: str, detail: str) -> None:
        self.path = path
        self.line = line
        self.offset = offset
        self.kind = kind
        self.detail = detail
        super().__init__(f"{path}:{line}: byte offset {offset}: {kind}: {detail}")


@dataclass(frozen=True)
class CommittedLedger:
    """What a reader may trust: the committed events in order and the high-water (rows, partial included)."""

    path: Path
    events: tuple[RuntimeEvent, ...]

    @property
    def high_water(self) -> int:
        return len(self.events)


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


def read_ledger(path: Path, *, refuse_live: bool = False) -> CommittedLedger:
    """Read a ledger strictly, writing nothing. A missing ledger is empty; anything illegal raises LedgerCorruption.

    With `refuse_live`, a ledger whose writer is still alive raises LedgerInUse instead of being read: its last
    row may be in flight, and a running run is not a crashed one. (The check takes and at once releases a
    shared lock, so it never holds up a writer; it changes neither the bytes nor the mtime.)
    """
    path = Path(path)
    try:
        if refuse_live and _has_live_writer(path):
            raise LedgerInUse(f"{path}: a live process is writing this ledger; plan it once that process has stopped")
        data = path.read_bytes()
    except FileNotFoundError:
        return CommittedLedger(path, ())
    return CommittedLedger(path, decode_ledger(path, data))


def _has_live_writer(path: Path) -> bool:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        if not _try_lock(fd, exclusive=False):
            return True
        _unlock(fd)
        return False
    finally:
        os.close(fd)


def decode_ledger(path: Path, data: bytes) -> tuple[RuntimeEvent, ...]:
    """Decode a whole ledger's bytes; the fast path is one msgspec call, errors are located on a second pass."""
    if not data:
        return ()
    if not data.endswith(b"\n"):
        start = data.rfind(b"\n") + 1
        raise LedgerCorruption(path, data.count(b"\n", 0, start) + 1, start, TORN_ROW, f"the last {len(data) - start} bytes have no terminating newline")
    with gc_paused():
        try:
            events = _DECODER.decode_lines(data)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            _locate_bad_row(path, data)
            raise  # pragma: no cover - _locate_bad_row always raises for data decode_lines rejects
        if len(events) != data.count(b"\n"):
            _locate_bad_row(path, data)  # decode_lines skips blank rows; a blank row is not an event
        _check_unique_ids(path, data, events)
        return tuple(events)


def _rows(data: bytes):
    offset = 0
    line = 1
    while offset < len(data):
        end = data.index(b"\n", offset)
        yield line, offset, data[offset:end]
        offset = end + 1
        line += 1


def _locate_bad_row(path: Path, data: bytes) -> None:
    for line, offset, row in _rows(data):
        try:
            row.decode("utf-8")
        except UnicodeDecodeError as error:
            raise LedgerCorruption(path, line, offset, INVALID_UTF8, f"invalid UTF-8 at byte {offset + error.start}") from None
        try:
            _UNTYPED.decode(row)
        except msgspec.DecodeError as error:
            raise LedgerCorruption(path, line, offset, INVALID_JSON, str(error) if row.strip() else "empty row") from None
        except RecursionError:
            raise LedgerCorruption(path, line, offset, INVALID_JSON, "nested deeper than a ledger row may be") from None
        try:
            _DECODER.decode(row)
        except msgspec.ValidationError as error:
            raise LedgerCorruption(path, line, offset, INVALID_EVENT, str(error)) from None
        except RecursionError:  # pragma: no cover - the untyped decode above fails first
            raise LedgerCorruption(path, line, offset, INVALID_JSON, "nested deeper than a ledger row may be") from None
    raise AssertionError("decode_lines rejected a ledger whose every row decodes")  # pragma: no cover


def _check_unique_ids(path: Path, data: bytes, events: list[RuntimeEvent]) -> None:
    if len(set(map(_EVENT_ID, events))) == len(events):
        return  # the common case, checked at C speed
    seen: set[str] = set()
    for index, event in enumerate(events):
        if event.id in seen:
            line, offset, _ = next(row for row in _rows(data) if row[0] == index + 1)
            first = next(i for i, other in enumerate(events) if other.id == event.id) + 1
            raise LedgerCorruption(path, line, offset, DUPLICATE_EVENT_ID, f"event id {event.id!r} is already on line {first}")
        seen.add(event.id)


_EVENT_ID = operator.attrgetter("id")


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
            self.digests = {event.id: _digest(encode_event(event)) for event in decode_ledger(path, data)}
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
        """The committed events of one run (never writes; a missing ledger is empty)."""
        return read_ledger(self.path(session_id, run_id))

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
