"""Kept import path: generated contract tests import `build_resume_plan` from here. The homes are
`resume_contract.contract` (the plan with the bound contract) and `core.plan_json`."""

from __future__ import annotations

from .contract import build_resume_plan
from .core.plan_json import plan_json, plan_json_pieces

__all__ = ["build_resume_plan", "plan_json", "plan_json_pieces"]
