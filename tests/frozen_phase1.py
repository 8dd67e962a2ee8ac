"""What the tool tests of the continuation decision share over the frozen Phase 1 spec (tests/frozen_spec/phase1):
the facts every situation starts from, and a row of the frozen wire format."""

from __future__ import annotations

from typing import Any

import msgspec

BASE_FACTS: dict[str, Any] = {
    "ledgerReadable": True,
    "terminalRepairSucceeded": True,
    "sourceCwd": "/w",
    "currentCwd": "/w",
    "sourceWorkspaceIdentity": "ws",
    "currentWorkspaceIdentity": "ws",
    "backgroundOperationsSettled": True,
    "availableToolNames": [],
    "continuationIdentity": {"invocationId": "i2", "runId": "r2", "turnId": "t2"},
}


def row(number: int, **fields: Any) -> bytes:
    """Event `e{number}` of run r: a user's text, or (given fields) a system event with them."""
    wire = {"id": f"e{number}", "sessionId": "s", "invocationId": "i", "runId": "r", "turnId": "t", "ts": number, "partial": False}
    wire |= {"role": "user", "author": "user", "content": {"kind": "text", "text": "go"}} if not fields else {"role": "system", "author": "system"}
    return msgspec.json.encode(wire | fields)
