"""Kept import path: generated catalogs and contract tests import `PlanSummary` from here. The home is `core.summary`."""

from __future__ import annotations

from .core.summary import PlanSummary

__all__ = ["PlanSummary"]
