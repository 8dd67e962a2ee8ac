"""The review of Phase 1's crash contract (spec/lifecycle.yaml), by rule.

The file added (its boundaries are now killed: tightens) or removed (weakens); per boundary, by id: added
(tightens), removed (weakens), moved to follow another transition (weakens: the crash it covered is no longer
killed there), its replanning decision relaxed (may continue, or parks with fewer or other reasons: weakens) or
tightened (parks where it continued, or with more reasons: tightens), what recovery takes or leaves changed
(breaking) or its text reworded (neutral); the lifecycle's states or transitions changed (weakens, until a
reviewer accepts it). A change of the run loop's path is the run loop rule's (neutral).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..errors import Mark
from ..spec.continuation_crash import ContinuationCrashSpec, CrashBoundary
from ..spec.model import Spec
from . import rules

# (rule, message, base mark, head mark, values, class, why)
Finding = tuple[rules.Rule, str, Mark | None, Mark | None, Any, str, str]
_FILE = "spec/lifecycle.yaml"


def _finding(rule: rules.Rule, message: str, base: Mark | None, head: Mark | None, values: Any = None) -> Finding:
    return (rule, message, base, head, values, rule.change_class, f"rule: {rule.meaning}")


def continuation_crash_changes(base: Spec, head: Spec) -> list[Finding]:
    """How the crash contract of a continuation changed from `base` to `head`, each change classed."""
    old, new = base.continuation_crash, head.continuation_crash
    if old is None and new is None:
        return []
    if old is None or new is None:
        first = Mark(_FILE, 1, 1)
        if old is None:
            return [_finding(rules.CONTINUATION_CRASH_ADDED, f"{_FILE} added: {len(new.boundaries) if new else 0} crash boundaries of a continuation", None, first)]
        return [_finding(rules.CONTINUATION_CRASH_REMOVED, f"{_FILE} removed: no crash boundary of a continuation is killed", first, None)]
    findings = _boundaries(old, new)
    if _lifecycle(old) != _lifecycle(new):
        where = (base.location("lifecycle", "lifecycle"), head.location("lifecycle", "lifecycle"))
        findings.append(_finding(rules.CONTINUATION_LIFECYCLE_CHANGED, f"the continuation's lifecycle: {_lifecycle_change(old, new)}", *where))
    if old.run_loop != new.run_loop:
        where = (base.location("lifecycle", "run_loop"), head.location("lifecycle", "run_loop"))
        findings.append(_finding(rules.RUN_LOOP_CHANGED, f"continuation run loop {old.run_loop or '(none)'} -> {new.run_loop or '(none)'}", *where))
    return findings


def _boundaries(old: ContinuationCrashSpec, new: ContinuationCrashSpec) -> list[Finding]:
    before = {b.id: b for b in old.boundaries}
    after = {b.id: b for b in new.boundaries}
    findings = [
        _finding(rules.CONTINUATION_BOUNDARY_REMOVED, f"continuation boundary '{key}' removed", b.mark, None)
        for key, b in before.items()
        if key not in after
    ]
    for key, b in after.items():
        if key not in before:
            detail = f"after {b.after} ({b.state}), replanning {_replan(b)}, recovery {', '.join(b.recovery_takes) or 'nothing'}"
            findings.append(_finding(rules.CONTINUATION_BOUNDARY_ADDED, f"continuation boundary '{key}' added: {detail}", None, b.mark))
    for key in (key for key in before if key in after):
        was, now = before[key], after[key]
        where = (was.mark, now.mark)
        if was.after != now.after:
            findings.append(_finding(rules.CONTINUATION_BOUNDARY_MOVED, f"continuation boundary {key}: after {was.after} ({was.state}) -> after {now.after} ({now.state})", *where))
        if (was.replan_disposition, was.replan_reasons) != (now.replan_disposition, now.replan_reasons):
            rule = rules.CONTINUATION_BOUNDARY_REPLAN_TIGHTENED if _tighter(was, now) else rules.CONTINUATION_BOUNDARY_REPLAN_RELAXED
            findings.append(_finding(rule, f"continuation boundary {key}: replanning {_replan(was)} -> {_replan(now)}", *where))
        if _recovery(was) != _recovery(now):
            findings.append(_finding(rules.CONTINUATION_BOUNDARY_RECOVERY_CHANGED, f"continuation boundary {key}: recovery {_recovery_text(was)} -> {_recovery_text(now)}", *where))
        if was.boundary != now.boundary:
            findings.append(_finding(rules.CONTINUATION_BOUNDARY_REWORDED, f"continuation boundary {key}: '{was.boundary}' -> '{now.boundary}'", *where, values=(was.boundary, now.boundary)))
    return findings


def _tighter(was: CrashBoundary, now: CrashBoundary) -> bool:
    """Parks where it continued, or parks with every reason it had and more."""
    if now.replan_disposition != "park":
        return False
    if was.replan_disposition != "park":
        return True
    return set(was.replan_reasons) < set(now.replan_reasons) and [r for r in now.replan_reasons if r in was.replan_reasons] == list(was.replan_reasons)


def _replan(boundary: CrashBoundary) -> str:
    reasons = f" [{', '.join(boundary.replan_reasons)}]" if boundary.replan_reasons else ""
    return boundary.replan_disposition + reasons


def _recovery(boundary: CrashBoundary) -> tuple[Any, ...]:
    return (boundary.recovery_takes, boundary.terminal_event, boundary.header, boundary.failure_class)


def _recovery_text(boundary: CrashBoundary) -> str:
    failure = f" ({boundary.failure_class})" if boundary.failure_class else ""
    return f"{', '.join(boundary.recovery_takes) or 'nothing'}: terminal event {boundary.terminal_event}, header {boundary.header}{failure}"


def _lifecycle(spec: ContinuationCrashSpec) -> tuple[Any, ...]:
    # Marks and descriptions are left out: moving a line or rewording a state is no change of the lifecycle.
    states = tuple(dataclasses.replace(s, mark=Mark("", 0, 0), description="") for s in spec.states)
    transitions = tuple(dataclasses.replace(t, mark=Mark("", 0, 0), description="") for t in spec.transitions)
    return (spec.initial, states, transitions)


def _lifecycle_change(old: ContinuationCrashSpec, new: ContinuationCrashSpec) -> str:
    parts = []
    for what, before, after in (("state", [s.name for s in old.states], [s.name for s in new.states]), ("transition", [t.name for t in old.transitions], [t.name for t in new.transitions])):
        parts += [f"{what} '{name}' removed" for name in before if name not in after]
        parts += [f"{what} '{name}' added" for name in after if name not in before]
    return "; ".join(parts) or "states or transitions changed (what they leave on disk, who takes them, or where they lead)"
