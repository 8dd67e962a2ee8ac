"""Startup recovery: take every interrupted run of a workspace (its header is not terminal) to a final state of
the continuation's lifecycle (spec/lifecycle.yaml), by its recovery transitions.

For each run with a header that is not terminal: refuse it if it is live (a writer holds its ledger, or has it
open for writing), leaving it untouched; read which lifecycle state its header and events show; then take the
recovery transitions the lifecycle allows from there, in the spec's order, on the generated python-statemachine
class, until a final state: `recover_end` commits a recovered terminal event (only ever to a run that has
none: a run never gets a second one), `recover_seal` writes the header that agrees with its terminal event
(`failed` with `failureClass: app_restarted` for a recovered one). A header is never made terminal without a
terminal event. Running it again finds nothing to do: it is idempotent, and a recovery killed between its two
writes is finished by the next. A run that is the source of a continuation is never written (its header is
terminal, as the planner requires; recovery also checks). A header that cannot be read, lacks an id or names
another run is refused, untouched (the recovered event carries its ids). Everything is contained in the workspace:
a symlink where a run directory belongs (`sessions/<S>/runs/<R>`) is never followed, and is reported refused.

A continuation claims its source before its run exists (`run_headers.claim_source`): a claim whose run was never
created (the claimer died between the two) is reported (`claims`), and left as it is: the claim stands, so the
source is never continued twice. A claim that cannot be read, or a symlinked `claims/`, is reported refused.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..contract import Contract, active
from ..core.continuation_facts import json_type
from ..core.continuation_lifecycle import (
    HEADER_IDS,
    header_kind,
    names_another_run,
    observed_state,
    recovered_terminal_event,
    terminal_header,
)
from ..core.continuation_planner import committed_terminal_events
from ..errors import (
    EscapesWorkspace,
    LedgerCorruption,
    LedgerInUse,
    LedgerLocked,
    LedgerMissing,
    NoContinuationDecision,
    RecoveryRefused,
    RunHeaderUnreadable,
    TornTail,
)
from .bytes import StrPath
from .containment import check_contained, open_directory
from .continuation_exec import now_iso, now_ms
from .ids import check_ledger_id, is_ledger_id
from .run_headers import RunHeaderStore, claims_path, session_claims
from .store import RuntimeEventStore, read_ledger


@dataclass
class RunRecovery:
    """What recovery did to one interrupted run: `outcome` is `recovered`, `live` (refused, untouched), `corrupt`
    (its ledger is: never recovered over; untouched) or `refused` (a state recovery cannot leave, a header that
    is not the run's; untouched), with the steps it took and the header it left."""

    session_id: str
    run_id: str
    state: str | None
    outcome: str
    steps: list[str] = field(default_factory=list)
    header_status: str | None = None
    message: str = ""
    corruption: LedgerCorruption | None = None  # for `corrupt`: what the reader found (the JSON gives its message)

    def as_json(self) -> dict[str, Any]:
        return {
            "sessionId": self.session_id,
            "runId": self.run_id,
            "state": self.state,
            "outcome": self.outcome,
            "steps": list(self.steps),
            "headerStatus": self.header_status,
            "message": self.message,
        }


@dataclass
class ClaimRecovery:
    """A claim of a source (`sessions/<S>/claims/<source>@<high-water>`) recovery reports: `outcome` is
    `claim_without_run` (its claiming run `run_id` has no header: it was never created; the claim stands, untouched)
    or `refused` (the claim, or `claims/`, cannot be read or is a symlink; untouched)."""

    session_id: str
    source_run_id: str | None
    high_water: int | None
    run_id: str | None  # the claiming run, when the claim names one
    outcome: str
    message: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            "sessionId": self.session_id,
            "sourceRunId": self.source_run_id,
            "sourceRuntimeEventHighWater": self.high_water,
            "runId": self.run_id,
            "outcome": self.outcome,
            "message": self.message,
        }


@dataclass
class RecoveryReport:
    runs: list[RunRecovery]
    checked: int  # runs with a header, interrupted or not
    claims: list[ClaimRecovery] = field(default_factory=list)

    @property
    def refused(self) -> list[RunRecovery]:
        return [run for run in self.runs if run.outcome != "recovered"]

    @property
    def claims_refused(self) -> list[ClaimRecovery]:
        return [claim for claim in self.claims if claim.outcome == "refused"]


