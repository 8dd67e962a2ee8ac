"""The project's own SQLite RuntimeEventStore: writes a workspace's `runtime.sqlite` as the reference's store
commits it, so the crash harness can kill a real writer inside and after each of its transactions.

The schema is the reference's runtime schema (its `runtime_events`, partial snapshot and tool tables, as a
database its writers wrote holds them), `PRAGMA user_version = 12`, WAL, `synchronous = FULL`. Every write is one
transaction, `BEGIN IMMEDIATE ... COMMIT`:
- `append(event)`: the generic lane, one event;
- `commit_tool_prepared(call)` (T1): the function_call event, its `tool_operations` row and the `prepared`
  journal row, together;
- `commit_tool_outcome(response)` (T2): the function_response event, the operation's outcome and its journal row.
`inside` is called inside T1 and T2 after their writes and before COMMIT (the crash harness's hook: a kill there
must leave the state before the transaction). Events are encoded as the reader reads them back (canonical JSON,
keys sorted), `event_seq` counts from 1 per invocation.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..contract import Contract, active
from ..errors import EventRefused, StoreUnreadable
from .bytes import StrPath
from .sqlite_damage import stored_kind
from .sqlite_layout import store_path
from .sqlite_store import USER_VERSION

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS runtime_events (
      event_id TEXT PRIMARY KEY, session_id TEXT NOT NULL, invocation_id TEXT NOT NULL, run_id TEXT NOT NULL,
      turn_id TEXT NOT NULL, event_seq INTEGER NOT NULL CHECK (event_seq > 0), event_kind TEXT NOT NULL,
      payload_json TEXT NOT NULL, committed_at INTEGER NOT NULL, UNIQUE (invocation_id, event_seq))""",
    "CREATE INDEX IF NOT EXISTS runtime_events_by_run ON runtime_events(session_id, run_id, event_seq)",
    "CREATE INDEX IF NOT EXISTS runtime_events_by_session ON runtime_events(session_id, committed_at, event_id)",
    """CREATE TABLE IF NOT EXISTS tool_journal_events (
      journal_seq INTEGER PRIMARY KEY AUTOINCREMENT, journal_event_id TEXT NOT NULL UNIQUE, operation_id TEXT NOT NULL,
      invocation_id TEXT NOT NULL, run_id TEXT NOT NULL, turn_id TEXT NOT NULL, state TEXT NOT NULL, runtime_event_id TEXT,
      canonical_args_hash TEXT, recovery_mode TEXT, external_handle TEXT, metadata_json TEXT, committed_at INTEGER NOT NULL,
      FOREIGN KEY(runtime_event_id) REFERENCES runtime_events(event_id))""",
    "CREATE INDEX IF NOT EXISTS tool_journal_events_by_operation ON tool_journal_events(operation_id, journal_seq)",
    """CREATE TABLE IF NOT EXISTS tool_operations (
      operation_id TEXT PRIMARY KEY, invocation_id TEXT NOT NULL, run_id TEXT NOT NULL, turn_id TEXT NOT NULL,
      provider_tool_call_id TEXT NOT NULL, tool_name TEXT NOT NULL, canonical_args_hash TEXT NOT NULL,
      recovery_mode TEXT NOT NULL, current_state TEXT NOT NULL, call_event_id TEXT NOT NULL, result_event_id TEXT,
      version INTEGER NOT NULL CHECK (version > 0), dispatch_event_id TEXT REFERENCES runtime_events(event_id),
      FOREIGN KEY(call_event_id) REFERENCES runtime_events(event_id), FOREIGN KEY(result_event_id) REFERENCES runtime_events(event_id),
      UNIQUE(invocation_id, provider_tool_call_id))""",
    """CREATE TABLE IF NOT EXISTS runtime_partial_snapshots (
      stream_key TEXT PRIMARY KEY, session_id TEXT NOT NULL, invocation_id TEXT NOT NULL, run_id TEXT NOT NULL,
      turn_id TEXT NOT NULL, after_event_id TEXT, payload_json TEXT NOT NULL, text_content TEXT NOT NULL, updated_at INTEGER NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS runtime_partial_snapshots_by_run ON runtime_partial_snapshots(session_id, run_id, updated_at, stream_key)",
    """CREATE TABLE IF NOT EXISTS runtime_partial_segments (
      stream_key TEXT NOT NULL, segment_seq INTEGER NOT NULL CHECK (segment_seq > 0), text_content TEXT NOT NULL,
      updated_at INTEGER NOT NULL, PRIMARY KEY (stream_key, segment_seq),
      FOREIGN KEY (stream_key) REFERENCES runtime_partial_snapshots(stream_key) ON DELETE CASCADE)""",
)

Hook = Callable[[], None]


def _nothing() -> None:
    return None


class SqliteRuntimeEventStore:
    """A workspace's runtime.sqlite, opened for writing (created with the runtime schema when absent)."""

    def __init__(self, workspace: StrPath, *, contract: Contract | None = None) -> None:
        self.contract = contract or active()
        self.path = store_path(workspace)
        Path(workspace).mkdir(parents=True, exist_ok=True)
        self._connection = sqlite3.connect(self.path, isolation_level=None, timeout=10)
        connection = self._connection
        (version,) = connection.execute("PRAGMA user_version").fetchone()
        fresh = connection.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0
        if not fresh and version != USER_VERSION:
            connection.close()
            raise StoreUnreadable(f"{self.path}: SQLite runtime schema {version}; this store writes schema {USER_VERSION}")
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA synchronous = FULL")
        connection.execute("PRAGMA foreign_keys = ON")
        if fresh:
            connection.execute("BEGIN IMMEDIATE")
            for statement in SCHEMA:
                connection.execute(statement)
            connection.execute(f"PRAGMA user_version = {USER_VERSION}")
            connection.execute("COMMIT")

    def __enter__(self) -> SqliteRuntimeEventStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._connection.close()

    def append(self, event: Any) -> None:
        """One event on the generic lane, in its own transaction."""
        self._transaction([event], [], _nothing)

    def commit_tool_prepared(self, call: Any, inside: Hook = _nothing) -> None:
        """T1: the function_call, its operation and the `prepared` journal row, in one transaction."""
        operation = _operation(call)
        values = (operation, call.invocation_id, call.run_id, call.turn_id, call.content.id, call.content.name, _args_hash(call),
                  "never_auto_retry", "prepared", call.id, None, 1, None)
        rows = [("INSERT INTO tool_operations VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", values), _journal(call, operation, "prepared")]
        self._transaction([call], rows, inside)

    def commit_tool_outcome(self, response: Any, inside: Hook = _nothing) -> None:
        """T2: the function_response, its operation's outcome and the journal row, in one transaction."""
        operation = _operation(response)
        rows = [
            ("UPDATE tool_operations SET current_state = 'outcome_committed', result_event_id = ?, version = version + 1 "
             "WHERE operation_id = ?", (response.id, operation)),
            _journal(response, operation, "outcome_committed"),
        ]
        self._transaction([response], rows, inside)

    def _transaction(self, events: list[Any], rows: list[tuple[str, tuple[Any, ...]]], inside: Hook) -> None:
        connection = self._connection
        connection.execute("BEGIN IMMEDIATE")
        try:
            for event in events:
                self._insert(event)
            for statement, values in rows:
                connection.execute(statement, values)
            inside()
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise

    def _insert(self, event: Any) -> None:
        payload = json.dumps(json.loads(self.contract.model.encode(event)), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        (seq,) = self._connection.execute("SELECT coalesce(max(event_seq), 0) + 1 FROM runtime_events WHERE invocation_id = ?",
                                          (event.invocation_id,)).fetchone()
        kind = stored_kind(event)  # (the reference's writer derives the column from the event: the reader compares them)
        try:
            self._connection.execute(
                "INSERT INTO runtime_events VALUES (?,?,?,?,?,?,?,?,?)",
                (event.id, event.session_id, event.invocation_id, event.run_id, event.turn_id, seq, kind, payload, int(event.ts)),
            )
        except sqlite3.IntegrityError as error:
            raise EventRefused(f"{self.path}: event {event.id!r} refused: {error}") from None


def _operation(event: Any) -> str:
    return f"{event.run_id}:{event.content.id}"


def _args_hash(call: Any) -> str:
    import hashlib

    return "sha256:" + hashlib.sha256(bytes(call.content.args)).hexdigest()


def _journal(event: Any, operation: str, state: str) -> tuple[str, tuple[Any, ...]]:
    return (
        "INSERT INTO tool_journal_events (journal_event_id, operation_id, invocation_id, run_id, turn_id, state, runtime_event_id, "
        "canonical_args_hash, recovery_mode, committed_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
        (f"{operation}_{state}", operation, event.invocation_id, event.run_id, event.turn_id, state, event.id, None, "never_auto_retry", int(event.ts)),
    )
