"""The SIGKILL harness over the SQLite store: kill the SQLite run loop inside or after a transaction of the
tool-boundary protocol, reopen the database with a new store, plan it twice.

Per case (spec/failpoints.yaml `sqlite`): a temporary workspace; the SQLite run loop (the packaged
`sqlite_runloop.py` or the project's) runs the canonical script with RESUME_FAILPOINTS=<boundary>=kill and dies
there by SIGKILL; a new SqliteRuntimeEventStore reopens the workspace (as the runtime's restart does: SQLite
recovers its WAL, and the store's integrity must hold); then the run is planned twice through the read-only reader
(`plan --workspace`'s), whose plans must be equal and of exactly the boundary's committed prefix, and the reader
must leave the database's bytes and mtime unchanged and create no file beside it.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import tempfile
from pathlib import Path

import msgspec

from ..contract import Contract, active
from ..ledger.sqlite_layout import store_path
from ..ledger.sqlite_plan import plan_store_run, read_store_run
from ..ledger.sqlite_writer import SqliteRuntimeEventStore
from .harness import CrashObservation, _child, _fingerprint, canonical_prefix

PACKAGED_SQLITE_RUN_LOOP = Path(__file__).with_name("sqlite_runloop.py")


def sqlite_run_loop_of(contract: Contract) -> Path:
    """The SQLite run loop the spec names (spec/failpoints.yaml `sqlite.run_loop`), or the packaged one."""
    named = contract.file(getattr(contract.catalog, "SQLITE_RUN_LOOP", None))
    return PACKAGED_SQLITE_RUN_LOOP if named is None else named


def run_sqlite_case(boundary: str, outcome: str, prefix: str, *, contract: Contract | None = None) -> CrashObservation:
    """Kill the SQLite run loop at `boundary`, reopen, plan twice; what was observed (`problems`: what did not hold)."""
    contract = contract or active()
    catalog = contract.catalog
    observation = CrashObservation(boundary, outcome, prefix)
    observation.committed_ids = tuple(event.id for event in canonical_prefix(outcome, prefix, contract))
    run_loop = sqlite_run_loop_of(contract)
    with tempfile.TemporaryDirectory(prefix=f"sqlite-{boundary}-") as scratch:
        workspace = Path(scratch) / "workspace"
        environment = {**os.environ, "RESUME_FAILPOINTS": f"{boundary}=kill"}
        child = _child([sys.executable, str(run_loop), str(workspace), outcome], contract, environment=environment)
        try:
            observation.problems += child.killed_at("the SQLite run loop", boundary)
        finally:
            child.close()
        observation.child_stderr = child.stderr()
        observation.side_effect_written = (workspace / "side-effects").exists()
        database = store_path(workspace)
        if not database.exists():
            observation.problems.append(f"the SQLite run loop left no {database.name}; stderr: {observation.child_stderr!r}")
            return observation
        with SqliteRuntimeEventStore(workspace, contract=contract) as reopened:  # the runtime's restart: WAL recovered
            integrity = reopened._connection.execute("PRAGMA integrity_check").fetchall()
        if integrity != [("ok",)]:
            observation.problems.append(f"the reopened database fails its integrity check: {integrity!r}")
        before, beside = _fingerprint(database), sorted(os.listdir(workspace))
        session, run = catalog.CANONICAL_SESSION_ID, catalog.CANONICAL_RUN_ID
        try:
            ledger = read_store_run(workspace, session, run, contract=contract)
            first = plan_store_run(workspace, session, run, contract=contract)
            second = plan_store_run(workspace, session, run, contract=contract)
        except (sqlite3.Error, Exception) as error:  # any refusal is the case's finding, named
            observation.problems.append(f"the reopened database could not be planned: {type(error).__name__}: {error}")
            return observation
        observation.reopened_ids = tuple(event.id for event in ledger.events)
        if observation.reopened_ids != observation.committed_ids:
            observation.problems.append(f"reopened ids {list(observation.reopened_ids)} != committed {list(observation.committed_ids)}")
        if first != second or msgspec.json.encode(first) != msgspec.json.encode(second):
            observation.problems.append("planning the reopened database twice gave different plans")
        observation.plan = first
        if _fingerprint(database) != before or sorted(os.listdir(workspace)) != beside:
            observation.problems.append("planning changed the database or created a file beside it")
    return observation
