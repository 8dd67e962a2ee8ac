"""resume-contract's hand-written runtime: the RuntimeEvent model, the pure projection, the store and the CLI.

Every decision (codes, reasons, messages, transitions) comes from the generated package
`resume_contract_generated`; this package only interprets it.

    from resume_contract import build_resume_plan, plan_ledger, RuntimeEventStore, ResumePlan

The names below are imported when first used, so `import resume_contract` (which every command does) stays
cheap: `check` must not pay for the store or the reader.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .corruption import LedgerCorruption
    from .ledger_plan import LedgerChanged, plan_ledger
    from .plan import build_resume_plan, plan_json, plan_json_pieces
    from .plan_summary import PlanSummary
    from .projection import ResumePlan, ToolOperation
    from .store import RuntimeEventStore, read_ledger
    from .workspace import plan_run

# Public name -> the module that defines it.
_EXPORTS = {
    "build_resume_plan": "plan",
    "plan_json": "plan",
    "plan_json_pieces": "plan",
    "plan_ledger": "ledger_plan",
    "LedgerChanged": "ledger_plan",
    "plan_run": "workspace",
    "read_ledger": "store",
    "RuntimeEventStore": "store",
    "ResumePlan": "projection",
    "ToolOperation": "projection",
    "PlanSummary": "plan_summary",
    "LedgerCorruption": "corruption",
}

__all__ = [
    "LedgerChanged",
    "LedgerCorruption",
    "PlanSummary",
    "ResumePlan",
    "RuntimeEventStore",
    "ToolOperation",
    "__version__",
    "build_resume_plan",
    "plan_json",
    "plan_json_pieces",
    "plan_ledger",
    "plan_run",
    "read_ledger",
]


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("resume-contract")
        except PackageNotFoundError:  # run from a checkout that was never installed
            return "0+unknown"
    if name in _EXPORTS:
        return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module 'resume_contract' has no attribute {name!r}")
