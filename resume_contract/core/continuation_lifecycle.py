"""The continuation's lifecycle as the disk shows it, and the records a continuation writes. Pure.

Which lifecycle state a run is in is read from its header and its committed events, as spec/lifecycle.yaml
describes each state (`header`: absent, created (not terminal) or terminal; `events`: none, start, run or
terminal): `observed_state`. The records a continuation writes are built here, from the reference's Phase 1
document: the claim (the new run's header), the continuation-start event, a recovered terminal event and the
terminal header that agrees with a terminal event.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec

from .continuation_planner import committed_terminal_events
from .table import ProjectorTable

# A header is terminal with one of these statuses (the planner's `terminal_repair.header_statuses`).
TERMINAL_HEADER_STATUSES = ("completed", "failed", "cancelled")
# A terminal event's status -> the header status that agrees with it (the planner's `terminal_repair.agrees`).
_AGREEING_HEADER = {"completed": "completed", "failed": "failed", "aborted": "cancelled", "cancelled": "cancelled"}
RECOVERED_FAILURE_CLASS = "app_restarted"
SOURCE_REF_FIELDS = ("sourceInvocationId", "sourceRunId", "sourceTurnId", "sourceRuntimeEventHighWater")
# The ids a run header holds and the events written for its run repeat (a string each).
HEADER_IDS = ("sessionId", "invocationId", "runId", "turnId")


def header_kind(header: Mapping[str, Any] | None) -> str:
    """`absent`, `terminal` or `created` (any other status), as the lifecycle's states name a header."""
    if header is None:
        return "absent"
    return "terminal" if header.get("status") in TERMINAL_HEADER_STATUSES else "created"


def is_continuation_start(event: Any) -> bool:
    """The continuation-start event: `actions.stateDelta.continuationStart` is true."""
    actions = event.actions if isinstance(event.actions, dict) else {}
    delta = actions.get("stateDelta")
    if delta is None:
        return False
    value = msgspec.json.decode(bytes(delta)) if isinstance(delta, msgspec.Raw) else delta
    return isinstance(value, dict) and value.get("continuationStart") is True


def events_kind(events: Sequence[Any], projector: ProjectorTable) -> str:
    """`none`, `terminal` (a terminal event is committed), `start` (only the start event) or `run`."""
    if not events:
        return "none"
    if committed_terminal_events(events, projector):
        return "terminal"
    return "start" if len(events) == 1 and is_continuation_start(events[0]) else "run"


def observed_state(header: Mapping[str, Any] | None, events: Sequence[Any], projector: ProjectorTable, states: Iterable[Any]) -> str | None:
    """The lifecycle state (of `states`, each with `name`, `header`, `events`) the run's disk shows, or None."""
    seen = (header_kind(header), events_kind(events, projector))
    return next((state.name for state in states if (state.header, state.events) == seen), None)


def agreeing_header_status(event_status: str | None) -> str:
    """The terminal header status that agrees with a terminal event's status (`failed` for any other)."""
    return _AGREEING_HEADER.get(event_status or "", "failed")


def source_refs(continuation: Mapping[str, Any]) -> dict[str, Any]:
    """The four refs naming the source, from a `continue` plan's payload."""
    return {name: continuation[name] for name in SOURCE_REF_FIELDS}


def claim_header(continuation: Mapping[str, Any], source_header: Mapping[str, Any], created_at: str) -> dict[str, Any]:
    """The new run's first header: the idempotency claim (`status: created`, its parent, its source)."""
    snapshot = continuation.get("safetySnapshot") or {}
    header = {
        "runId": continuation["runId"],
        "sessionId": continuation["sessionId"],
        "invocationId": continuation["invocationId"],
        "turnId": continuation["turnId"],
        "status": "created",
        "cwd": source_header.get("cwd"),
        "parentRunId": continuation["sourceRunId"],
        "parentTurnId": continuation["sourceTurnId"],
        "continuationSource": source_refs(continuation),
        "createdAt": created_at,
    }
    if "workspaceIdentity" in snapshot:
        header["workspaceIdentity"] = snapshot["workspaceIdentity"]
    return header


def names_another_run(header: Mapping[str, Any], session_id: str, run_id: str) -> bool:
    """Whether the header names another session or run than the directory holding it (an id it lacks names none)."""
    return any(name in header and header[name] != value for name, value in (("sessionId", session_id), ("runId", run_id)))


def _identity(header: Mapping[str, Any]) -> dict[str, Any]:
    return {name: header[name] for name in HEADER_IDS}


def start_event(header: Mapping[str, Any], ts: int) -> dict[str, Any]:
    """The continuation-start event (wire form): the new run's first, durable before the provider is called."""
    return {
        "id": f"{header['runId']}-continuation-start",
        **_identity(header),
        "ts": ts,
        "partial": False,
        "role": "system",
        "author": "system",
        "actions": {"stateDelta": {"continuationStart": True}},
        "refs": dict(header["continuationSource"]),
    }


def recovered_terminal_event(header: Mapping[str, Any], ts: int) -> dict[str, Any]:
    """The terminal event startup recovery commits for an interrupted run that has none (wire form)."""
    return {
        "id": f"{header['runId']}-recovered-terminal",
        **_identity(header),
        "ts": ts,
        "partial": False,
        "role": "system",
        "author": "system",
        "status": "failed",
        "actions": {"endInvocation": True, "stateDelta": {"failureClass": RECOVERED_FAILURE_CLASS}},
    }


def terminal_header(header: Mapping[str, Any], terminal_event: Any, ended_at: str) -> dict[str, Any]:
    """`header` made terminal, agreeing with its run's terminal event; a failed one carries the failure class the
    terminal event's `stateDelta` names (a recovered run's: app_restarted)."""
    status = agreeing_header_status(terminal_event.status if isinstance(terminal_event.status, str) else None)
    made = {key: value for key, value in header.items() if key != "failureClass"}
    made.update(status=status, endedAt=ended_at)
    if status == "failed":
        actions = terminal_event.actions if isinstance(terminal_event.actions, dict) else {}
        delta = actions.get("stateDelta")
        value = msgspec.json.decode(bytes(delta)) if isinstance(delta, msgspec.Raw) else delta
        made["failureClass"] = value.get("failureClass", RECOVERED_FAILURE_CLASS) if isinstance(value, dict) else RECOVERED_FAILURE_CLASS
    return made
