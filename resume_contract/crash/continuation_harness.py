"""The SIGKILL harness of a continuation: kill the reference executor at one crash boundary of
spec/lifecycle.yaml, reopen, plan the source again, recover twice, and observe what is left.

One case: a temporary workspace holding the source run (`continuation_source`); the continuation run loop
(`continuation_loop.py`, or the one the project's spec names) run as a child with
RESUME_FAILPOINTS=<boundary>=kill, which kills itself once that boundary's writes returned; it must die by
SIGKILL and its `finally` marker must be absent; the new run's header and events are read back with new stores
(which lifecycle state they show); planning the source again (`plan_continuation`); recovery, twice (the
second must find nothing to do); then the new run's terminal events and header, and the source ledger's bytes
and mtime, which must be unchanged. The harness observes; `continuation_mismatches` judges an observation
against a boundary's expectations (the catalog's, or the generated tests' literals).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..contract import Contract, active
from ..core.continuation_lifecycle import observed_state
from ..core.continuation_planner import committed_terminal_events
from ..ledger.continuation_run import plan_continuation
from ..ledger.recovery import recover
from ..ledger.run_headers import RunHeaderStore
from ..ledger.store import RuntimeEventStore
from .continuation_source import HOST, IDS, SESSION_ID, SOURCE_RUN_ID, write_source
from .harness import _child, _fingerprint

# The reference continuation executor packaged with resume-contract: the packaged contract's (a project names its own).
PACKAGED_CONTINUATION_LOOP = Path(__file__).with_name("continuation_loop.py")
# The ids planning the source again uses: fresh, so only the existing claim can park it.
REPLAN_IDS = {"invocationId": "invocation-3", "runId": "run-3", "turnId": "turn-3"}


@dataclass
class ContinuationObservation:
    """What one continuation crash case saw; `problems` lists every harness step that did not hold."""

    boundary: str
    state: str | None = None  # the lifecycle state the new run's header and events showed after the kill
    replan_disposition: str | None = None
    replan_reasons: tuple[str, ...] = ()
    recovery_steps: tuple[str, ...] = ()
    terminal_events: tuple[str, ...] = ()  # the statuses of the new run's terminal events after recovery
    header_status: str | None = None
    failure_class: str | None = None
    problems: list[str] = field(default_factory=list)
    child_stderr: str = ""


def continuation_loop_of(contract: Contract) -> Path | None:
    """The run loop holding the continuation executor: the project's (spec/lifecycle.yaml `run_loop`), the
    packaged one for the packaged contract, or None."""
    if contract.root is None:
        return PACKAGED_CONTINUATION_LOOP
    boundaries = contract.continuation_boundaries
    return None if boundaries is None else contract.file(boundaries.RUN_LOOP)


def run_continuation_case(boundary: str, *, contract: Contract | None = None, run_loop: Path | None = None) -> ContinuationObservation:
    """Kill the continuation executor at `boundary` and observe replanning and recovery (see the module)."""
    contract = contract or active()
    observation = ContinuationObservation(boundary)
    run_loop = run_loop or continuation_loop_of(contract)
    if run_loop is None:
        observation.problems.append("the spec names no continuation run loop (spec/lifecycle.yaml `run_loop`)")
        return observation
    with tempfile.TemporaryDirectory(prefix=f"continuation-{boundary}-") as scratch:
        workspace, marker, host = Path(scratch) / "workspace", Path(scratch) / "cleanup-marker", Path(scratch) / "host.json"
        source = write_source(workspace, contract)
        source_header = source.with_name("run.json")
        before = (_fingerprint(source), _fingerprint(source_header))
        host.write_text(json.dumps(HOST), encoding="utf-8")
        ids = ",".join(IDS[name] for name in ("invocationId", "runId", "turnId"))
        command = [sys.executable, str(run_loop)] if run_loop.suffix == ".py" else [str(run_loop)]
        environment = {**os.environ, "RESUME_FAILPOINTS": f"{boundary}=kill"}
        child = _child([*command, str(workspace), SESSION_ID, SOURCE_RUN_ID, str(host), ids, str(marker)], contract, environment=environment)
        try:
            observation.problems += child.killed_at("the executor", boundary)
        finally:
            child.close()
        observation.child_stderr = child.stderr()
        if marker.exists():
            observation.problems.append("the executor's finally cleanup ran: it was not killed hard")
        _observe(observation, workspace, contract)
        if (_fingerprint(source), _fingerprint(source_header)) != before:
            observation.problems.append("the source run's ledger or header changed")
    return observation


def _new_run(workspace: Path, contract: Contract) -> tuple[dict[str, Any] | None, list[Any]]:
    header = RunHeaderStore(workspace).read_or_none(SESSION_ID, IDS["runId"])
    store = RuntimeEventStore(workspace, contract=contract)
    path = store.path(SESSION_ID, IDS["runId"])
    return header, list(store.read(SESSION_ID, IDS["runId"]).events) if path.exists() else []


def _observe(observation: ContinuationObservation, workspace: Path, contract: Contract) -> None:
    boundaries = contract.continuation_boundaries
    assert boundaries is not None
    header, events = _new_run(workspace, contract)
    observation.state = observed_state(header, events, contract.table, boundaries.STATES)
    plan = plan_continuation(workspace, SESSION_ID, SOURCE_RUN_ID, HOST, REPLAN_IDS, contract=contract)
    observation.replan_disposition, observation.replan_reasons = plan.disposition, tuple(plan.rejection_reasons)
    first = recover(workspace, contract=contract)
    observation.recovery_steps = tuple(step for run in first.runs for step in run.steps)
    refused = [f"{run.run_id}: {run.outcome} ({run.message})" for run in first.runs if run.outcome != "recovered"]
    if refused:
        observation.problems.append(f"recovery refused {refused}")
    settled = _new_run(workspace, contract)
    second = recover(workspace, contract=contract)
    if second.runs or _new_run(workspace, contract) != settled:
        observation.problems.append(f"recovering again was not a no-op: {[run.as_json() for run in second.runs]}")
    header, events = settled
    observation.terminal_events = tuple(str(event.status) for event in committed_terminal_events(events, contract.table))
    observation.header_status = None if header is None else header.get("status")
    observation.failure_class = None if header is None else header.get("failureClass")


def expected_from_catalog(boundary: str, contract: Contract | None = None) -> dict[str, Any]:
    """A boundary's expectations, from the generated catalog (the same shape the generated tests hold)."""
    catalog = (contract or active()).continuation_boundaries
    assert catalog is not None
    spec = catalog.BOUNDARIES_BY_ID[boundary]
    state = catalog.STATES_BY_NAME[spec.state]
    return {
        "state": spec.state,
        "header": state.header,
        "events": state.events,
        "replan": {"disposition": spec.replan_disposition, "rejection_reasons": tuple(spec.replan_reasons)},
        "recovered": {"terminal_event": spec.terminal_event, "header": spec.header, "failure_class": spec.failure_class},
    }


def continuation_mismatches(observation: ContinuationObservation, expected: dict[str, Any]) -> list[str]:
    """Every harness problem and every way the case differs from `expected`; empty means verified."""
    problems = list(observation.problems)
    if observation.state != expected["state"]:
        problems.append(f"committed when killed: expected state {expected['state']} (header {expected['header']}, events {expected['events']}), got {observation.state or 'no state of the lifecycle'}")
    replan = (observation.replan_disposition, observation.replan_reasons)
    if replan != (expected["replan"]["disposition"], tuple(expected["replan"]["rejection_reasons"])):
        problems.append(f"planning the source again: expected {expected['replan']['disposition']} {list(expected['replan']['rejection_reasons'])}, got {replan[0]} {list(replan[1])}")
    recovered = expected["recovered"]
    if observation.terminal_events != (recovered["terminal_event"],):
        problems.append(f"after recovery: expected one {recovered['terminal_event']} terminal event, got {list(observation.terminal_events)}")
    if (observation.header_status, observation.failure_class) != (recovered["header"], recovered["failure_class"]):
        problems.append(f"after recovery: expected a {recovered['header']} header (failureClass {recovered['failure_class']}), got {observation.header_status} ({observation.failure_class})")
    return problems
