"""Kept import path: generated projector tables import their types from here. The home is `core.table`."""

from __future__ import annotations

from .core.table import ProjectorTable, ToolContentRead

__all__ = ["ProjectorTable", "ToolContentRead"]
