"""Kept import path: generated projector tables import their types from here. The home is `core.table`."""

from __future__ import annotations

from .core.table import ActionKind, ProjectorTable, RowCheck, ToolContentRead

__all__ = ["ActionKind", "ProjectorTable", "RowCheck", "ToolContentRead"]
