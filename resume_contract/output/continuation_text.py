"""`continue-plan`'s text: the decision, then each reason with what to do about it, for a person at 3 a.m."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..core.continuation import ContinuationPlan
from ..core.continuation_table import ContinuationTable


def continuation_text(path: Path | str, plan: ContinuationPlan, table: ContinuationTable, events: int | None, plan_command: str) -> str:
    """The decision over the ledger (or run) at `path` (of `events` committed events, when known), as lines a
    person reads; `plan_command` is the command that shows Phase 0's plan of the same events."""
    held = "" if events is None else f" ({events} committed event{'s' if events != 1 else ''})"
    lines = [f"decision:      {plan.disposition}", f"{'ledger:' if events is not None else 'run:':<15}{path}{held}"]
    if plan.disposition != table.proceed:
        lines.append("why, and what to do:")
        for reason in plan.rejection_reasons:
            remedy = table.remedies.get(reason)
            if remedy is None:  # a Phase 0 reason: the replay decision says what it is
                remedy = f"Phase 0 blocks replaying this ledger; `{plan_command}` says why and what to do."
            lines.append(f"  - {reason}: {remedy}")
    if plan.diagnostics:
        lines.append("diagnostics:")
        for diagnostic in plan.diagnostics:
            where = f" at {diagnostic.event_id}" if diagnostic.event_id is not None else ""
            detail = f" {json.dumps(diagnostic.detail, ensure_ascii=False)}" if diagnostic.detail else ""
            lines.append(f"  - {diagnostic.code}{where}: {diagnostic.message}{detail}")
    if plan.continuation is not None:
        lines.append("continue as:")
        lines += [f"  {name}: {_shown(value)}" for name, value in plan.continuation.items()]
    return "\n".join(lines) + "\n"


def _shown(value: Any) -> str:
    if isinstance(value, tuple):  # committed rows: how many, not their text
        return f"{len(value)} committed row{'s' if len(value) != 1 else ''}"
    return json.dumps(value, ensure_ascii=False)
