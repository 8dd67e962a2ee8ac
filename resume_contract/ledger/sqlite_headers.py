"""Run headers kept in a workspace's `runtime.sqlite`, as the reference's run store keeps them since its workspace
store (maka's `createSqliteAgentRunStore`): table `core_agent_runs`, one row per (session_id, run_id), the whole
header as JSON in `record_json`. A store of the runtime layout alone has no such table: it keeps no header, and
every run of it reads as one whose header is missing (the continuation parks, as the reference's does).

Read-only, in the store's own read transaction (`SqliteStore.run_headers`); each `record_json` is read as
`run.json` is (`run_headers`): at most MAX_HEADER_BYTES, strict JSON (a repeated key refused), an object.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ..core.wire import python_json
from ..errors import RowRefused, RunHeaderUnreadable
from .run_headers import MAX_HEADER_BYTES

HEADERS_TABLE = "core_agent_runs"
_HAS_TABLE = "SELECT type FROM sqlite_master WHERE name = ?"
_HEADERS = "SELECT CAST(run_id AS BLOB), typeof(run_id), CAST(record_json AS BLOB), typeof(record_json) FROM core_agent_runs WHERE session_id = ? ORDER BY run_id"


def read_run_headers(connection: sqlite3.Connection, session_id: str) -> list[tuple[Any, ...]]:
    """(run_id, its type, record_json, its type) of each header row of `session_id`; none where the store keeps
    no headers. A view in the table's place is refused (it could compute rows without end)."""
    found = connection.execute(_HAS_TABLE, (HEADERS_TABLE,)).fetchone()
    if found is None:
        return []
    if found[0] != "table":
        raise sqlite3.DatabaseError(f"{HEADERS_TABLE}: a {found[0]}, not a table")
    return connection.execute(_HEADERS, (session_id,)).fetchall()


def parsed_headers(where: str, rows: list[tuple[Any, ...]]) -> dict[str, dict[str, Any] | RunHeaderUnreadable]:
    """{run id: its header, or the RunHeaderUnreadable saying why it cannot be read}, from `read_run_headers`'
    rows (a row whose run_id is not text names no run, and is left out)."""
    headers: dict[str, dict[str, Any] | RunHeaderUnreadable] = {}
    for run, run_type, record, record_type in rows:
        if run_type != "text":
            continue
        run_id = bytes(run).decode("utf-8", "surrogateescape")
        label = f"{where} ({HEADERS_TABLE}, run {run_id!r})"
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
