"""A workspace's canonical SQLite store, `WS/runtime.sqlite`, read exactly as the reference's read-only reader
reads it (its `openRuntimeEventReadPersistence` and `readRuntimeEvents`), and never written.

The store (reference schema `user_version` 12): `runtime_events(event_id PK, session_id, invocation_id, run_id,
turn_id, event_seq, event_kind, payload_json, committed_at)`, one row per RuntimeEvent, `payload_json` the whole
event as canonical JSON; `runtime_partial_snapshots` and `runtime_partial_segments`, the open streams' partial
events (mutable presentation state). A run's ledger is its rows `ORDER BY event_seq, event_id`, with its partial
snapshots merged in: they count in the high-water and are never replayed (they are partial events).

Safe beside a live runtime, and it changes nothing:
- The database is opened read-only (`mode=ro`, and `query_only`), and every row of a run (its events, snapshots
  and segments) is read in ONE read transaction: a consistent snapshot even while the runtime commits in WAL mode.
  A read transaction never takes a write lock; a database busy past `BUSY_TIMEOUT` seconds is `StoreBusy`.
- A read-only open of a WAL database creates `-wal` and `-shm` files beside it. Unless both are there (a runtime
  has the database open, or was killed: they are used as it left them), nothing is in a WAL, and the file is read
  as immutable instead, which creates nothing; the read is kept only if, afterwards, the side files and the
  file's size, times and inode are as they were (a writer that came and went meanwhile changed them: the run is
  read again, as it now is). A `-journal` beside it holding anything (a rollback-mode writer mid-transaction, or one
  cut off in it) is refused; an empty one, which SQLite does not roll back, is not.

What this tool refuses (never a plan, never a traceback): a file that is not a SQLite database, another
`user_version`, a runtime table that is missing or not a table, a missing column (`StoreUnreadable`, exit 2); a
row whose payload is NULL, not JSON or not a RuntimeEvent, whose `event_seq` is not an integer, or whose identity
columns differ from its payload's, and a repeated event id (`StoreRowCorruption`, exit 3, naming the row).
A partial snapshot that does not decode, or whose columns or stream key differ from its payload, is skipped, as
the reference skips it.
"""

from __future__ import annotations

import operator
import os
import sqlite3
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import msgspec

from ..contract import Contract, active
from ..core.visible import escape
from ..errors import DUPLICATE_EVENT_ID, INVALID_UTF8, LedgerCorruption, RowRefused, StoreBusy, StoreUnreadable
from .bytes import StrPath
from .reader import CommittedLedger, decode_payloads
from .sqlite_damage import bound, check_invocations, check_kinds, check_tool_facts, check_totals, read_operations
from .sqlite_layout import HEADER as _HEADER
from .sqlite_layout import STORE_NAME, side_files, store_path
from .sqlite_partials import merged_partials, read_partial

USER_VERSION = 12  # the reference's runtime schema version: any other is refused, as the reference refuses it
BUSY_TIMEOUT = 5.0  # seconds a locked database is waited for
IDENTITY_MISMATCH = "identity_mismatch"
_TABLES = ("runtime_events", "runtime_partial_snapshots", "runtime_partial_segments")
_TABLES_QUERY = f"SELECT name, type FROM sqlite_master WHERE name IN {_TABLES!r}"
_RUNS_QUERY = (
    "SELECT CAST(session_id AS BLOB), CAST(run_id AS BLOB), typeof(session_id), typeof(run_id) FROM runtime_events UNION "
    "SELECT CAST(session_id AS BLOB), CAST(run_id AS BLOB), typeof(session_id), typeof(run_id) FROM runtime_partial_snapshots "
    "ORDER BY 1, 2"
)
_IDENTITY = (("id", "event_id"), ("sessionId", "session_id"), ("invocationId", "invocation_id"), ("runId", "run_id"), ("turnId", "turn_id"))


