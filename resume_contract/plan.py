"""The public plan API: `build_resume_plan(events)` over the generated projector table."""

from __future__ import annotations

from collections.abc import Sequence

from resume_contract_generated.projector_table import TABLE

from .events import RuntimeEvent
from .projection import ResumePlan, project


def build_resume_plan(events: Sequence[RuntimeEvent], expected_high_water: int | None = None) -> ResumePlan:
    """Project a committed prefix into its ResumePlan. Pure, deterministic, and it never mutates `events`."""
    return project(events, TABLE, expected_high_water)
