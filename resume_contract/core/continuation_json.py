"""What a continuation check written as an expression reads (docs/expressions.md), as JSON values.

The generator compiles such a check into a function of (input, source, events, replay, fact, phase0, raised)
(generator/spec/continuation_expressions.py names and types them); the interpreter makes the values once per
decision, here: every event as its wire JSON, the replay as the events the Phase 0 plan replays, in order, the
ledger facts with an event as its JSON and nothing as null, and the Phase 0 plan's fields.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from .plan import ResumePlan


def event_rows_json(events: Sequence[Any]) -> list[Any]:
    """The events as their rows' JSON, in one pass for the whole prefix. A string holding a lone surrogate (a row
    may escape one, `"\\ud800"`, as JSON allows) cannot be UTF-8: such events are converted without JSON text."""
    if not events:
        return []
    try:
        return msgspec.json.decode(msgspec.json.encode(events))
    except (UnicodeEncodeError, msgspec.DecodeError):
        return msgspec.to_builtins(list(events), enc_hook=_free_json)


def event_row(event: Any) -> msgspec.Raw:
    """An event built in Python as a row (its canonical encoding); one holding a lone surrogate, with it escaped."""
    try:
        return msgspec.Raw(msgspec.json.encode(event))
    except UnicodeEncodeError:
        import json  # (only here: a plan of a small ledger loads no json module, tests/test_import_costs.py)

        return msgspec.Raw(json.dumps(msgspec.to_builtins(event, enc_hook=_free_json), separators=(",", ":")).encode())


def _free_json(value: Any) -> Any:
    """A free-JSON field (msgspec.Raw) as its value; the standard library reads lone surrogate escapes."""
    if isinstance(value, msgspec.Raw):
        import json

        return json.loads(bytes(value))
    raise TypeError(f"not an event's field: {type(value).__name__}")


def expression_json(events: Sequence[Any], phase0: ResumePlan) -> tuple[Any, Any, Any, Any]:
    """(source, events, replay, phase0) as JSON."""
    encoded = event_rows_json(events)
    replayed = set(phase0.replay_event_ids)
    plan = {
        "disposition": phase0.disposition,
        "rejectionReasons": list(phase0.rejection_reasons),
        "requiresVerification": phase0.requires_verification,
        "sourceRuntimeEventHighWater": phase0.source_runtime_event_high_water,
    }
    replay = [event for event in encoded if event.get("id") in replayed]
    return (encoded[0] if encoded else None, encoded, replay, plan)


def event_json(event: Any) -> Any:
    """An event as its row's JSON (the decoding model writes the wire's names)."""
    return event_rows_json([event])[0]


def fact_json(value: Any, absent: Any) -> Any:
    """A ledger fact as JSON: an event as its row's JSON, `absent` (no value) as null."""
    if value is absent or value is None:
        return None
    if isinstance(value, (list, tuple)):
        return [fact_json(item, absent) for item in value]
    if isinstance(value, dict):
        return {key: fact_json(item, absent) for key, item in value.items()}
    return value if isinstance(value, (str, int, float, bool)) else event_json(value)
