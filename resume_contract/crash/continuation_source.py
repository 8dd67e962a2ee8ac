"""The source run every continuation crash case continues: a crashed run that was terminally repaired (its
header `failed`, its last event a recovered terminal event) whose last model-visible event is the tool's, so
that the planner (spec/continuation.yaml) decides `continue`. Written through the real stores."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..contract import Contract, active
from ..ledger.run_headers import RunHeaderStore
from ..ledger.store import RuntimeEventStore

SESSION_ID = "session-1"
SOURCE_RUN_ID = "run-1"
IDENTITY = {"sessionId": SESSION_ID, "invocationId": "invocation-1", "runId": SOURCE_RUN_ID, "turnId": "turn-1"}
HEADER = {**IDENTITY, "status": "failed", "failureClass": "app_restarted", "cwd": "/workspace/repo", "workspaceIdentity": "workspace-1"}
HOST: dict[str, Any] = {
    "currentCwd": "/workspace/repo",
    "sourceWorkspaceIdentity": "workspace-1",
    "currentWorkspaceIdentity": "workspace-1",
    "backgroundOperationsSettled": True,
    "availableToolNames": ["Bash"],
}
IDS = {"invocationId": "invocation-2", "runId": "run-2", "turnId": "turn-2"}
EVENTS: tuple[dict[str, Any], ...] = (
    {"id": "event-1", "role": "user", "author": "user", "content": {"kind": "text", "text": "list the files"}},
    {"id": "event-2", "role": "model", "author": "agent", "content": {"kind": "function_call", "id": "tool-1", "name": "Bash", "args": {"command": "ls"}}},
    {"id": "event-3", "role": "tool", "author": "tool", "content": {"kind": "function_response", "id": "tool-1", "name": "Bash", "result": {"stdout": "a.txt"}}},
    {"id": "event-4", "role": "system", "author": "system", "status": "failed", "actions": {"endInvocation": True, "stateDelta": {"failureClass": "app_restarted"}}},
)


def write_source(workspace: Path, contract: Contract | None = None) -> Path:
    """Write the source run (its ledger, then its header) under `workspace`; return its ledger's path."""
    contract = contract or active()
    with RuntimeEventStore(workspace, contract=contract) as store:
        for position, event in enumerate(EVENTS, 1):
            store.append(contract.model.event_from_wire({**IDENTITY, "ts": 1767225600000 + position, "partial": False, **event}))
        path = store.path(SESSION_ID, SOURCE_RUN_ID)
    RunHeaderStore(workspace).write(SESSION_ID, SOURCE_RUN_ID, HEADER)
    return path
