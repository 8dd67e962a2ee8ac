"""Kept import path: generated contract tests import `decode_event` from here. The home is `resume_contract.contract`."""

from __future__ import annotations

from .contract import decode_event, encode_event, event_from_wire

__all__ = ["decode_event", "encode_event", "event_from_wire"]