def _surrogates(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def _let_signals_in() -> int:
    return 0  # (a pending signal's handler runs here, in Python, and its exception aborts the query)


class StoreRowCorruption(LedgerCorruption):
    """A row of the store that is not a legal committed event: named by its event id and its place in the run."""

    in_store = True  # (what to do next differs: a store has no torn tail to move aside)

    def __str__(self) -> str:
        where, _, detail = self.detail.partition("\n")
        return f"{self.path}: {where}: {self.kind}: {detail}"

    @classmethod
    def of_row(cls, path: Path, run: tuple[str, str], index: int, event_id: str, seq: Any, kind: str, detail: str) -> StoreRowCorruption:
        """`index`: the event's place in the run (1 is its first); `seq`: its event_seq ("-" for a snapshot)."""
        where = f"session {run[0]!r}, run {run[1]!r}, event {index} (event_id {event_id!r}, event_seq {seq!r})"
        return cls(path, index, 0, kind, f"{where}\n{escape(detail)}")


@dataclass(frozen=True)
class _Stat:
    ino: int
    size: int
    mtime: int
    ctime: int


def _stat(path: Path) -> _Stat:
    status = os.lstat(path)
    if stat.S_ISLNK(status.st_mode):
        raise StoreUnreadable(f"{path}: a symlink; the store is read only where the workspace keeps it, never through a link")
    if not stat.S_ISREG(status.st_mode):
        raise StoreUnreadable(f"{path}: not a regular file")
    return _Stat(status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)


class SqliteStore:
    """A workspace's `runtime.sqlite`, opened read-only. Use as a context manager, or `close` it."""

    def __init__(self, workspace: StrPath, *, contract: Contract | None = None, busy_timeout: float = BUSY_TIMEOUT) -> None:
        self.path = store_path(workspace)
        self.contract = contract or active()
        self.busy_timeout = busy_timeout
        self._connection: sqlite3.Connection | None = None
        self._immutable = False
        self._opened_as: _Stat | None = None
        self._beside: dict[str, int] = {}
        self._checked = False

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    # -- opening ---------------------------------------------------------------------------------------------

    def _connect(self, immutable: bool) -> sqlite3.Connection:
        uri = f"file:{quote(os.fsencode(os.path.abspath(self.path)))}?mode=ro" + ("&immutable=1" if immutable else "")
        try:
            connection = sqlite3.connect(uri, uri=True, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as error:
            raise StoreUnreadable(f"{self.path}: cannot be opened read-only: {escape(error)}") from None
        if not immutable:  # (an immutable open cannot write at all)
            try:
                connection.execute("PRAGMA query_only = 1")
            except sqlite3.Error as error:
                connection.close()
                raise self._refusal(error) from None
        # Python runs a signal's handler only between its own steps: a long query gives it one every 100,000 SQLite
        # steps, so Ctrl-C and SIGTERM stop a read (the handler's exception aborts the query and is raised again).
        connection.set_progress_handler(_let_signals_in, 100_000)
        return connection

    def _open(self) -> sqlite3.Connection:
        if self._connection is None:
            before = _stat(self.path)
            with open(self.path, "rb") as file:
                if file.read(len(_HEADER)) != _HEADER:
                    raise StoreUnreadable(f"{self.path}: not a SQLite database (no SQLite header); this tool reads the runtime's {STORE_NAME}")
            present = side_files(self.path)
            if present.get("-journal", 0) > 0:  # (the file may hold half a transaction until it is rolled back; an empty one is not)
                raise StoreBusy(f"{self.path}-journal is beside the store: a writer is mid-transaction in rollback-journal mode, "
                                "or was cut off in one; plan again once the runtime is idle (or has opened the workspace again)")
            if present.get("-wal", 0) > 0 and "-shm" not in present:
                raise StoreUnreadable(
                    f"{self.path}-wal holds transactions but {self.path}-shm is missing (a writer in exclusive locking mode, "
                    "or one whose -shm was removed): reading it would create a file beside the store; plan once the runtime "
                    "has stopped, or plan a copy of the files"
                )
            # Live (with the runtime's own -wal and -shm) only when both are there; else nothing is in a WAL, and the
            # file is read as immutable, which creates nothing, then proven unchanged.
            self._immutable = not ("-wal" in present and "-shm" in present)
            self._opened_as = before
            self._beside = present
            self._connection = self._connect(self._immutable)
        return self._connection

    def _still_immutable(self) -> bool:
        """After an immutable read: nothing opened the database meanwhile (else the read is made again, live)."""
        return side_files(self.path) == self._beside and _stat(self.path) == self._opened_as

    def _refusal(self, error: sqlite3.Error | UnicodeDecodeError) -> Exception:
        if isinstance(error, UnicodeDecodeError):
            return StoreUnreadable(f"{self.path}: not a database this tool reads: text SQLite keeps is not UTF-8 even where "
                                   "no row names it (its schema): a damaged file; keep it as evidence, and plan a backup or a copy the runtime rebuilt")
        text = escape(error)  # (SQLite's message can quote a column's bytes)
        if text.startswith(("no such table", "no such column")):  # (the reads name every table and column they need)
            return StoreUnreadable(f"{self.path}: {text}: not a runtime store this tool reads")
        if "locked" in text or "busy" in text:
            return StoreBusy(f"{self.path}: the database stayed locked for {self.busy_timeout:g} s ({text}); try again once the runtime is idle")
        if "not a database" in text or "malformed" in text:
            return StoreUnreadable(f"{self.path}: not a database this tool reads: {text}")
        return StoreUnreadable(f"{self.path}: {text}")

    def _snapshot(self, read: Any) -> Any:
        """`read(connection)` run in one read transaction; an immutable read checked afterwards (made again live)."""
        for _ in range(4):
            connection = self._open()
            live = not self._immutable  # (an immutable read is one snapshot by itself: the file, proven unchanged after)
            try:
                if live:
                    connection.execute("BEGIN")
                try:
                    if not self._checked:
                        self._check_schema(connection)
                    result = read(connection)
                finally:
                    if live:
                        connection.execute("COMMIT")
            except (sqlite3.Error, UnicodeDecodeError) as error:  # (text SQLite hands over that is not UTF-8: either)
                if self._immutable and not self._still_immutable():  # a writer came meanwhile: what was read is not the file
                    self.close()
                    continue
                undecodable = isinstance(error, UnicodeDecodeError) or "Could not decode to UTF-8" in str(error)
                if undecodable and connection.text_factory is str:
                    connection.text_factory = _surrogates  # read again: the column's bytes reach the checks, which name the row
                    continue
                raise self._refusal(error) from None
            if not self._immutable or self._still_immutable():
                self._checked = True
                return result
            self.close()  # opened again as it now is: live beside its -wal, or immutable again as of now
        raise StoreBusy(f"{self.path}: changed while it was read, each time it was read; try again")

    def _check_schema(self, connection: sqlite3.Connection) -> None:
        (version,) = connection.execute("PRAGMA user_version").fetchone()
        if version != USER_VERSION:
            raise StoreUnreadable(
                f"{self.path}: SQLite runtime schema {escape(version)} (PRAGMA user_version); this tool reads schema {USER_VERSION}, "
                f"as the reference's reader does: a schema {escape(version)} store needs the runtime that wrote it"
            )
        kinds = dict(connection.execute(_TABLES_QUERY).fetchall())
        for table in _TABLES:  # a view in a table's place could compute rows without end
            if kinds.get(table) != "table":
                found = f"a {escape(kinds[table])}, not a table" if table in kinds else "no such table"
                raise StoreUnreadable(f"{self.path}: {table}: {found}: not a runtime store this tool reads")
    # -- reading ---------------------------------------------------------------------------------------------

    def runs(self) -> list[tuple[str, str]]:
        """Every (session, run) of the store, as the reference lists a workspace's runs, in order (those whose ids
        are not text are left out: `listing` names them)."""
        return [(session, run) for session, run, problem in self.listing() if problem is None]

    def listing(self) -> list[tuple[str, str, str | None]]:
        """Every (session, run, problem) of the store, in order: the runs of `runtime_events` and
        `runtime_partial_snapshots`, as the reference lists them; `problem` says why a run's ids cannot be a run's
        (a session_id or run_id stored as a BLOB, NULL or number, or text that is not UTF-8), else None."""
        def read(connection: sqlite3.Connection) -> list[tuple[Any, ...]]:
            check_totals(self.path, connection)  # (a damaged index could leave a run out of the listing)
            return connection.execute(_RUNS_QUERY).fetchall()

        listed = []
        for session, run, session_type, run_type in self._snapshot(read):
            problem = None
            names = []
            for column, value, kind in (("session_id", session, session_type), ("run_id", run, run_type)):
                try:
                    names.append(value.decode("utf-8") if kind == "text" else repr(value))
                except UnicodeDecodeError:
                    names.append(value.decode("utf-8", "surrogateescape"))
                    kind = "text that is not UTF-8"
                if kind != "text" and problem is None:
                    problem = f"its {column} is stored as {kind}, not text: its rows belong to no run the runtime reads"
            listed.append((names[0], names[1], problem))
        return listed

    def read(self, query: Any) -> Any:
        """`query(connection)`, a read of the caller's own (`sqlite_headers`), in one read transaction, checked as
        every read of the store is (schema, a writer meanwhile)."""
        return self._snapshot(query)

    def read_run(self, session_id: str, run_id: str) -> CommittedLedger:
        """One run's committed events (rows and partial snapshots merged), read in one read transaction."""
        run = (session_id, run_id)
        rows, snapshots, operations = self._snapshot(lambda connection: _run_rows(self.path, connection, run))
        return self._ledger(run, rows, snapshots, operations)

    def _ledger(self, run: tuple[str, str], rows: list[tuple[Any, ...]], snapshots: list[tuple[Any, ...]], operations: list[tuple[Any, ...]]) -> CommittedLedger:
        label = f"{self.path} (session {run[0]}, run {run[1]})"
        payloads = [row[-1] for row in rows]
        events = self._decode(run, rows, payloads)
        session_id, run_id = run  # (the rows' session_id and run_id columns: the query selects them equal to these)
        identities = [(event_id, session_id, invocation_id, run_id, turn_id) for event_id, invocation_id, turn_id, _, _, _ in rows]
        if list(map(_IDENTITY_OF, events)) != identities:  # (compared at C speed; the row is found below)
            for index, (event, row, identity) in enumerate(zip(events, rows, identities), 1):
                for (key, column), attribute, value in zip(_IDENTITY, _IDENTITY_FIELDS, identity):
                    if getattr(event, attribute) != value:
                        raise StoreRowCorruption.of_row(
                            self.path, run, index, row[0], row[3], IDENTITY_MISMATCH,
                            f"the row's {column} is {value!r} but its payload's {key} is {getattr(event, attribute)!r}",
                        )
        check_kinds(self.path, run, rows, events, kind_at=4)  # (a damaged payload or column: the store's copies disagree)
        check_tool_facts(self.path, run, operations, events)
        raw_rows = list(map(msgspec.Raw, payloads))
        if snapshots:
            model = self.contract.model
            found = [partial for partial in (read_partial(snapshot, model, self.path) for snapshot in snapshots) if partial is not None]
            events, raw_rows = merged_partials(events, raw_rows, found)
        # (rows: the primary key; a snapshot may repeat one; a contract that diagnoses it plans it, `Walk.flag_rows`)
        if len({event.id for event in events}) != len(events) and DUPLICATE_EVENT_ID not in self.contract.table.tolerated:
            _refuse_repeated_id(self.path, run, events)
        return CommittedLedger(label, tuple(events), tuple(raw_rows))

    def _decode(self, run: tuple[str, str], rows: list[tuple[Any, ...]], payloads: list[bytes]) -> list[Any]:
        model = self.contract.model
        sound = all(type(row[3]) is int for row in rows) and all(type(payload) is bytes for payload in payloads)
        decoded = decode_payloads(payloads, model) if sound else None
        if decoded is not None:
            return decoded
        events: list[Any] = []
        for index, (row, payload) in enumerate(zip(rows, payloads), 1):
            if type(row[3]) is not int:
                raise StoreRowCorruption.of_row(self.path, run, index, row[0], row[3], "invalid_event", "its event_seq is not an integer")
            if payload is None:
                raise StoreRowCorruption.of_row(self.path, run, index, row[0], row[3], "invalid_json", "its payload_json is NULL")
            try:
                if not payload.isascii():
                    payload.decode("utf-8")  # (as a JSONL chunk is checked before it is decoded)
                events.append(model.decode_row(payload))
            except UnicodeDecodeError as error:
                detail = f"invalid UTF-8 at byte {error.start} of its payload_json"
                raise StoreRowCorruption.of_row(self.path, run, index, row[0], row[3], INVALID_UTF8, detail) from None
            except RowRefused as refused:
                raise StoreRowCorruption.of_row(self.path, run, index, row[0], row[3], refused.kind, refused.detail) from None
        return events


_IDENTITY_FIELDS = ("id", "session_id", "invocation_id", "run_id", "turn_id")
_IDENTITY_OF = operator.attrgetter(*_IDENTITY_FIELDS)


def _refuse_repeated_id(path: Path, run: tuple[str, str], events: list[Any]) -> None:
    """The run (its rows and snapshots merged) repeats an event id: name the second event that has it."""
    first: dict[str, int] = {}
    for index, event in enumerate(events, 1):
        if event.id in first:
            detail = f"its event id is already event {first[event.id]}'s (a partial snapshot, or a row, repeats it)"
            raise StoreRowCorruption.of_row(path, run, index, event.id, "-", DUPLICATE_EVENT_ID, detail)
        first[event.id] = index


def _run_rows(path: Path, connection: sqlite3.Connection, run: tuple[str, str]) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    rows = connection.execute(
        # (the payload as the bytes stored: decoded by the strict reader, which refuses invalid UTF-8 as corruption)
        "SELECT event_id, invocation_id, turn_id, event_seq, event_kind, CAST(payload_json AS BLOB) FROM runtime_events "
        "WHERE session_id = ? AND run_id = ? ORDER BY event_seq, event_id",
        run,
    ).fetchall()
    check_invocations(path, connection, run, rows)  # (in the same read transaction: a hidden row is found by the other index)
    snapshots = connection.execute(
        "SELECT stream_key, session_id, invocation_id, run_id, turn_id, after_event_id, CAST(payload_json AS BLOB), text_content, updated_at "
        "FROM runtime_partial_snapshots WHERE session_id = ? AND run_id = ? ORDER BY updated_at, stream_key",
        run,
    ).fetchall()
    with_segments = []
    for snapshot in snapshots:
        segments = [segment for (segment,) in connection.execute(
            "SELECT text_content FROM runtime_partial_segments WHERE stream_key = CAST(? AS TEXT) ORDER BY segment_seq", (bound(snapshot[0]),)
        )]
        with_segments.append((*snapshot, segments))
    return rows, with_segments, read_operations(connection, rows)


