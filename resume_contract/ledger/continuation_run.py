"""The planner form of the continuation decision over a workspace run: read its header (`run.json`), its ledger
(as Phase 0 reads a run: snapshots merged) and its session's other runs' headers, then decide
(`core.continuation_planner`). A missing workspace, session or run is LedgerMissing (a usage error, as for
`plan`); the source's run.json that cannot be read as a JSON object (or names another run), or a ledger that
cannot be read, is a decision (park), not an error; another run's header that cannot be read raises
RunHeaderUnreadable (it may be a claim: no decision is made without it); a corrupt ledger raises LedgerCorruption
(never a decision)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..contract import Contract, active
from ..core.continuation import ContinuationPlan
from ..core.continuation_lifecycle import names_another_run
from ..core.continuation_lineage import ReadRun
from ..core.continuation_planner import decide_from_run, decide_latest
from ..errors import (
    EscapesWorkspace,
    LedgerMissing,
    NoContinuationDecision,
    NotALedger,
    RunHeaderMissing,
    RunHeaderUnreadable,
)
from .bytes import StrPath
from .containment import check_contained
from .ids import check_ledger_id, is_ledger_id
from .run_headers import HEADER_NAME, read_header_file
from .sqlite_headers import claims_of, headers_of
from .sqlite_layout import holds_store
from .sqlite_store import SqliteStore
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
    ids = _checked_ids(ids)
    if holds_store(workspace):  # the headers are rows of the store too (sqlite_headers)
        stored = _stored_headers(workspace, session_id, contract, run_id)
        source = stored.pop(run_id, None)
        header = _own(source, session_id, run_id) if isinstance(source, dict) else None
        others = _readable(stored, session_id)
    else:
        run_dir = run_directory(workspace, session_id, run_id)
        header = _own(read_header(run_dir / HEADER_NAME), session_id, run_id)  # not its own: as unreadable (parks)
        others = _headers(run_dir.parent, session_id, source=run_id)
    events, rows = _committed(workspace, session_id, run_id, contract)
    read = _run_reader(workspace, session_id, contract, others if holds_store(workspace) else None)
    return decide_from_run(header, events, others, host, ids, contract.table, table, rows=rows, read_run=read)


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
    ids = _checked_ids(ids)
    if holds_store(workspace):
        headers = _readable(_stored_headers(workspace, session_id, contract), session_id)
        read = _run_reader(workspace, session_id, contract, headers)
        return decide_latest(headers, _claims_checked(workspace, session_id, headers, contract), host, ids, contract.table, table, read)
    workspace = Path(workspace)
    session_dir = workspace / "sessions" / session_id
    if not workspace.is_dir():
        raise LedgerMissing(f"{workspace}: no such workspace directory")
    if not session_dir.is_dir():
        raise LedgerMissing(f"{workspace}: no session {session_id!r} (no directory sessions/{session_id})")
    check_contained(workspace, session_dir / "runs")
    headers = _headers(session_dir / "runs", session_id)
    read = _run_reader(workspace, session_id, contract, None)
    return decide_latest(headers, lambda run_id: _committed(workspace, session_id, run_id, contract), host, ids, contract.table, table, read)


def _committed(workspace: StrPath, session_id: str, run_id: str, contract: Contract) -> tuple[Any, Any]:
    """A run's committed (events, rows), or (None, None) when its ledger cannot be read (a decision, not an error)."""
    try:
        ledger = read_run(workspace, session_id, run_id, refuse_live=True, contract=contract)
    except (LedgerMissing, NotALedger, PermissionError):
        return None, None
    return ledger.events, ledger.rows


def _run_reader(workspace: StrPath, session_id: str, contract: Contract, stored: Mapping[str, Any] | None) -> ReadRun:
    """The lineage walk's reading of another run of the session: (its header, its committed events), or None when
    either cannot be read (a run that is not there, a name that is no run id, a header that names another run).
    `stored`: the store's headers (a runtime.sqlite workspace), else each run's run.json."""

    def read(run_id: str) -> tuple[Any, Any] | None:
        if not is_ledger_id(run_id):
            return None
        if stored is not None:
            found = stored.get(run_id)
            header = _own(found, session_id, run_id) if isinstance(found, dict) else None
        else:
            try:
                header = _own(read_header(run_directory(workspace, session_id, run_id) / HEADER_NAME), session_id, run_id)
            except LedgerMissing:
                return None
        events = _committed(workspace, session_id, run_id, contract)[0] if header is not None else None
        return None if header is None or events is None else (header, events)

    return read


