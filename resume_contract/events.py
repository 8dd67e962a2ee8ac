"""The RuntimeEvent wire model: one JSON object per ledger row, camelCase on disk, snake_case in Python.

msgspec decodes straight into typed, frozen structs and rejects a missing field, a wrong type, an unknown
field or an unknown content kind in the same pass, which is both the strictness the contract needs and
several times faster than `json.loads` followed by hand validation.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

Author = Literal["user", "agent", "tool", "system"]
Role = Literal["user", "model", "tool", "system"]
Status = Literal["streaming", "completed", "failed", "aborted", "cancelled"]

TERMINAL_STATUSES: frozenset[str] = frozenset({"completed", "failed", "aborted", "cancelled"})


class _Content(msgspec.Struct, frozen=True, gc=False, tag_field="kind", forbid_unknown_fields=True, rename="camel"):
    pass


class TextContent(_Content, tag="text"):
    text: str


class ThinkingContent(_Content, tag="thinking"):
    text: str
    signature: str | None = None


class FunctionCallContent(_Content, tag="function_call"):
    id: str
    name: str
    args: Any


class FunctionResponseContent(_Content, tag="function_response", omit_defaults=True):
    id: str
    name: str
    result: Any
    is_error: bool | None = None


class ErrorContent(
    msgspec.Struct, frozen=True, gc=False, tag_field="kind", tag="error", forbid_unknown_fields=False, rename="camel"
):
    # The runtime attaches provider-specific detail to errors; only the message is part of the contract.
    message: str


Content = TextContent | ThinkingContent | FunctionCallContent | FunctionResponseContent | ErrorContent


class RuntimeEvent(msgspec.Struct, frozen=True, gc=False, forbid_unknown_fields=True, rename="camel", omit_defaults=True):
    """One committed ledger row."""

    id: str
    ts: int | float | str
    partial: bool
    author: Author
    role: Role
    session_id: str
    invocation_id: str
    run_id: str
    turn_id: str
    status: Status | None = None
    content: Content | None = None
    actions: dict[str, Any] | None = None
    refs: Any = None

    @property
    def is_terminal(self) -> bool:
        """Completed, failed, aborted or cancelled, or marked `actions.endInvocation: true`."""
        if self.status in TERMINAL_STATUSES:
            return True
        return self.actions is not None and self.actions.get("endInvocation") is True


_ENCODER = msgspec.json.Encoder()


def event_from_wire(wire: Any) -> RuntimeEvent:
    """Validate a decoded JSON value (e.g. from the spec) as a RuntimeEvent; raises msgspec.ValidationError."""
    return msgspec.convert(wire, RuntimeEvent, strict=True)


def encode_event(event: RuntimeEvent) -> bytes:
    """The event's canonical JSON row, without the trailing newline."""
    return _ENCODER.encode(event)


def event_to_wire(event: RuntimeEvent) -> dict[str, Any]:
    """The event as plain JSON values with camelCase keys."""
    return msgspec.to_builtins(event)
