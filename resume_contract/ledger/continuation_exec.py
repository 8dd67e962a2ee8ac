"""Executing a continuation through the real stores: re-validate, claim, start, run, end, seal.

`prepare_continuation` plans the source (`plan_continuation`) and keeps what execution re-validates against:
the source's header and ledger identity as read then. `ContinuationExecution` takes the lifecycle's executor
transitions (spec/lifecycle.yaml, on the generated python-statemachine class): each step first moves the
machine, so a step out of order raises TransitionNotAllowed before it writes anything, then writes:

- `revalidate()`: immediately before the claim, ContinuationRejected with the reference's stable code when the
  source's identity, terminal status, cwd, ledger file, high-water or replay changed since planning, the host's
  workspace identity, background settlement, tool catalog or checkpoint differ from the plan's snapshot,
  another continuation claims the source (its claim file, or a run header naming the source at this high-water),
  or the target run exists. Nothing is written.
- `claim()`: first, before anything else is written for the new run, claims the source at its high-water: one
  exclusive, atomic create of `sessions/<S>/claims/<source run>@<high-water>` naming the new run
  (`run_headers.claim_source`). Whatever runs concurrently, one claimer wins it; a loser is
  `continuation_claim_conflict` (`target_run_conflict` when the claim there names its own run id), with nothing
  written. Then it locks the new run's ledger (so the run is live from here) and creates its header exclusively
  (`status: created`, `parentRunId`, `parentTurnId`, `continuationSource`). A header already there is
  `target_run_conflict`, and nothing else happens.
- `start()`: the continuation-start event; `run(events)`: the run's own events; `end(event)`: its terminal
  event; `seal()`: the terminal header, agreeing with the terminal event.

The source ledger is only ever read. Where a run loop crosses each crash boundary is its own business: the
reference one (`crash/continuation_loop.py`) calls `failpoints.hit("<boundary id>")` after each step's writes.
"""

from __future__ import annotations

import datetime
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..contract import Contract, active, build_resume_plan
from ..core.continuation import ContinuationPlan
from ..core.continuation_lifecycle import claim_header, start_event, terminal_header
from ..core.continuation_planner import committed_terminal_events
from ..errors import (
    ContinuationRejected,
    EscapesWorkspace,
    LedgerLocked,
    NoContinuationDecision,
    RunHeaderExists,
    RunHeaderUnreadable,
)
from .bytes import StrPath
from .continuation_run import plan_continuation
from .run_headers import ClaimTaken, RunHeaderStore, claim_source, read_claim
from .store import RuntimeEventStore
from .workspace import read_run


@dataclass(frozen=True)
class PreparedContinuation:
    """A `continue` plan and what execution re-validates against: the source header and ledger file as planned."""

    session_id: str
    source_run_id: str
    plan: ContinuationPlan
    source_header: Mapping[str, Any]
    source_ledger: tuple[int, int]  # (st_dev, st_ino) of the source's JSONL ledger

    @property
    def continuation(self) -> dict[str, Any]:
        assert self.plan.continuation is not None
        return self.plan.continuation


def prepare_continuation(
    workspace: StrPath, session_id: str, run_id: str, host: Any, ids: Mapping[str, str] | None = None, *, contract: Contract | None = None
) -> PreparedContinuation | ContinuationPlan:
    """Plan the source; a `continue` plan comes back prepared for execution, a `park` plan as it is."""
    contract = contract or active()
    header = RunHeaderStore(workspace).read_or_none(session_id, run_id)
    plan = plan_continuation(workspace, session_id, run_id, host, ids, contract=contract)
    if plan.disposition != contract_proceed(contract) or plan.continuation is None or header is None:
        return plan
    stat = os.stat(RuntimeEventStore(workspace, contract=contract).path(session_id, run_id))
    return PreparedContinuation(session_id, run_id, plan, dict(header), (stat.st_dev, stat.st_ino))


def contract_proceed(contract: Contract) -> str:
    table = contract.continuation
    if table is None:
        raise NoContinuationDecision(f"the contract {contract.identity} declares no continuation decision (spec/continuation.yaml)")
    return str(table.proceed)


