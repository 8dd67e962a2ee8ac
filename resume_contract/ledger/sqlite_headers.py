"""Run headers kept in a workspace's `runtime.sqlite`, as the reference's run store keeps them since its workspace
store (maka's `createSqliteAgentRunStore`): table `core_agent_runs`, one row per (session_id, run_id), the whole
header as JSON in `record_json`. A store of the runtime layout alone has no such table: it keeps no header, and
every run of it reads as one whose header is missing (the continuation parks, as the reference's does).

Read-only, in the store's own read transaction (`SqliteStore.read`); each `record_json` is read as `run.json` is
(`run_headers`): at most MAX_HEADER_BYTES, strict JSON (a repeated key refused), an object.

The store's durable continuation claims (`runtime_continuation_claims`, maka's step 09) are read only to see
whether one names the run decided (`claims_of`): a contract that does not read claims cannot decide a run whose
claim's target run was never written (a continuation begun and cut off), and says so rather than deciding.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ..core.wire import python_json
from ..errors import RowRefused, RunHeaderUnreadable
from .run_headers import MAX_HEADER_BYTES

HEADERS_TABLE = "core_agent_runs"
CLAIMS_TABLE = "runtime_continuation_claims"
_HAS_TABLE = "SELECT type FROM sqlite_master WHERE name = ?"
_HEADERS = "SELECT CAST(run_id AS BLOB), typeof(run_id), CAST(record_json AS BLOB), typeof(record_json) FROM core_agent_runs WHERE session_id = ? ORDER BY run_id"


_CLAIMS = (
    "SELECT CAST(claim_id AS BLOB), CAST(target_run_id AS BLOB), typeof(target_run_id) FROM runtime_continuation_claims "
    "WHERE source_session_id = ? AND source_run_id = ? ORDER BY claim_id"
)


def headers_of(store: Any, session_id: str) -> dict[str, dict[str, Any] | RunHeaderUnreadable]:
    """{run id: header, or the RunHeaderUnreadable saying why not} of a session's runs in `store` (a
    `sqlite_store.SqliteStore`), read in one read transaction."""
    return parsed_headers(str(store.path), store.read(lambda connection: read_run_headers(connection, session_id)))


def claims_of(store: Any, session_id: str, run_id: str) -> list[tuple[str, str | None]]:
    """(claim id, its target run id, or None where it is not text) of each durable claim whose source is the run."""
    def read(connection: sqlite3.Connection) -> list[tuple[Any, ...]]:
        return connection.execute(_CLAIMS, (session_id, run_id)).fetchall() if _table(connection, CLAIMS_TABLE) else []

    return [(bytes(claim or b"").decode("utf-8", "replace"), bytes(target).decode("utf-8", "surrogateescape") if kind == "text" else None) for claim, target, kind in store.read(read)]


def read_run_headers(connection: sqlite3.Connection, session_id: str) -> list[tuple[Any, ...]]:
    """(run_id, its type, record_json, its type) of each header row of `session_id`; none where the store keeps
    no headers."""
    return connection.execute(_HEADERS, (session_id,)).fetchall() if _table(connection, HEADERS_TABLE) else []


def _table(connection: sqlite3.Connection, name: str) -> bool:
    """Whether the store has the table `name`; a view in its place is refused (it could compute rows without end)."""
    found = connection.execute(_HAS_TABLE, (name,)).fetchone()
    if found is not None and found[0] != "table":
        raise sqlite3.DatabaseError(f"{name}: a {found[0]}, not a table")
    return found is not None


def parsed_headers(where: str, rows: list[tuple[Any, ...]]) -> dict[str, dict[str, Any] | RunHeaderUnreadable]:
    """{run id: its header, or the RunHeaderUnreadable saying why it cannot be read}, from `read_run_headers`'
    rows. Any row may be a claim of the run decided, so none is passed over: a row whose run_id is not text is kept
    as unreadable (under a key no run id has), and so is a run with two rows (a table without its primary key)."""
    headers: dict[str, dict[str, Any] | RunHeaderUnreadable] = {}
    for run, run_type, record, record_type in rows:
        run_id = bytes(run).decode("utf-8", "surrogateescape") if run is not None else ""
        if run_type != "text":
            label = f"{where} ({HEADERS_TABLE}, a run_id stored as {run_type}: {run_id!r})"
            headers[f"\x00{run_type} {len(headers)}"] = RunHeaderUnreadable(f"{label}: not a run id the runtime reads")
            continue
        label = f"{where} ({HEADERS_TABLE}, run {run_id!r})"
        if run_id in headers:
            headers[run_id] = RunHeaderUnreadable(f"{label}: two rows for one run (the table's primary key is not there)")
            continue
        headers[run_id] = _header(label, record, record_type)
    return headers


def _header(label: str, record: Any, record_type: str) -> dict[str, Any] | RunHeaderUnreadable:
    if record_type != "text":
        return RunHeaderUnreadable(f"{label}: record_json is stored as {record_type}, not text")
    data = bytes(record)
    if len(data) > MAX_HEADER_BYTES:
        return RunHeaderUnreadable(f"{label}: larger than {MAX_HEADER_BYTES} bytes; not a run header")
    try:
        value = python_json(data)
    except RowRefused as error:
        return RunHeaderUnreadable(f"{label}: record_json is not JSON ({error.detail})")
    if not isinstance(value, dict):
        return RunHeaderUnreadable(f"{label}: record_json is not a JSON object")
    return value
