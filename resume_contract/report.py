"""A ResumePlan as a person reads it in a terminal."""

from __future__ import annotations

from pathlib import Path

from .projection import ResumePlan


def plan_text(path: Path, plan: ResumePlan) -> str:
    lines = [
        f"ledger:        {path}",
        f"high-water:    {plan.source_runtime_event_high_water} committed events",
        f"disposition:   {plan.disposition}",
        f"reasons:       {', '.join(plan.rejection_reasons) or 'none'}",
        f"terminal fact: {plan.terminal_runtime_event_id or 'none'}",
    ]
    lines.append(f"operations:    {len(plan.operations)}")
    for operation in plan.operations:
        response = operation.response_runtime_event_id or "no committed response"
        lines.append(
            f"  {operation.tool_call_id}  {operation.tool_name}  {operation.status}  (call {operation.call_runtime_event_id}, response {response})"
        )
    lines.append(f"diagnostics:   {len(plan.diagnostics)}")
    for diagnostic in plan.diagnostics:
        where = ", ".join(
            f"{label} {value}"
            for label, value in (("event", diagnostic.event_id), ("call", diagnostic.tool_call_id), ("tool", diagnostic.tool_name))
            if value is not None
        )
        lines.append(f"  {diagnostic.code}: {diagnostic.message}" + (f" ({where})" if where else ""))
    lines.append(f"replay:        {len(plan.replay_runtime_events)} of {plan.source_runtime_event_high_water} events")
    if plan.directive:
        lines.append(f"directive:     {plan.directive}")
    return "\n".join(lines) + "\n"
