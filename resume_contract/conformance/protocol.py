"""The conformance protocol, in one place: what a vectors directory holds, what an adapter is run with and must
answer, the exit codes, and which fields of a plan the contract pins (and so are compared).

`vectors` writes vectors that follow it, `conform` runs an implementation and judges its answers by it, and
`resume-contract plan` answers by it (exit codes). The manifest's own schema is here too.
"""

from __future__ import annotations

from typing import Any

from ..core.plan import ResumePlan

FORMAT = "resume-contract-vectors/1"
MANIFEST = "manifest.json"
SCHEMA = "vectors.schema.json"
LEDGERS_DIR = "ledgers"

# What an adapter exits with (and `resume-contract plan`).
EXIT_SAFE_REPLAY = 0
EXIT_BLOCKED = 1
EXIT_USAGE = 2
EXIT_CORRUPT = 3
CORRUPT_EXIT = EXIT_CORRUPT

# Fields every plan must carry, and fields compared only when the implementation reports them.
REQUIRED = ("disposition", "operations", "sourceRuntimeEventHighWater", "replayEventIds")
OPTIONAL = ("diagnostics", "rejectionReasons", "requiresVerification", "terminalRuntimeEventId")
PINNED = (*REQUIRED, *OPTIONAL)
# Fields a Phase 0 reference implementation does not print: never compared under `--strictness reference`.
NOT_IN_A_PHASE_0_REFERENCE = ("terminalRuntimeEventId",)


def exit_code(disposition: str) -> int:
    """The exit code an adapter answers a plan with."""
    return EXIT_SAFE_REPLAY if disposition == "safe_replay" else EXIT_BLOCKED


def pinned(plan: ResumePlan) -> dict[str, Any]:
    """The decision fields the contract pins, as the vectors state them (camelCase, like a ResumePlan)."""
    return {
        "disposition": plan.disposition,
        "operations": [{"toolCallId": op.tool_call_id, "status": op.status} for op in plan.operations],
        "diagnostics": [diagnostic.code for diagnostic in plan.diagnostics],
        "rejectionReasons": list(plan.rejection_reasons),
        "requiresVerification": plan.requires_verification,
        "sourceRuntimeEventHighWater": plan.source_runtime_event_high_water,
        "replayEventIds": list(plan.replay_event_ids),
        "terminalRuntimeEventId": plan.terminal_runtime_event_id,
    }


def reported(plan: dict[str, Any]) -> dict[str, Any]:
    """The pinned fields of a plan as an implementation printed it."""
    found: dict[str, Any] = {}
    for key in ("disposition", "sourceRuntimeEventHighWater", "diagnostics", "rejectionReasons", "requiresVerification"):
        if key in plan:
            found[key] = plan[key]
    if "diagnostics" in found and isinstance(found["diagnostics"], list):
        found["diagnostics"] = [item.get("code") if isinstance(item, dict) else item for item in found["diagnostics"]]
    if isinstance(plan.get("operations"), list):
        found["operations"] = [{"toolCallId": op.get("toolCallId"), "status": op.get("status")} for op in plan["operations"] if isinstance(op, dict)]
    if isinstance(plan.get("replayRuntimeEvents"), list):
        found["replayEventIds"] = [row.get("id") if isinstance(row, dict) else None for row in plan["replayRuntimeEvents"]]
    if "terminalRuntimeEventId" in plan:
        found["terminalRuntimeEventId"] = plan["terminalRuntimeEventId"]
    return found


PROTOCOL = {
    "command": "COMMAND... LEDGER.jsonl [--expected-high-water N]",
    "plan": "exit 0 (safe_replay) or 1 (blocked), and the ResumePlan as JSON on stdout with the reference's camelCase keys",
    "corruption": f"exit {EXIT_CORRUPT}; stdout is not read",
    "compared": "disposition, operations (toolCallId, status), replayRuntimeEvents (their ids), sourceRuntimeEventHighWater; and, when the plan has them, diagnostics (codes, in order), rejectionReasons, requiresVerification, terminalRuntimeEventId",
}

# Phase 1, the continuation decision (`conform --decision continuation`): the same ledgers and exit codes for a
# corrupt ledger, a facts file beside each, and the decision in the reference's field names.
FACTS_DIR = "facts"
WORKSPACES_DIR = "workspaces"  # the planner form's: one workspace per case, its HOST.json beside it
CONTINUATION_REQUIRED = ("disposition", "rejectionReasons", "diagnostics")
CONTINUATION_PINNED = (*CONTINUATION_REQUIRED, "continuation")
DIAGNOSTIC_PINNED = ("code", "eventId", "detail")  # a diagnostic's message is wording, not contract


def continuation_protocol(proceed: str, stop: str) -> dict[str, str]:
    return {
        "command": "COMMAND... LEDGER.jsonl --facts FACTS.json",
        "plan": f"exit {EXIT_SAFE_REPLAY} ({proceed}) or {EXIT_BLOCKED} ({stop}), and the decision as JSON on stdout: "
        "{disposition, rejectionReasons, diagnostics: [{code, message, eventId?, detail?}], continuation?}",
        "corruption": f"exit {EXIT_CORRUPT}; stdout is not read",
        "compared": "disposition, rejectionReasons, diagnostics (code, eventId, detail; in order), and continuation "
        "(every field; runtimeContext as the ids of its rows) when the decision is to continue",
    }


def planner_protocol(proceed: str, stop: str) -> dict[str, str]:
    return {
        "command": "COMMAND... --workspace WS --session S (--run R | --latest) --host HOST.json --ids INVOCATION,RUN,TURN",
        "plan": f"exit {EXIT_SAFE_REPLAY} ({proceed}) or {EXIT_BLOCKED} ({stop}), and the decision as JSON on stdout, as for the facts form",
        "compared": "as for the facts form",
    }


