"""A ResumePlan as a person reads it in a terminal, at 3 a.m.: the decision, why, what to check, what to do next.

A plan over a long run can hold hundreds of thousands of operations; the text lists the ones that are not
settled and the diagnostics, each up to LISTED, and counts the rest (`--json` has everything). What it says
comes from the plan and the contract's own words (each reason's meaning, the directive): no reason, diagnostic
or tool name is known here.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping
from typing import Any

import msgspec

from ..core.plan import ACTUAL_HIGH_WATER as _ACTUAL
from ..core.plan import EXPECTED_HIGH_WATER as _EXPECTED
from ..core.plan import Diagnostic, ResumePlan, ToolOperation
from .terminal import escape

LISTED = 20
ARGUMENTS_SHOWN = 100  # characters of a call's arguments, as JSON


def plan_text(
    path: str | os.PathLike[str], plan: ResumePlan, reason_meanings: Mapping[str, str] | None = None, never_ran: frozenset[str] = frozenset()
) -> str:
    """The plan; `reason_meanings` (the contract's `REASON_MEANINGS`) says what each rejection reason means;
    `never_ran`, the statuses of an unanswered call the contract says provably never started (nothing to verify)."""
    meanings = reason_meanings or {}
    lines = [
        f"ledger:        {path}",
        f"high-water:    {plan.source_runtime_event_high_water} committed events",
        f"disposition:   {plan.disposition}",
        f"reasons:       {', '.join(plan.rejection_reasons) or 'none'}",
    ]
    lines += [f"  {reason}: {meanings[reason]}" for reason in plan.rejection_reasons if reason in meanings]
    lines.append(f"terminal fact: {plan.terminal_runtime_event_id or 'none'}")
    counts = Counter(operation.status for operation in plan.operations)
    summary = ", ".join(f"{count} {status}" for status, count in sorted(counts.items()))
    lines.append(f"operations:    {len(plan.operations)}" + (f" ({summary})" if summary else ""))
    unanswered = [operation for operation in plan.operations if operation.response_runtime_event_id is None]
    unsettled = [operation for operation in unanswered if operation.status not in never_ran]  # listed under "to verify"
    unstarted = [operation for operation in unanswered if operation.status in never_ran]
    lines.append(f"diagnostics:   {len(plan.diagnostics)}")
    for diagnostic in plan.diagnostics[:LISTED]:
        lines.append(f"  {diagnostic.code}: {diagnostic.message}" + _where(diagnostic))
    if len(plan.diagnostics) > LISTED:
        lines.append(f"  ... and {len(plan.diagnostics) - LISTED} more (--json lists them all)")
    lines.append(f"replay:        {len(plan.replay_runtime_events)} of {plan.source_runtime_event_high_water} events")
    if plan.directive:
        lines.append(f"directive:     {plan.directive}")
    if plan.disposition != "safe_replay":
        lines += _to_verify(unsettled)
        lines += _never_ran(unstarted)
        lines += _next_step(plan, unsettled, unstarted)
    return "".join(escape(line) + "\n" for line in lines)


def _where(diagnostic: Diagnostic) -> str:
    places = [
        f"{label} {value}"
        for label, value in (
            ("event", diagnostic.event_id),
            ("call", diagnostic.tool_call_id),
            ("tool", diagnostic.tool_name),
        )
        if value is not None
    ]
    # The detail in words: an expected and an actual high-water read as "expected 5, actual 4".
    places += [f"{_words(key)} {_short(value)}" for key, value in (diagnostic.detail or {}).items()]
    return f" ({', '.join(places)})" if places else ""


def _words(key: str) -> str:
    """`expectedRuntimeEventHighWater` -> `expected runtime event high water`."""
    return "".join(f" {character.lower()}" if character.isupper() else character for character in key)


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else msgspec.json.encode(value).decode()
    return text if len(text) <= ARGUMENTS_SHOWN else text[: ARGUMENTS_SHOWN - 3] + "..."


def _to_verify(unsettled: list[ToolOperation]) -> list[str]:
    """Each call whose effects may or may not have happened, as a person checks it: the tool, the call id, what
    it was asked, and the event it was committed in."""
    if not unsettled:
        return []
    return [f"to verify:     {len(unsettled)} tool call(s) whose effects may or may not have happened", *_calls(unsettled)]


def _never_ran(unstarted: list[ToolOperation]) -> list[str]:
    """Each call the contract says provably never started (a status such as not_dispatched)."""
    if not unstarted:
        return []
    statuses = ", ".join(sorted({operation.status for operation in unstarted}))
    return [f"never ran:     {len(unstarted)} tool call(s) committed but provably never started ({statuses})", *_calls(unstarted)]


def _calls(operations: list[ToolOperation]) -> list[str]:
    lines = [
        f"  {operation.tool_name}  call {operation.tool_call_id}  args {_short(operation.args)}  (committed in event {operation.call_runtime_event_id})"
        for operation in operations[:LISTED]
    ]
    if len(operations) > LISTED:
        lines.append(f"  ... and {len(operations) - LISTED} more (--json lists them all)")
    return lines


def _next_step(plan: ResumePlan, unsettled: list[ToolOperation], unstarted: list[ToolOperation]) -> list[str]:
    steps = []
    if unsettled:
        steps.append("check each call under 'to verify' with read-only inspection; do not run it again")
    if unstarted:
        steps.append("the calls under 'never ran' had no effect: nothing to inspect or undo; they have no result either")
    pending = {operation.tool_call_id for operation in unsettled + unstarted}
    for diagnostic in plan.diagnostics:
        detail = diagnostic.detail or {}
        if _EXPECTED in detail:  # the checkpoint and the ledger disagree
            steps.append(
                f"the caller expected {detail[_EXPECTED]} committed events and the ledger holds {detail.get(_ACTUAL)} "
                "(partial rows count): resume from the checkpoint this ledger matches, or find the missing events"
            )
            break
    if any(diagnostic.tool_call_id not in pending and _EXPECTED not in (diagnostic.detail or {}) for diagnostic in plan.diagnostics):
        steps.append("read each diagnostic above: the committed events break the contract's rules")
    steps.append("do not replay this run; finish it by hand or start a new one, and plan again to confirm")
    return [f"next step:     {steps[0]}"] + [f"               {step}" for step in steps[1:]]
