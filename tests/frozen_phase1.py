"""What the tool tests of the continuation decision share over the frozen Phase 1 spec (tests/frozen_spec/phase1):
the facts every situation starts from, a row of the frozen wire format, and a project of the frozen continuation
file edited by a test (under the schema that admits `phase0.after` and `planner.lineage`)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import msgspec

FROZEN = Path(__file__).resolve().parent / "frozen_spec"

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


def edited(*edits: tuple[str, str]) -> str:
    """The frozen continuation file with each (old, new) replaced; each `old` must occur once."""
    text = (FROZEN / "phase1" / "continuation.yaml").read_text(encoding="utf-8")
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


def project(root: Path, text: str) -> Path:
    """`root` made a project: the frozen Phase 0 spec, `text` as its continuation file, under the schema of
    tests/frozen_spec/phase1_order/."""
    shutil.copytree(FROZEN / "spec", root / "spec")
    shutil.copyfile(FROZEN / "phase1_order" / "continuation.schema.json", root / "spec" / "schema" / "continuation.schema.json")
    (root / "spec" / "continuation.yaml").write_text(text, encoding="utf-8")
    return root