def recover(workspace: StrPath, session: str | None = None, *, contract: Contract | None = None) -> RecoveryReport:
    """Recover every interrupted run of `workspace` (of one session when given). Raises LedgerMissing when there
    is no such workspace or session, InvalidLedgerId, EscapesWorkspace, NoContinuationDecision (the contract
    declares no lifecycle). A run whose ledger is corrupt is never recovered over: it is reported `corrupt`."""
    contract = contract or active()
    boundaries = contract.continuation_boundaries
    if boundaries is None:
        raise NoContinuationDecision(f"the contract {contract.identity} declares no continuation lifecycle (spec/lifecycle.yaml)")
    workspace = Path(workspace)
    if not workspace.is_dir():
        raise LedgerMissing(f"{workspace}: no such workspace directory")
    headers = RunHeaderStore(workspace)
    sessions = [check_ledger_id("session", session)] if session is not None else _sessions(workspace)
    if session is not None and not (workspace / "sessions" / session).is_dir():
        raise LedgerMissing(f"{workspace}: no session {session!r} (no directory sessions/{session})")
    report = RecoveryReport([], 0)
    for session_id in sessions:
        if not is_ledger_id(session_id):  # no store can address its runs: said, and the other sessions recovered
            where = workspace / "sessions" / session_id
            report.runs.append(RunRecovery(session_id, "", None, "refused", message=f"{where}: not a valid session id (^[A-Za-z0-9_-]{{1,128}}$); its runs are not recovered"))
            continue
        found = dict(_headers(headers, session_id))
        report.checked += len(found)
        for run_id in _linked_runs(workspace, session_id):
            where = workspace / "sessions" / session_id / "runs" / run_id
            report.runs.append(RunRecovery(session_id, run_id, None, "refused", message=f"{where}: a symlink where a run directory belongs; refusing to follow it; not recovered"))
        report.claims.extend(_claims(workspace, session_id, found))
        sources = {
            header["continuationSource"].get("sourceRunId")
            for header in found.values()
            if isinstance(header, dict) and isinstance(header.get("continuationSource"), dict)
        }
        for run_id, header in found.items():
            if isinstance(header, RunHeaderUnreadable):  # its status unknown: it may be an interrupted run
                report.runs.append(RunRecovery(session_id, run_id, None, "refused", message=f"{header}; not recovered"))
                continue
            if header_kind(header) == "terminal":
                continue
            if run_id in sources:
                report.runs.append(RunRecovery(session_id, run_id, None, "refused", message="the source of a continuation: never written"))
                continue
            problem = _header_problem(header, session_id, run_id)
            if problem is not None:
                where = headers.path(session_id, run_id)
                report.runs.append(RunRecovery(session_id, run_id, None, "refused", message=f"{where}: {problem}; not recovered"))
                continue
            try:
                report.runs.append(_recover_run(workspace, session_id, run_id, header, headers, contract))
            except LedgerCorruption as corruption:  # this run only: the others are recovered as ever
                report.runs.append(RunRecovery(session_id, run_id, None, "corrupt", message=str(corruption), corruption=corruption))
    return report


def _header_problem(header: dict[str, Any], session_id: str, run_id: str) -> str | None:
    """Why an interrupted run's header cannot be recovered from, or None. The recovered terminal event is written
    with the header's ids, and a store appends an event to the run its ids name: a header naming another run
    would have recovery write into that one."""
    for name in HEADER_IDS:
        if name not in header:
            return f"the header has no {name!r}"
        if not isinstance(header[name], str):
            return f"the header's {name!r} is {json_type(header[name])}, not a string"
    if names_another_run(header, session_id, run_id):
        return f"the header names session {header['sessionId']!r}, run {header['runId']!r}, not the run whose directory holds it"
    return None


def _sessions(workspace: Path) -> list[str]:
    sessions_dir = workspace / "sessions"
    if not sessions_dir.is_dir():
        return []
    check_contained(workspace, sessions_dir)
    sessions = []
    for entry in sorted(os.scandir(sessions_dir), key=lambda entry: entry.name):
        if entry.is_symlink():
            raise EscapesWorkspace(f"{entry.path}: a symlink inside the workspace; refusing to follow it")
        if entry.is_dir(follow_symlinks=False):
            sessions.append(entry.name)
    return sessions


def _linked_runs(workspace: Path, session_id: str) -> list[str]:
    """The run ids of the session whose `runs/<R>` is a symlink (never followed): each may hold an interrupted run."""
    try:
        fd = open_directory(workspace, ("sessions", session_id, "runs"))
    except (FileNotFoundError, NotADirectoryError):
        return []
    try:
        linked = []
        for name in sorted(os.listdir(fd)):
            try:
                if is_ledger_id(name) and stat.S_ISLNK(os.lstat(name, dir_fd=fd).st_mode):
                    linked.append(name)
            except FileNotFoundError:
                continue
        return linked
    finally:
        os.close(fd)


