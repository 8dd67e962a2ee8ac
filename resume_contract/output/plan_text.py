"""A ResumePlan as a person reads it in a terminal: the decision first, then what needs attention.

A plan over a long run can hold hundreds of thousands of operations; the text lists the ones that are not
settled and the diagnostics, each up to LISTED, and counts the rest (`--json` has everything).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from ..core.plan import ResumePlan
from .terminal import escape

LISTED = 20


def plan_text(path: Path, plan: ResumePlan) -> str:
    lines = [
        f"ledger:        {path}",
        f"high-water:    {plan.source_runtime_event_high_water} committed events",
        f"disposition:   {plan.disposition}",
        f"reasons:       {', '.join(plan.rejection_reasons) or 'none'}",
        f"terminal fact: {plan.terminal_runtime_event_id or 'none'}",
    ]
    counts = Counter(operation.status for operation in plan.operations)
    summary = ", ".join(f"{count} {status}" for status, count in sorted(counts.items()))
    lines.append(f"operations:    {len(plan.operations)}" + (f" ({summary})" if summary else ""))
    unsettled = [operation for operation in plan.operations if operation.response_runtime_event_id is None]
    for operation in unsettled[:LISTED]:
        lines.append(
            f"  {operation.tool_call_id}  {operation.tool_name}  {operation.status}  "
            f"(call {operation.call_runtime_event_id}, no committed response)"
        )
    if len(unsettled) > LISTED:
        lines.append(f"  ... and {len(unsettled) - LISTED} more without a committed response (--json lists them all)")
    lines.append(f"diagnostics:   {len(plan.diagnostics)}")
    for diagnostic in plan.diagnostics[:LISTED]:
        where = ", ".join(
            f"{label} {value}"
            for label, value in (("event", diagnostic.event_id), ("call", diagnostic.tool_call_id), ("tool", diagnostic.tool_name))
            if value is not None
        )
        lines.append(f"  {diagnostic.code}: {diagnostic.message}" + (f" ({where})" if where else ""))
    if len(plan.diagnostics) > LISTED:
        lines.append(f"  ... and {len(plan.diagnostics) - LISTED} more (--json lists them all)")
    lines.append(f"replay:        {len(plan.replay_runtime_events)} of {plan.source_runtime_event_high_water} events")
    if plan.directive:
        lines.append(f"directive:     {plan.directive}")
    return "".join(escape(line) + "\n" for line in lines)
