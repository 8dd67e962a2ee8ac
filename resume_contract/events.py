"""The RuntimeEvent model the runtime uses: the decoding model generated from spec/runtime_event.yaml.

The structs live in `resume_contract_generated.runtime_event` (never edited by hand); this module names them
for the rest of the runtime and offers the few conversions it needs, all through one `WireModel`.
"""

from __future__ import annotations

from typing import Any

from resume_contract_generated import runtime_event as _generated
from resume_contract_generated.runtime_event import CONTENT_KINDS, Content, RuntimeEvent

from .wire import WireModel

MODEL = WireModel(_generated)

__all__ = ["CONTENT_KINDS", "MODEL", "Content", "RuntimeEvent", "decode_event", "encode_event", "event_from_wire"]


def event_from_wire(wire: Any) -> RuntimeEvent:
    """A decoded JSON value as a RuntimeEvent; raises `wire.RowRefused` when it is not one."""
    return MODEL.event_from_wire(wire)


def decode_event(row: bytes) -> RuntimeEvent:
    """One ledger row (without its newline) as a RuntimeEvent; raises `wire.RowRefused`."""
    return MODEL.decode_row(row)


def encode_event(event: RuntimeEvent) -> bytes:
    """The event's canonical JSON row, without the trailing newline."""
    return MODEL.encode(event)
