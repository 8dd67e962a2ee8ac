"""The pure projection `committed events -> ToolOperations -> ResumePlan`, of a prefix held in memory.

Driven by a ProjectorTable (`table.py`) through the walk (`walk.py`); `ledger.file_plan` plans a file in
bounded memory with the same walk.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import Any

import msgspec

from .continuation_json import event_row
from .gcpause import gc_paused
from .plan import ResumePlan
from .table import ProjectorTable
from .walk import Trace, Walk
from .walk_actions import flag_rows


def project(
    events: Sequence[Any],
    table: ProjectorTable,
    expected_high_water: int | None = None,
    trace: Trace | None = None,
    rows: Sequence[msgspec.Raw] | None = None,
) -> ResumePlan:
    """Project a committed prefix into its ResumePlan. Pure: reads `events`, never changes them.

    `rows` are the committed rows the events were decoded from, in the same order; the plan hands them back
    verbatim. Without them (events built in Python), each event's canonical encoding is its row.
    `trace`, when given, receives every (state, event kind, name matches) step taken, so a caller can say
    which spec rules decided a plan.
    """
    if rows is None:
        rows = tuple(event_row(event) for event in events)
    elif len(rows) != len(events):
        raise ValueError(f"{len(rows)} rows for {len(events)} events")
    all_rows = tuple(rows)
    walk = Walk(table, trace)
    with gc_paused():
        flag_rows(walk, events)
        walk.feed(events, 0)
        return walk.plan(len(events), expected_high_water, all_rows, lambda skip: _without(all_rows, skip))


def _without(rows: tuple[msgspec.Raw, ...], skip: array) -> tuple[msgspec.Raw, ...]:
    skipped = set(skip.tolist())
    return tuple(row for index, row in enumerate(rows) if index not in skipped)
