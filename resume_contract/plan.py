"""The public plan API: `build_resume_plan(events)` over the generated projector table."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
from resume_contract_generated.projector_table import TABLE

from .events import RuntimeEvent
from .projection import ResumePlan, project
from .wire import encode_json, python_json


def build_resume_plan(
    events: Sequence[RuntimeEvent], expected_high_water: int | None = None, *, rows: Sequence[msgspec.Raw] | None = None
) -> ResumePlan:
    """Project a committed prefix into its ResumePlan. Pure, deterministic, and it never mutates `events`.

    `rows` are the committed rows the events were read from (a `CommittedLedger` has both): the plan's
    `runtime_events` and `replay_runtime_events` hand them back exactly as written.
    """
    return project(events, TABLE, expected_high_water, rows=rows)


def plan_json(plan: ResumePlan) -> bytes:
    """The plan as JSON, rows copied verbatim (camelCase keys, as the reference prints a ResumePlan)."""
    try:
        return msgspec.json.encode(plan)
    except UnicodeEncodeError:
        # A string the plan repeats from the ledger (an id, a tool name) holds a lone surrogate, which UTF-8
        # cannot carry: write it as an escape, as the row itself does (rows are then re-encoded, JSON-equal).
        return encode_json(msgspec.to_builtins(plan, enc_hook=python_json))