def now_iso() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class ContinuationExecution:
    """One continuation run, executed step by step through the lifecycle's executor transitions."""

    def __init__(self, workspace: StrPath, prepared: PreparedContinuation, host: Mapping[str, Any], *, contract: Contract | None = None) -> None:
        self.workspace = Path(workspace)
        self.prepared = prepared
        self.host = host
        self.contract = contract or active()
        if self.contract.continuation_boundaries is None:
            raise NoContinuationDecision(f"the contract {self.contract.identity} declares no continuation lifecycle (spec/lifecycle.yaml)")
        self.lifecycle = self.contract.lifecycle_class()()
        self.headers = RunHeaderStore(self.workspace)
        self.events = RuntimeEventStore(self.workspace, contract=self.contract)
        continuation = prepared.continuation
        self.session_id, self.run_id = continuation["sessionId"], continuation["runId"]
        self.header: dict[str, Any] | None = None
        self.terminal: Any = None

    def __enter__(self) -> ContinuationExecution:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.events.close()

    # -- re-validation ----------------------------------------------------------------------------------------
    def revalidate(self) -> None:
        """ContinuationRejected (its stable code) unless the source and the host are still as planned."""
        prepared, continuation = self.prepared, self.prepared.continuation
        snapshot = continuation.get("safetySnapshot") or {}
        planned = prepared.source_header
        try:
            header = self.headers.read(prepared.session_id, prepared.source_run_id)
        except RunHeaderUnreadable as error:
            raise ContinuationRejected("source_identity_changed", f"the source's header cannot be read now: {error}") from None
        identity = {"sessionId": "sessionId", "runId": "sourceRunId", "invocationId": "sourceInvocationId", "turnId": "sourceTurnId"}
        for field, planned_field in identity.items():
            if header.get(field) != continuation[planned_field]:
                _reject("source_identity_changed", f"the source header's {field} is {header.get(field)!r}, planned {continuation[planned_field]!r}")
        if header.get("status") != planned.get("status"):
            _reject("source_terminal_changed", f"the source's status is {header.get('status')!r}, planned {planned.get('status')!r}")
        if header.get("cwd") != planned.get("cwd"):
            _reject("source_cwd_changed", f"the source's cwd is {header.get('cwd')!r}, planned {planned.get('cwd')!r}")
        path = self.events.path(prepared.session_id, prepared.source_run_id)
        try:
            stat = os.stat(path)
        except FileNotFoundError:
            raise ContinuationRejected("source_ledger_identity_changed", f"{path}: the source's ledger is gone") from None
        if (stat.st_dev, stat.st_ino) != prepared.source_ledger:
            _reject("source_ledger_identity_changed", f"{path}: the source's ledger is another file than the one planned")
        ledger = read_run(self.workspace, prepared.session_id, prepared.source_run_id, refuse_live=True, contract=self.contract)
        high_water = continuation["sourceRuntimeEventHighWater"]
        if len(ledger.events) != high_water:
            _reject("source_high_water_changed", f"the source has {len(ledger.events)} committed events, planned {high_water}")
        replay = build_resume_plan(ledger.events, rows=ledger.rows, contract=self.contract).replay_runtime_events
        if [bytes(row) for row in replay] != [bytes(row) for row in continuation["runtimeContext"]]:
            _reject("source_replay_changed", "the source's replay is no longer the planned runtimeContext")
        self._revalidate_host(snapshot)
        self._revalidate_claims(high_water)

    def _revalidate_host(self, snapshot: Mapping[str, Any]) -> None:
        host = self.host
        if host.get("currentWorkspaceIdentity") != snapshot.get("workspaceIdentity"):
            _reject("workspace_identity_changed", f"the workspace is {host.get('currentWorkspaceIdentity')!r}, planned {snapshot.get('workspaceIdentity')!r}")
        if host.get("backgroundOperationsSettled") is not True:
            _reject("background_operation_started", "a background operation is running in the workspace")
        tools = sorted(set(host.get("availableToolNames") or ()))
        if tools != list(snapshot.get("availableToolNames") or ()):
            _reject("tool_catalog_changed", f"the tools are {tools}, planned {list(snapshot.get('availableToolNames') or ())}")
        checkpoint = host.get("workspaceCheckpoint")
        now = None if checkpoint is None else {"ref": checkpoint.get("ref"), "runtimeEventHighWater": checkpoint.get("runtimeEventHighWater")}
        if now != snapshot.get("workspaceCheckpoint"):
            _reject("workspace_checkpoint_changed", f"the workspace checkpoint is {now}, planned {snapshot.get('workspaceCheckpoint')}")

    def _revalidate_claims(self, high_water: int) -> None:
        prepared = self.prepared
        try:
            claim = read_claim(self.workspace, prepared.session_id, prepared.source_run_id, high_water)
        except (RunHeaderUnreadable, EscapesWorkspace) as error:  # there, so a claim: whose, cannot be known
            raise ContinuationRejected("continuation_claim_conflict", f"{error}; the source is claimed at high-water {high_water}") from None
        if claim is not None:
            self._claimed(claim, high_water)
        for run_id in self.headers.runs(prepared.session_id):
            if run_id == self.run_id:
                _reject("target_run_conflict", f"run {run_id!r} already exists in session {prepared.session_id!r}")
            try:
                other = self.headers.read_or_none(prepared.session_id, run_id)
            except RunHeaderUnreadable:
                continue
            source = (other or {}).get("continuationSource")
            if isinstance(source, dict) and source.get("sourceRunId") == prepared.source_run_id and source.get("sourceRuntimeEventHighWater") == high_water:
                _reject("continuation_claim_conflict", f"run {run_id!r} already continues {prepared.source_run_id!r} at high-water {high_water}")

    # -- the executor's transitions ----------------------------------------------------------------------------
    def claim(self) -> None:
        """Claim the source at its high-water (one exclusive create, before anything else is written for the new
        run), then lock the new run's ledger and create its header."""
        self.lifecycle.send("claim")
        prepared, continuation = self.prepared, self.prepared.continuation
        high_water = continuation["sourceRuntimeEventHighWater"]
        header = claim_header(continuation, prepared.source_header, now_iso())
        claim = {
            "sessionId": self.session_id,
            "runId": self.run_id,
            "invocationId": continuation["invocationId"],
            "turnId": continuation["turnId"],
            "sourceRunId": prepared.source_run_id,
            "sourceRuntimeEventHighWater": high_water,
            "claimedAt": header.get("createdAt") or now_iso(),
        }
        try:
            claim_source(self.workspace, prepared.session_id, prepared.source_run_id, high_water, claim, durable=self.headers.durable)
        except ClaimTaken as taken:
            self._claimed(taken.claim, high_water)
        except FileNotFoundError:
            raise ContinuationRejected("source_identity_changed", f"session {prepared.session_id!r} is gone") from None
        try:
            self.events.hold(self.session_id, self.run_id)
        except LedgerLocked as error:
            raise ContinuationRejected("target_run_conflict", str(error)) from None
        try:
            self.headers.create(self.session_id, self.run_id, header)
        except RunHeaderExists as error:
            raise ContinuationRejected("target_run_conflict", str(error)) from None
        self.header = header

    def _claimed(self, claim: Mapping[str, Any] | None, high_water: int) -> None:
        """Reject: the source is claimed at `high_water` (by `claim`, None when it cannot be read)."""
        source = self.prepared.source_run_id
        claimant = None if claim is None else claim.get("runId")
        if claimant == self.run_id:
            _reject("target_run_conflict", f"run {self.run_id!r} already claims {source!r} at high-water {high_water} (another executor with this run id)")
        _reject("continuation_claim_conflict", f"run {claimant!r} already claims {source!r} at high-water {high_water}")

    def start(self) -> None:
        """Commit the continuation-start event, before the provider is called."""
        self.lifecycle.send("start")
        assert self.header is not None
        self._append(start_event(self.header, now_ms()))

    def run(self, events: Sequence[Mapping[str, Any]]) -> None:
        """Commit the run's own events (wire form; their identity is the new run's)."""
        self.lifecycle.send("run")
        for event in events:
            self._append(event)

    def end(self, event: Mapping[str, Any]) -> None:
        """Commit the run's terminal RuntimeEvent."""
        self.lifecycle.send("end")
        decoded = self._append(event)
        if not committed_terminal_events([decoded], self.contract.table):
            raise ValueError(f"event {decoded.id!r} is not a terminal RuntimeEvent")
        self.terminal = decoded

    def seal(self) -> None:
        """Write the terminal header, agreeing with the terminal event."""
        self.lifecycle.send("seal")
        assert self.header is not None and self.terminal is not None
        self.header = terminal_header(self.header, self.terminal, now_iso())
        self.headers.write(self.session_id, self.run_id, self.header)

    def identity(self) -> dict[str, Any]:
        """The fields every event of the new run carries."""
        assert self.header is not None
        return {name: self.header[name] for name in ("sessionId", "invocationId", "runId", "turnId")}

    def _append(self, wire: Mapping[str, Any]) -> Any:
        event = self.contract.model.event_from_wire(dict(wire))
        self.events.append(event)
        return event


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def _reject(code: str, message: str) -> None:
    raise ContinuationRejected(code, message)
