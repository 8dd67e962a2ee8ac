"""A second implementation of Phase 1's continuation decision, written by hand from the shared document
(`../shared/contract/phase1-safe-boundary-contract.md`, "Stage B"), as a conformance adapter:
`conform --decision continuation -- python this.py`.

It shares nothing with the spec-driven interpreter (`resume_contract/core/continuation.py`) but the Phase 0
plan, which it asks `resume-contract plan --json` for, as any implementation built on Phase 0 would. Its
checks, their order, reasons and details are this file's own reading of the document: where the two agree on
every vector, the spec says what the document says.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

CORRUPT = 3
IDENTITY = ("sessionId", "invocationId", "runId", "turnId")


def _normalised(cwd: str) -> str:
    cwd = cwd.replace("\\", "/").rstrip("/")
    return cwd.lower() if re.match(r"^[A-Za-z]:/", cwd) else cwd


def _model_visible(event: dict) -> bool:
    content = event.get("content") or {}
    kind = content.get("kind")
    return (kind == "text" and bool(content.get("text"))) or kind in ("thinking", "function_call", "function_response")


def decide(events: list[dict], facts: dict, phase0: dict) -> dict:
    reasons = list(phase0["rejectionReasons"])
    diagnostics = [{key: d[key] for key in ("code", "eventId", "detail") if d.get(key) is not None} for d in phase0["diagnostics"]]
    raised: list[str] = []

    def add(code: str, event_id: str | None = None, detail: dict | None = None) -> None:
        diagnostics.append({"code": code, **({"eventId": event_id} if event_id else {}), **({"detail": detail} if detail is not None else {})})
        raised.append(code)  # every Phase 1 diagnostic of the document parks, with a reason of its own name
        if code not in reasons:
            reasons.append(code)

    _pending_permissions(events, add)
    identity_mismatch = _ledger_shape(events, facts, add)
    _host_facts(facts, phase0, add)
    if events and not identity_mismatch:  # 10
        visible = [event for event in phase0["replayRuntimeEvents"] if _model_visible(event)]
        last = visible[-1] if visible else None
        if last is None or last.get("role") not in ("user", "tool"):
            add("provider_resume_boundary_unsupported", last["id"] if last else None, {"lastRole": last.get("role")} if last else None)
    if phase0["disposition"] != "safe_replay" or raised or not events:
        return {"disposition": "park", "rejectionReasons": reasons, "diagnostics": diagnostics}
    first, fresh, checkpoint = events[0], facts["continuationIdentity"], facts.get("workspaceCheckpoint")
    snapshot = {
        "workspaceIdentity": facts["currentWorkspaceIdentity"],
        "backgroundOperationsSettled": True,
        "availableToolNames": sorted(set(facts["availableToolNames"])),
    }
    if checkpoint is not None:
        snapshot["workspaceCheckpoint"] = {"ref": checkpoint.get("ref"), "runtimeEventHighWater": checkpoint["runtimeEventHighWater"]}
    return {
        "disposition": "continue",
        "rejectionReasons": [],
        "diagnostics": [],
        "continuation": {
            "sessionId": first["sessionId"],
            "invocationId": fresh["invocationId"],
            "runId": fresh["runId"],
            "turnId": fresh["turnId"],
            "sourceInvocationId": first["invocationId"],
            "sourceRunId": first["runId"],
            "sourceTurnId": first["turnId"],
            "sourceRuntimeEventHighWater": phase0["sourceRuntimeEventHighWater"],
            "runtimeContext": phase0["replayRuntimeEvents"],
            "safetySnapshot": snapshot,
        },
    }


def _pending_permissions(events: list[dict], add) -> None:  # 1
    committed = [event for event in events if event.get("partial") is False]
    for index, event in enumerate(committed):
        request = (event.get("actions") or {}).get("permissionRequest")
        if isinstance(request, dict) and "requestId" in request:
            later = committed[index + 1:]
            if not any(((e.get("actions") or {}).get("permissionDecision") or {}).get("requestId") == request["requestId"] for e in later):
                add("pending_permission", event["id"], {"requestId": request["requestId"]})


def _ledger_shape(events: list[dict], facts: dict, add) -> bool:  # 2; True when an identity differs
    if not events:
        add("runtime_ledger_empty")
        return False
    first = events[0]
    other = next((event for event in events if any(event.get(key) != first.get(key) for key in IDENTITY)), None)
    if other is not None:
        add("runtime_identity_mismatch", other["id"])
    fresh = facts["continuationIdentity"]
    if any(fresh[key] == first.get(key) for key in ("invocationId", "runId", "turnId")):
        add("continuation_identity_reused")
    return other is not None


def _host_facts(facts: dict, phase0: dict, add) -> None:  # 3-9
    if not facts["ledgerReadable"]:
        add("runtime_ledger_unreadable")
    if not facts["terminalRepairSucceeded"]:
        add("terminal_repair_failed")
    if _normalised(facts["sourceCwd"]) != _normalised(facts["currentCwd"]):
        add("workspace_cwd_mismatch", detail={"sourceCwd": facts["sourceCwd"], "currentCwd": facts["currentCwd"]})
    if facts["sourceWorkspaceIdentity"] != facts["currentWorkspaceIdentity"]:
        add("workspace_identity_mismatch", detail={"sourceWorkspaceIdentity": facts["sourceWorkspaceIdentity"], "currentWorkspaceIdentity": facts["currentWorkspaceIdentity"]})
    if not facts["backgroundOperationsSettled"]:
        add("background_operation_pending")
    checkpoint = facts.get("workspaceCheckpoint")
    if checkpoint is not None and checkpoint.get("ref") is None:
        add("workspace_ref_missing")
    elif checkpoint is not None and not checkpoint["restored"]:
        add("checkpoint_restore_failed", detail={"workspaceRef": checkpoint["ref"]})
    missing = sorted({op["toolName"] for op in phase0["operations"]} - set(facts["availableToolNames"]))
    if missing:
        add("tool_catalog_mismatch", detail={"unavailableToolNames": missing})


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("ledger")
    parser.add_argument("--facts", required=True)
    parser.add_argument("--root", help="the project whose Phase 0 contract plans the ledger (default: found from the cwd)")
    args = parser.parse_args()
    facts = json.loads(Path(args.facts).read_text(encoding="utf-8"))
    checkpoint = facts.get("workspaceCheckpoint")
    expected = checkpoint["runtimeEventHighWater"] if checkpoint is not None else facts.get("expectedRuntimeEventHighWater")
    root = ["--root", args.root] if args.root else []
    command = [sys.executable, "-m", "resume_contract", *root, "plan", "--json", args.ledger]
    if expected is not None:
        command += ["--expected-high-water", str(expected)]
    planned = subprocess.run(command, capture_output=True, text=True)
    if planned.returncode not in (0, 1):
        sys.stderr.write(planned.stderr)
        return CORRUPT if planned.returncode == CORRUPT else 2
    phase0 = json.loads(planned.stdout)
    decision = decide(phase0["runtimeEvents"], facts, phase0)
    print(json.dumps(decision))
    return 0 if decision["disposition"] == "continue" else 1


if __name__ == "__main__":
    raise SystemExit(main())
