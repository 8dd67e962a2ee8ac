"""The planner form of the continuation decision over a workspace run: read its header (`run.json`), its ledger
(as Phase 0 reads a run: snapshots merged) and its session's other runs' headers, then decide
(`core.continuation_planner`). A missing workspace, session or run is LedgerMissing (a usage error, as for
`plan`); a run.json that cannot be read as a JSON object, or a ledger that cannot be read, is a decision (park),
not an error; a corrupt ledger raises LedgerCorruption (never a decision)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..contract import Contract, active
from ..core.continuation import ContinuationPlan
from ..core.continuation_planner import decide_from_run, decide_latest
from ..errors import LedgerMissing, NoContinuationDecision, NotALedger, RunHeaderUnreadable
from .bytes import StrPath
from .containment import check_contained
from .ids import check_ledger_id, is_ledger_id
from .run_headers import HEADER_NAME, read_header_file
from .workspace import read_run, run_directory


def plan_continuation(
    workspace: StrPath,
    session_id: str,
    run_id: str,
    host: Any,
    ids: Mapping[str, str] | None = None,
    *,
    contract: Contract | None = None,
) -> ContinuationPlan:
    """Decide whether run `run_id` of `session_id` may be continued, with the host's facts `host` (exactly the
    spec's host inputs: FactsRefused otherwise) and fresh `ids` ({invocationId, runId, turnId}; generated when
    None). Raises LedgerMissing (no such workspace, session or run), LedgerCorruption, LedgerInUse,
    NoContinuationDecision (the contract has no planner form)."""
    contract = contract or active()
    table = contract.continuation
    if table is None or table.planner is None:
        raise NoContinuationDecision(f"the contract {contract.identity} declares no continuation planner (spec/continuation.yaml `planner`)")
    run_dir = run_directory(workspace, session_id, run_id)
    header = read_header(run_dir / HEADER_NAME)
    events, rows = _committed(workspace, session_id, run_id, contract)
    others = {other: found for other, found in _headers(run_dir.parent).items() if other != run_id and found is not None}
    return decide_from_run(header, events, others, host, ids or fresh_ids(), contract.table, table, rows=rows)


def plan_latest_continuation(
    workspace: StrPath,
    session_id: str,
    host: Any,
    ids: Mapping[str, str] | None = None,
    *,
    contract: Contract | None = None,
) -> tuple[str | None, ContinuationPlan]:
    """Pick the session's run to continue as the spec's `planner.candidate` says (the newest interrupted one) and
    decide it: (the run picked, or None when none is a candidate — the decision then parks; the decision). Raises
    LedgerMissing (no such workspace or session), LedgerCorruption, LedgerInUse, FactsRefused,
    NoContinuationDecision (the contract has no planner form, or its planner no `candidate`)."""
    contract = contract or active()
    table = contract.continuation
    if table is None or table.planner is None or "candidate" not in table.planner:
        raise NoContinuationDecision(f"the contract {contract.identity} declares no way to pick a run (spec/continuation.yaml `planner.candidate`)")
    check_ledger_id("session", session_id)
    workspace = Path(workspace)
    session_dir = workspace / "sessions" / session_id
    if not workspace.is_dir():
        raise LedgerMissing(f"{workspace}: no such workspace directory")
    if not session_dir.is_dir():
        raise LedgerMissing(f"{workspace}: no session {session_id!r} (no directory sessions/{session_id})")
    check_contained(workspace, session_dir / "runs")
    headers = _headers(session_dir / "runs")
    return decide_latest(
        headers, lambda run_id: _committed(workspace, session_id, run_id, contract), host, ids or fresh_ids(), contract.table, table
    )


def _committed(workspace: StrPath, session_id: str, run_id: str, contract: Contract) -> tuple[Any, Any]:
    """A run's committed (events, rows), or (None, None) when its ledger cannot be read (a decision, not an error)."""
    try:
        ledger = read_run(workspace, session_id, run_id, refuse_live=True, contract=contract)
    except (LedgerMissing, NotALedger, PermissionError):
        return None, None
    return ledger.events, ledger.rows


def _headers(runs: Path) -> dict[str, dict[str, Any] | None]:
    """{run id: its header, or None when unreadable} of every run directory under `runs` (none: no runs yet)."""
    try:
        entries = sorted(os.scandir(runs), key=lambda entry: entry.name)
    except FileNotFoundError:
        return {}
    # A directory whose name is not a run id is not a run (as the audit skips it).
    return {
        entry.name: read_header(Path(entry.path) / HEADER_NAME)
        for entry in entries
        if entry.is_dir(follow_symlinks=False) and is_ledger_id(entry.name)
    }


def fresh_ids() -> dict[str, str]:
    """New invocation, run and turn ids (random: never a source's)."""
    return {name: f"{prefix}-{uuid.uuid4().hex}" for name, prefix in (("invocationId", "invocation"), ("runId", "run"), ("turnId", "turn"))}


def read_header(path: Path) -> dict[str, Any] | None:
    """A run header: the JSON object in `path`, or None when it is missing, a symlink or not a regular file,
    unreadable, too large, not JSON (a repeated key included) or not an object (`run_headers.read_header_file`,
    whose error says which; to the planner, each is an unreadable header)."""
    try:
        return read_header_file(path)
    except RunHeaderUnreadable:
        return None