def continuation_reported(plan: dict[str, Any]) -> dict[str, Any]:
    """The pinned fields of a continuation decision as an implementation printed it (runtimeContext as row ids)."""
    found = {key: plan[key] for key in CONTINUATION_REQUIRED if key in plan}
    if isinstance(found.get("diagnostics"), list):
        found["diagnostics"] = [
            {key: item[key] for key in DIAGNOSTIC_PINNED if item.get(key) is not None} if isinstance(item, dict) else item
            for item in found["diagnostics"]
        ]
    continuation = plan.get("continuation")
    if isinstance(continuation, dict):
        context = continuation.get("runtimeContext")
        if isinstance(context, list):
            continuation = {**continuation, "runtimeContext": [row.get("id") if isinstance(row, dict) else row for row in context]}
        found["continuation"] = continuation
    elif "continuation" in plan:
        found["continuation"] = continuation
    return found


def manifest_schema() -> dict[str, Any]:
    """The vectors' own JSON Schema (for manifest.json)."""
    names = {"type": "array", "items": {"type": "string"}}
    refused = {"type": "object", "additionalProperties": False, "required": ["corruption"], "properties": {"corruption": {"type": "string"}}}  # a ledger refused as corrupt, of this kind
    decision = {
        "type": "object",
        "additionalProperties": False,
        "required": ["disposition", "operations", "diagnostics", "rejectionReasons", "requiresVerification", "sourceRuntimeEventHighWater", "replayEventIds", "terminalRuntimeEventId"],
        "properties": {
            "disposition": {"enum": ["safe_replay", "blocked"]},
            "operations": {
                "type": "array",
                "items": {"type": "object", "additionalProperties": False, "required": ["toolCallId", "status"], "properties": {"toolCallId": {"type": "string"}, "status": {"type": "string"}}},
            },
            "diagnostics": names,
            "rejectionReasons": names,
            "requiresVerification": {"type": "boolean"},
            "sourceRuntimeEventHighWater": {"type": "integer", "minimum": 0},
            "replayEventIds": names,
            "terminalRuntimeEventId": {"type": ["string", "null"]},
        },
    }
    case = {
        "type": "object",
        "additionalProperties": False,
        "required": ["id", "kind", "description", "ledger", "expectedHighWater", "expect"],
        "properties": {
            "id": {"type": "string", "pattern": "^[a-z0-9_.-]+$"},
            "kind": {"enum": ["canonical", "high-water", "table", "anomaly", "corruption", "explored", "letter"]},
            "description": {"type": "string"},
            "ledger": {"type": "string"},
            "expectedHighWater": {"type": ["integer", "null"], "minimum": 0},
            "expect": {
                "oneOf": [
                    decision,
                    refused,
                ]
            },
        },
    }
    continuation_decision = {
        "type": "object",
        "additionalProperties": False,
        "required": ["disposition", "rejectionReasons", "diagnostics", "continuation"],
        "properties": {
            "disposition": {"type": "string"},
            "rejectionReasons": names,
            "diagnostics": {
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["code"],
                    "properties": {"code": {"type": "string"}, "eventId": {"type": "string"}, "detail": {}},
                },
            },
            "continuation": {"type": ["object", "null"]},
        },
    }
    continuation_case = {
        "type": "object",
        "additionalProperties": False,
        "required": ["id", "kind", "description", "ledger", "facts", "expect"],
        "properties": {
            "id": {"type": "string", "pattern": "^[a-z0-9_.-]+$"},
            "kind": {"enum": ["continuation", "continuation-corruption"]},
            "description": {"type": "string"},
            "ledger": {"type": "string"},
            "facts": {"type": "string"},
            "expect": {
                "oneOf": [
                    continuation_decision,
                    refused,
                ]
            },
        },
    }
    planner_case = {
        "type": "object",
        "additionalProperties": False,
        "required": ["id", "kind", "description", "workspace", "session", "run", "host", "ids", "expect"],
        "properties": {
            "id": {"type": "string", "pattern": "^[a-z0-9_.-]+$"},
            "kind": {"const": "continuation-planner"},
            "description": {"type": "string"},
            "workspace": {"type": "string"},
            "session": {"type": "string"},
            "run": {"type": ["string", "null"]},
            "host": {"type": "string"},
            "ids": {"type": "object", "additionalProperties": {"type": "string"}},
            "expect": continuation_decision,
        },
    }
    continuation = {
        "type": "object",
        "additionalProperties": False,
        "required": ["dispositions", "protocol", "cases"],
        "properties": {
            "plannerProtocol": {"type": "object"},
            "plannerCases": {"type": "array", "items": planner_case},
            "dispositions": {
                "type": "object",
                "additionalProperties": False,
                "required": ["proceed", "stop"],
                "properties": {"proceed": {"type": "string"}, "stop": {"type": "string"}},
            },
            "protocol": {"type": "object"},
            "cases": {"type": "array", "items": continuation_case},
        },
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "resume-contract/vectors.schema.json",
        "title": "resume-contract conformance vectors (manifest.json)",
        "type": "object",
        "additionalProperties": False,
        "required": ["format", "specSha256", "depth", "about", "protocol", "referenceDifferences", "cases"],
        "properties": {
            "format": {"const": FORMAT},
            "specSha256": {"type": "string"},
            "depth": {"type": "integer"},
            "about": {"type": "string"},
            "protocol": {"type": "object"},
            "referenceDifferences": {"type": "object", "required": ["anomalies", "corruptionKinds"], "properties": {"anomalies": names, "corruptionKinds": names}},
            "cases": {"type": "array", "items": case},
            "continuation": continuation,
        },
    }
