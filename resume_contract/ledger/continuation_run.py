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
from ..core.continuation_planner import decide_from_run
from ..errors import LedgerMissing, NoContinuationDecision, NotALedger, RunHeaderUnreadable
from .bytes import StrPath
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
    try:
        ledger = read_run(workspace, session_id, run_id, refuse_live=True, contract=contract)
        events, rows = ledger.events, ledger.rows
    except (LedgerMissing, NotALedger, PermissionError):
        events, rows = None, None
    others = {
        entry.name: other
        for entry in sorted(os.scandir(run_dir.parent), key=lambda entry: entry.name)
        if entry.name != run_id and entry.is_dir(follow_symlinks=False)
        and (other := read_header(Path(entry.path) / HEADER_NAME)) is not None
    }
    return decide_from_run(header, events, others, host, ids or fresh_ids(), contract.table, table, rows=rows)


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
