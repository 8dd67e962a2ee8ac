"""Kept import path: generated contract tests import `mismatches` from here. The home is `crash.verdict`."""

from __future__ import annotations

from .crash.verdict import mismatches

__all__ = ["mismatches"]
