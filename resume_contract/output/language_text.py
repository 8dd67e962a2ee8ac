"""A language contract's decision as on-call text: the decision and why, each item the decision reports, what to do
next. Every value quoted from the ledger or the contract goes through `escape`."""

from __future__ import annotations

from typing import Any

from .terminal import escape


def decision_text(path: Any, decision: Any, reasons: dict[str, str]) -> str:
    lines = [f"ledger:        {escape(str(path))} ({decision.high_water} committed rows)"]
    why = f" ({', '.join(decision.reasons)})" if decision.reasons else ""
    lines.append(f"decision:      {escape(decision.decision)}{escape(why)}")
    for reason in decision.reasons:
        lines.append(f"  {escape(reason)}: {escape(reasons.get(reason, ''))}")
    if decision.items:
        lines.append("items:")
        for item in decision.items:
            said = f" ({', '.join(f'{name}: {value}' for name, value in item.report.items())})" if item.report else ""
            lines.append(f"  {escape(item.item)} {escape(repr(item.key))}{escape(said)}: {escape(item.status)} (opened at {escape(item.event_id)})")
    if decision.diagnostics:
        lines.append("diagnostics:")
        for diagnostic in decision.diagnostics:
            where = f"{diagnostic.item} {diagnostic.key!r}, " if diagnostic.item is not None else ""
            at = f"at {diagnostic.event_id}" if diagnostic.event_id is not None else "the prefix"
            lines.append(f"  {escape(diagnostic.code)} ({escape(where)}{escape(at)}): {escape(diagnostic.message)}")
    for item in decision.to_verify:
        said = f" ({', '.join(f'{name}: {value}' for name, value in item.report.items())})" if item.report else ""
        lines.append(f"verify:        {escape(item.item)} {escape(repr(item.key))}{escape(said)}: {escape(item.status)}, opened at {escape(item.event_id)}: "
                     "its effect is not known to have happened or not; find out before anything is replayed")
    lines.append(f"replay:        {len(decision.replay)} of {decision.high_water} rows")
    if decision.withheld:
        shown = ", ".join(escape(repr(event_id)) for event_id in decision.withheld[:10]) + (f" and {len(decision.withheld) - 10} more" if len(decision.withheld) > 10 else "")
        lines.append(f"never replay:  {shown} (the contract withholds these rows from the model: `--json` lists them as withheldEventIds)")
    if decision.proceeds:
        lines.append("next:          the run may be replayed: the rows `--json` lists as replayEventIds, in order")
    else:
        lines.append("next:          do not replay the run as it stands: settle each reason above (the items say where), then plan again")
    return "\n".join(lines) + "\n"