def _headers(runs: Path, session_id: str, source: str | None = None) -> dict[str, dict[str, Any]]:
    """{run id: its header} of every run directory under `runs` that has one (none: no runs yet), but `source`'s.

    Any of them may be a claim that continues the run being decided, or a newer candidate for `--latest`, so none
    is passed over: a run directory that is a symlink raises EscapesWorkspace, and a header that is there but
    cannot be read, or names another run, raises RunHeaderUnreadable (a run without one is no claim)."""
    try:
        entries = sorted(os.scandir(runs), key=lambda entry: entry.name)
    except FileNotFoundError:
        return {}
    headers: dict[str, dict[str, Any]] = {}
    for entry in entries:
        if entry.name == source or not is_ledger_id(entry.name):  # a name that is no run id is no run (as the audit skips it)
            continue
        if entry.is_symlink():
            raise EscapesWorkspace(f"{entry.path}: a symlink inside the workspace; refusing to follow it")
        if not entry.is_dir(follow_symlinks=False):
            continue
        path = Path(entry.path) / HEADER_NAME
        try:
            header = read_header_file(path)
        except RunHeaderMissing:
            continue
        except RunHeaderUnreadable as error:
            raise RunHeaderUnreadable(f"{error}; whether that run continues this one cannot be known: repair it, then plan again") from None
        if _own(header, session_id, entry.name) is None:
            raise RunHeaderUnreadable(f"{path}: names another run than the one whose directory holds it; repair it, then plan again")
        headers[entry.name] = header
    return headers


def _stored_headers(workspace: StrPath, session_id: str, contract: Contract, run_id: str | None = None) -> dict[str, Any]:
    """The session's headers in the workspace's runtime.sqlite (`SqliteStore.run_headers`). LedgerMissing when
    the store knows neither the run (`run_id`) nor, without one, the session: no header and no row of it."""
    with SqliteStore(workspace, contract=contract) as store:
        headers = headers_of(store, session_id)
        known = headers.keys() | {run for session, run in store.runs() if session == session_id}
        if run_id is None and not known:
            raise LedgerMissing(f"{store.path}: no session {session_id!r} (no run header in core_agent_runs, no row in runtime_events)")
        if run_id is not None and run_id not in known:
            where = f"session {session_id!r} has no run {run_id!r}" if known else f"no session {session_id!r}"
            raise LedgerMissing(f"{store.path}: {where} (no run header in core_agent_runs, no row in runtime_events)")
        if run_id is not None:
            _no_claim_cut_off(store, session_id, run_id, headers)
    return headers


def _no_claim_cut_off(store: SqliteStore, session_id: str, run_id: str, headers: Mapping[str, Any]) -> None:
    """Raise RunHeaderUnreadable (no decision) where a durable claim of the run names a target run the store holds
    no header of: a continuation begun and cut off, which only a contract reading claims can decide (maka's
    step 09 parks it); one whose target has a header is decided by that header, as any continuation is."""
    for claim, target in claims_of(store, session_id, run_id):
        if target is None or target not in headers:
            named = f"run {target!r}, which has no header in core_agent_runs" if target is not None else "a target_run_id that is not text"
            raise RunHeaderUnreadable(
                f"{store.path}: runtime_continuation_claims holds claim {claim!r} of run {run_id!r}, naming {named}: a continuation "
                "was begun and cut off (maka parks it, continuation_claim_repair_required); this contract does not read durable "
                "claims (maka's step 09), so no decision is made: let the runtime repair the claim, then plan again"
            )


def _claims_checked(workspace: StrPath, session_id: str, headers: Mapping[str, Any], contract: Contract) -> Any:
    """--latest's reading of the run it picked: its claims checked (`_no_claim_cut_off`), then its rows."""
    def committed(run_id: str) -> tuple[Any, Any]:
        with SqliteStore(workspace, contract=contract) as store:
            _no_claim_cut_off(store, session_id, run_id, headers)
        return _committed(workspace, session_id, run_id, contract)

    return committed


def _readable(headers: dict[str, Any], session_id: str) -> dict[str, dict[str, Any]]:
    """The store's other headers: each may be a claim of the run decided, so one that cannot be read, or names
    another run, raises RunHeaderUnreadable (as a run.json does, `_headers`)."""
    for run_id, header in headers.items():
        if isinstance(header, RunHeaderUnreadable):
            raise RunHeaderUnreadable(f"{header}; whether that run continues this one cannot be known: repair it, then plan again")
        if _own(header, session_id, run_id) is None:
            raise RunHeaderUnreadable(f"run header {run_id!r} of the store names another run than its row's; repair it, then plan again")
    return headers


def _own(header: dict[str, Any] | None, session_id: str, run_id: str) -> dict[str, Any] | None:
    """`header`, unless it names another session or run than the directory holding it (then None: not its header)."""
    return None if header is None or names_another_run(header, session_id, run_id) else header


def _checked_ids(ids: Mapping[str, str] | None) -> Mapping[str, str]:
    """The continuation's fresh ids (generated when None); its run id names a directory: it must be an id."""
    if ids is None:
        return fresh_ids()
    check_ledger_id("run", ids["runId"])
    return ids


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
