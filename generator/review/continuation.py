"""The review of the continuation decision (spec/continuation.yaml): fail closed until it is classified rule by rule.

Added (a run may now be continued), removed (continue-plan refuses every run), and, per top-level part that
changed (its inputs, ledger facts, checks, diagnostics, reasons, payload, situations), one `CONTINUATION_CHANGED`
finding that weakens safety until a waiver bound to it accepts it: nothing about the decision changes silently.
Marks are left out of the comparison, so moving a line is no change.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from ..errors import Mark
from ..spec.continuation_model import ContinuationSpec
from ..spec.model import Spec
from . import rules

Add = Callable[..., None]
_MARKS = ("mark", "expect_mark")
# ContinuationSpec field -> the key of spec/continuation.yaml it is read from.
_KEYS = {
    "proceed": "dispositions",
    "stop": "dispositions",
    "expected_high_water": "phase0",
    "proceeds_on": "phase0",
    "payload_json": "continuation",
}


def continuation_changes(base: Spec, head: Spec, add: Add) -> None:
    """Report, through the collector's `add`, how the continuation decision changed from `base` to `head`."""
    old, new = base.continuation, head.continuation
    if old is None and new is None:
        return
    if old is None:
        add(rules.CONTINUATION_ADDED, "spec/continuation.yaml added: a continuation decision", None, _mark(head, None))
        return
    if new is None:
        add(rules.CONTINUATION_REMOVED, "spec/continuation.yaml removed: no continuation decision", _mark(base, None), None)
        return
    before, after = _content(old), _content(new)
    changed: dict[str, tuple[Any, Any]] = {}
    for name in before:
        if before[name] != after[name]:
            key = _KEYS.get(name, name)
            previous = changed.get(key, ((), ()))
            changed[key] = (previous[0] + (before[name],), previous[1] + (after[name],))
    for key, values in changed.items():
        rule = rules.CONTINUATION_REWORDED if key == "summary" else rules.CONTINUATION_CHANGED
        add(rule, f"continuation: {key} changed", _mark(base, key), _mark(head, key), values=values)


def _content(spec: ContinuationSpec) -> dict[str, Any]:
    return {field.name: _without_marks(getattr(spec, field.name)) for field in dataclasses.fields(spec)}


def _without_marks(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: _without_marks(getattr(value, field.name)) for field in dataclasses.fields(value) if field.name not in _MARKS}
    if isinstance(value, tuple):
        return tuple(_without_marks(item) for item in value)
    return value


def _mark(spec: Spec, key: str | None) -> Mark:
    return spec.location("continuation", key) if key is not None else Mark("spec/continuation.yaml", 1, 1)
