"""resume-contract: decide, after a crash, whether an AI-agent run may be replayed, from a contract kept as YAML.

Everything a runtime needs is importable from here:

    from resume_contract import plan_ledger, plan_run, build_resume_plan, plan_json, RuntimeEventStore

    plan = plan_ledger("runtime-events.jsonl", expected_high_water=42)
    plan.disposition, plan.rejection_reasons             # 'blocked', ('dangling_tool_state',)

Every error is a `ResumeContractError`. The names are imported when first used, so `import resume_contract`
(which every command does) stays cheap: `check` must not pay for the store or the reader.

The package is folders by concern, each with one direction of dependency (checked by import-linter, see
pyproject.toml): `core` (pure: the projection, its table and plan types, exploration, invariants) <- `contract`
(the generated contract, bound) <- `ledger` (files: the reader, the store, repair, planning a file) <- `crash`,
`proof`, `conformance` <- `cli`; `output` and `system` serve them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .contract import (
        Contract,
        build_continuation_plan,
        build_resume_plan,
        decode_event,
        encode_event,
        event_from_wire,
    )
    from .core.continuation import ContinuationPlan
    from .core.plan import Diagnostic, ResumePlan, ToolOperation
    from .core.plan_json import plan_json, plan_json_pieces
    from .core.summary import PlanSummary
    from .errors import (
        ContinuationRejected,
        DuplicateEventId,
        EscapesWorkspace,
        EventRefused,
        FactsRefused,
        InvalidLedgerId,
        LedgerChanged,
        LedgerCorruption,
        LedgerInUse,
        LedgerLocked,
        LedgerMissing,
        NoContinuationDecision,
        NotALedger,
        ResumeContractError,
        RunHeaderUnreadable,
        StoreBusy,
        StoreDamaged,
        StoreError,
        StoreUnreadable,
        TornTail,
        UnsupportedPlatform,
    )
    from .ledger.continuation_exec import ContinuationExecution, prepare_continuation
    from .ledger.continuation_run import plan_continuation, plan_latest_continuation
    from .ledger.file_plan import plan_ledger
    from .ledger.reader import CommittedLedger
    from .ledger.recovery import recover
    from .ledger.repair import RepairResult, repair_ledger
    from .ledger.run_headers import RunHeaderStore
    from .ledger.store import RuntimeEventStore, read_ledger
    from .ledger.workspace import plan_run, read_run

# Public name -> the module that defines it.
_EXPORTS = {
    "plan_ledger": "ledger.file_plan",
    "plan_run": "ledger.workspace",
    "read_run": "ledger.workspace",
    "read_ledger": "ledger.store",
    "RuntimeEventStore": "ledger.store",
    "repair_ledger": "ledger.repair",
    "RepairResult": "ledger.repair",
    "CommittedLedger": "ledger.reader",
    "build_resume_plan": "contract",
    "build_continuation_plan": "contract",
    "plan_continuation": "ledger.continuation_run",
    "plan_latest_continuation": "ledger.continuation_run",
    "prepare_continuation": "ledger.continuation_exec",
    "ContinuationExecution": "ledger.continuation_exec",
    "recover": "ledger.recovery",
    "RunHeaderStore": "ledger.run_headers",
    "ContinuationRejected": "errors",
    "RunHeaderUnreadable": "errors",
    "ContinuationPlan": "core.continuation",
    "FactsRefused": "errors",
    "NoContinuationDecision": "errors",
    "event_from_wire": "contract",
    "decode_event": "contract",
    "encode_event": "contract",
    "Contract": "contract",
    "plan_json": "core.plan_json",
    "plan_json_pieces": "core.plan_json",
    "ResumePlan": "core.plan",
    "ToolOperation": "core.plan",
    "Diagnostic": "core.plan",
    "PlanSummary": "core.summary",
    "ResumeContractError": "errors",
    "LedgerCorruption": "errors",
    "LedgerChanged": "errors",
    "StoreError": "errors",
    "StoreUnreadable": "errors",
    "StoreDamaged": "errors",
    "StoreBusy": "errors",
    "InvalidLedgerId": "errors",
    "LedgerLocked": "errors",
    "LedgerInUse": "errors",
    "TornTail": "errors",
    "DuplicateEventId": "errors",
    "EventRefused": "errors",
    "LedgerMissing": "errors",
    "NotALedger": "errors",
    "EscapesWorkspace": "errors",
    "UnsupportedPlatform": "errors",
}

__all__ = [
    "CommittedLedger",
    "ContinuationExecution",
    "ContinuationPlan",
    "ContinuationRejected",
    "Contract",
    "Diagnostic",
    "DuplicateEventId",
    "EscapesWorkspace",
    "EventRefused",
    "FactsRefused",
    "InvalidLedgerId",
    "LedgerChanged",
    "LedgerCorruption",
    "LedgerInUse",
    "LedgerLocked",
    "LedgerMissing",
    "NoContinuationDecision",
    "NotALedger",
    "PlanSummary",
    "RepairResult",
    "ResumeContractError",
    "ResumePlan",
    "RunHeaderStore",
    "RunHeaderUnreadable",
    "RuntimeEventStore",
    "StoreBusy",
    "StoreDamaged",
    "StoreError",
    "StoreUnreadable",
    "ToolOperation",
    "TornTail",
    "UnsupportedPlatform",
    "__version__",
    "build_continuation_plan",
    "build_resume_plan",
    "decode_event",
    "encode_event",
    "event_from_wire",
    "plan_continuation",
    "plan_json",
    "plan_json_pieces",
    "plan_latest_continuation",
    "plan_ledger",
    "plan_run",
    "prepare_continuation",
    "read_ledger",
    "read_run",
    "recover",
    "repair_ledger",
]


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from ._version import __version__

        return __version__
    if name in _EXPORTS:
        return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module 'resume_contract' has no attribute {name!r}")
