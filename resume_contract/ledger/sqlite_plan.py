"""Plan a run of a workspace's `runtime.sqlite`: the store read as `sqlite_store` reads it (read-only, in one read
transaction), planned by the contract as a JSONL ledger is (`plan_run` and `read_run` come here for a workspace
that holds the store; the audit is `audit.audit_store`)."""

from __future__ import annotations

import os

from ..contract import Contract, active, build_resume_plan
from ..core.plan import ResumePlan
from ..errors import LedgerMissing
from .bytes import StrPath
from .ids import is_ledger_id
from .reader import CommittedLedger
from .sqlite_store import SqliteStore


def read_store_run(workspace: StrPath, session_id: str, run_id: str, *, contract: Contract | None = None) -> CommittedLedger:
    """One run of the store, its partial snapshots merged; LedgerMissing when the store has no row of it."""
    with SqliteStore(workspace, contract=contract) as store:
        ledger = store.read_run(session_id, run_id)
        if not ledger.events and (session_id, run_id) not in store.runs():  # (a run of snapshots all skipped is a run)
            sessions = {session for session, _ in store.runs()}
            where = f"session {session_id!r} has no run {run_id!r}" if session_id in sessions else f"no session {session_id!r}"
            jsonl = os.path.join(workspace, "sessions", session_id, "runs", run_id, "runtime-events.jsonl")
            held = is_ledger_id(session_id) and is_ledger_id(run_id) and os.path.isfile(jsonl)  # (ids that name no step up)
            beside = f"; {jsonl} is beside the store, the ledger of a JSONL store no longer read here: plan it as a file" if held else ""
            raise LedgerMissing(f"{store.path}: {where} (no row of it in runtime_events or runtime_partial_snapshots){beside}")
    return ledger


def plan_store_run(
    workspace: StrPath, session_id: str, run_id: str, expected_high_water: int | None = None, *, contract: Contract | None = None
) -> ResumePlan:
    """The plan of one run of the workspace's `runtime.sqlite`, as `plan_run` plans a JSONL run."""
    contract = contract or active()
    ledger = read_store_run(workspace, session_id, run_id, contract=contract)
    return build_resume_plan(ledger.events, expected_high_water, rows=ledger.rows, contract=contract)