def _claims(workspace: Path, session_id: str, found: dict[str, Any]) -> list[ClaimRecovery]:
    """The session's claims to report: each whose claiming run has no header (never created), and each that
    cannot be read. Nothing is written: a claim stands."""
    reported: list[ClaimRecovery] = []
    try:
        claims = list(session_claims(workspace, session_id))
    except EscapesWorkspace as error:
        return [ClaimRecovery(session_id, None, None, None, "refused", f"{error}; its claims are not read")]
    for source_run_id, high_water, claim in claims:
        where = claims_path(workspace, session_id) / f"{source_run_id}@{high_water}"
        if isinstance(claim, RunHeaderUnreadable):
            reported.append(ClaimRecovery(session_id, source_run_id, high_water, None, "refused", f"{claim}; the source stays claimed"))
            continue
        run_id = claim.get("runId")
        if not isinstance(run_id, str) or not is_ledger_id(run_id):
            reported.append(ClaimRecovery(session_id, source_run_id, high_water, None, "refused", f"{where}: names no run ({run_id!r}); the source stays claimed"))
            continue
        if run_id in found:
            continue  # the claiming run exists: a claim like any other
        reported.append(ClaimRecovery(
            session_id, source_run_id, high_water, run_id, "claim_without_run",
            f"{where}: claimed by run {run_id!r}, which was never created (no run.json); the claim stands: "
            f"{source_run_id!r} is not continued again at high-water {high_water}",
        ))
    return reported


def _headers(headers: RunHeaderStore, session_id: str) -> Iterator[tuple[str, dict[str, Any] | RunHeaderUnreadable]]:
    """(run id, header) of each run of the session that has a header (or why it cannot be read: never recovered)."""
    for run_id in headers.runs(session_id):
        try:
            yield run_id, headers.read(session_id, run_id)
        except RunHeaderUnreadable as error:
            if not isinstance(error, FileNotFoundError):
                yield run_id, error


def _recover_run(workspace: Path, session_id: str, run_id: str, header: dict[str, Any], headers: RunHeaderStore, contract: Contract) -> RunRecovery:
    boundaries = contract.continuation_boundaries
    assert boundaries is not None
    store = RuntimeEventStore(workspace, contract=contract)
    path = store.path(session_id, run_id)
    try:
        events = _committed(path, workspace, contract)
        store.hold(session_id, run_id)  # the writer's lock, held until recovery is done: no live run is written
        events = _committed(path, workspace, contract, refuse_live=False)  # now that no one else can write
    except (LedgerInUse, LedgerLocked) as error:
        store.close()
        return RunRecovery(session_id, run_id, None, "live", message=str(error))
    except TornTail as error:
        store.close()
        return RunRecovery(session_id, run_id, None, "refused", message=str(error))
    try:
        state = observed_state(header, events, contract.table, boundaries.STATES)
        if state is None:
            raise RecoveryRefused(f"{path.parent}: a header {header.get('status')!r} over these events is no state of the lifecycle")
        if len(committed_terminal_events(events, contract.table)) > 1:
            raise RecoveryRefused(f"{path.parent}: more than one terminal event; not recovered")
        machine = contract.lifecycle_class()(start_value=state)
        result = RunRecovery(session_id, run_id, state, "recovered")
        steps: dict[str, Callable[[], object]] = {
            "recover_end": lambda: store.append(contract.model.event_from_wire(recovered_terminal_event(header, now_ms()))),
            "recover_seal": lambda: _seal(headers, session_id, run_id, header, path, workspace, contract, result),
        }
        while not boundaries.STATES_BY_NAME[machine.current_state_value].final:
            name = _next_recovery(boundaries, machine.current_state_value)
            if name not in steps:
                raise RecoveryRefused(f"{path.parent}: the lifecycle's recovery transition {name!r} has no recovery step")
            machine.send(name)
            steps[name]()
            result.steps.append(name)
        return result
    except RecoveryRefused as error:
        return RunRecovery(session_id, run_id, None, "refused", message=str(error))
    finally:
        store.close()


def _next_recovery(boundaries: Any, state: str) -> str:
    for transition in boundaries.TRANSITIONS:
        if transition.by == "recovery" and state in transition.sources:
            return str(transition.name)
    raise RecoveryRefused(f"no recovery transition leaves the state {state!r}")


def _committed(path: Path, workspace: Path, contract: Contract, *, refuse_live: bool = True) -> list[Any]:
    try:
        return list(read_ledger(path, refuse_live=refuse_live, workspace=workspace, contract=contract).events)
    except LedgerMissing:
        return []


def _seal(headers: RunHeaderStore, session_id: str, run_id: str, header: dict[str, Any], path: Path, workspace: Path, contract: Contract, result: RunRecovery) -> None:
    terminal = committed_terminal_events(list(read_ledger(path, workspace=workspace, contract=contract).events), contract.table)
    if len(terminal) != 1:
        raise RecoveryRefused(f"{path.parent}: a header is made terminal only over exactly one terminal event")
    made = terminal_header(header, terminal[0], now_iso())
    headers.write(session_id, run_id, made)
    result.header_status = made["status"]
